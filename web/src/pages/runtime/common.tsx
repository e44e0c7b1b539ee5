// What the runtimes table and a runtime's page share: the runtime's
// type, its API path, the actions its status allows, and the buttons
// that run them.
import { api, must, type Schemas } from "../../api/client";
import { useScope } from "../../session";
import { Button } from "../../ui";

export type Runtime = Schemas["Runtime"];

// RuntimeEvent is the data of a "runtime" event of the fleet's stream.
export type RuntimeEvent = Schemas["RuntimeEvent"];

// rtParams are the path parameters of a runtime's routes.
export function rtParams(org: string, ws: string, id: string) {
  return { org, workspace: ws, runtime_id: id };
}

// base is the console URL of a workspace.
export function wsURL(org: string, ws: string) {
  return `/o/${encodeURIComponent(org)}/w/${encodeURIComponent(ws)}`;
}

// runtimeURL is the console URL of a runtime's page, at tab.
export function runtimeURL(org: string, ws: string, id: string, tab = "overview") {
  return `${wsURL(org, ws)}/runtimes/${encodeURIComponent(id)}/${tab}`;
}

// nameOf is how a runtime is called: its project's name, or its id.
export function nameOf(rt: Runtime) {
  return rt.project_name || rt.id;
}

// newer reports whether b is as new as a or newer, so that a late event
// never takes back what an action's answer already showed.
export function newer(a: Runtime | undefined, b: Runtime) {
  if (!a) return true;
  return Date.parse(b.updated_at) >= Date.parse(a.updated_at);
}

export type Action = "start" | "pause" | "resume" | "reset" | "keepalive";

// allowed are the actions each status allows, in the order they show.
const allowed: Record<string, Action[]> = {
  idle: ["start"],
  starting: [],
  running: ["pause", "keepalive", "reset"],
  paused: ["resume", "reset"],
  archived: ["resume", "reset"],
  error: ["reset"],
};

// actionsFor are the actions a runtime in status may take.
export function actionsFor(status: string): Action[] {
  return allowed[status] ?? [];
}

// label is a button's text: the action and the runtime's name, the name
// hidden on screen (the row or the page says it) but read by a screen
// reader, so the accessible name is "Start NAME", "Keep NAME alive"….
function label(a: Action, name: string) {
  const n = <span class="visually-hidden"> {name}</span>;
  switch (a) {
    case "start":
      return <>Start{n}</>;
    case "pause":
      return <>Pause{n}</>;
    case "resume":
      return <>Resume{n}</>;
    case "reset":
      return <>Reset{n}</>;
    case "keepalive":
      return (
        <>
          Keep{n} alive
        </>
      );
  }
}

// runAction runs an action on a runtime and answers the runtime after it.
export async function runAction(org: string, ws: string, id: string, a: Action): Promise<Runtime> {
  const params = { path: rtParams(org, ws, id) };
  switch (a) {
    case "start":
      return must(await api.POST("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/start", { params }));
    case "pause":
      return must(await api.POST("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/pause", { params }));
    case "resume":
      return must(await api.POST("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/resume", { params }));
    case "reset":
      return must(await api.POST("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/reset", { params }));
    case "keepalive":
      return must(await api.POST("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/keepalive", { params }));
  }
}

// RuntimeActions are the buttons of the actions rt's status allows, for a
// member or more; onChanged gets the runtime each action answers.
export function RuntimeActions({ rt, onChanged }: { rt: Runtime; onChanged: (rt: Runtime) => void }) {
  const { org, ws, can } = useScope();
  if (!can("member")) return null;
  const name = nameOf(rt);
  return (
    <span class="rt-actions">
      {actionsFor(rt.status).map((a) => (
        <Button
          key={a}
          kind={a === "start" || a === "resume" ? "primary" : a === "reset" ? "danger" : "plain"}
          data-action={a}
          confirm={a === "reset" ? `Reset ${name}? Its sandbox is destroyed; the workspace volume stays.` : undefined}
          onClick={async () => onChanged(await runAction(org, ws, rt.id, a))}
        >
          {label(a, name)}
        </Button>
      ))}
    </span>
  );
}

// Status shows a runtime's status with its colour class.
export function Status({ status }: { status: string }) {
  return <span class={"status status-" + status}>{status}</span>;
}

// networkMode is the mode of a runtime's network policy.
export function networkMode(rt: Runtime): string {
  const n = rt.config.network as unknown;
  if (typeof n === "string") return n;
  if (n && typeof n === "object" && "mode" in n) return String((n as { mode?: string }).mode ?? "none");
  return "none";
}

// credits formats an amount of credits.
export function credits(n: number | undefined) {
  if (n === undefined) return "—";
  return n.toLocaleString(undefined, { maximumFractionDigits: 6 });
}
