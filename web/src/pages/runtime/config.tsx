// The config tab: a runtime's settings as a form; saving sends only what
// changed (PATCH) and shows which changes apply now and which at the
// next start. Read-only below admin, the role PATCH needs.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../../api/client";
import { useScope } from "../../session";
import { Button, Field } from "../../ui";
import { networkMode, rtParams, type Runtime } from "./common";

type Patch = Schemas["RuntimePatch"];
type Update = Schemas["RuntimeUpdate"];

// Form holds every field as the text of its input.
type Form = Record<(typeof numbers)[number] | "image" | "rootfs" | "user" | "mode" | "allow" | "deny" | "secrets", string>;

const numbers = ["cpu_millis", "memory_mb", "pids_limit", "idle_timeout_seconds", "max_lifetime_seconds", "archive_after_seconds"] as const;

const numberLabels: Record<(typeof numbers)[number], string> = {
  cpu_millis: "CPU (millicores; 1000 = one core)",
  memory_mb: "Memory (MiB)",
  pids_limit: "Process limit",
  idle_timeout_seconds: "Idle timeout (seconds)",
  max_lifetime_seconds: "Maximum lifetime (seconds; 0 = none)",
  archive_after_seconds: "Archive after paused (seconds; 0 = default)",
};

// lines are the non-empty, trimmed lines of s.
function lines(s: string) {
  return s
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
}

// rules are the runtime's allow or deny rules.
function rules(rt: Runtime, which: "allow" | "deny"): string[] {
  const n = rt.config.network as { allow?: string[]; deny?: string[] } | string | undefined;
  return typeof n === "object" && n ? (n[which] ?? []) : [];
}

// formOf is the form showing rt's config.
function formOf(rt: Runtime): Form {
  const c = rt.config;
  const f = { image: c.image ?? "", rootfs: c.rootfs ?? "readonly", user: c.user ?? "user", mode: networkMode(rt) } as Form;
  for (const k of numbers) f[k] = c[k] === undefined ? "" : String(c[k]);
  f.allow = rules(rt, "allow").join("\n");
  f.deny = rules(rt, "deny").join("\n");
  f.secrets = (c.secrets ?? []).join("\n");
  return f;
}

// patchOf is what changed from a to b, as a RuntimePatch.
export function patchOf(a: Form, b: Form): Patch {
  const p: Patch = {};
  if (a.image !== b.image) p.image = b.image;
  for (const k of numbers) if (a[k] !== b[k] && b[k] !== "") p[k] = Number(b[k]);
  if (a.rootfs !== b.rootfs) p.rootfs = b.rootfs as Patch["rootfs"];
  if (a.user !== b.user) p.user = b.user as Patch["user"];
  if (a.secrets !== b.secrets) p.secrets = lines(b.secrets);
  const net: NonNullable<Patch["network"]> = {};
  if (a.mode !== b.mode) net.mode = b.mode as typeof net.mode;
  if (a.allow !== b.allow) net.allow = lines(b.allow);
  if (a.deny !== b.deny) net.deny = lines(b.deny);
  if (Object.keys(net).length) p.network = net;
  return p;
}

// ConfigTab is the config form and the answer of its last save.
export function ConfigTab({ rt, onChanged }: { rt: Runtime; onChanged: (rt: Runtime) => void }) {
  const { org, ws, can } = useScope();
  const [base, setBase] = useState(() => formOf(rt));
  const [form, setForm] = useState(base);
  const [answer, setAnswer] = useState<Update | null>(null);
  const readOnly = !can("admin");
  const set = (k: keyof Form) => (e: Event) => {
    const v = (e.target as HTMLInputElement).value;
    setForm((f) => ({ ...f, [k]: v }));
  };
  const patch = patchOf(base, form);
  const save = async () => {
    const up = must(await api.PATCH("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}", { params: { path: rtParams(org, ws, rt.id) }, body: patch }));
    onChanged(up.runtime);
    const f = formOf(up.runtime);
    setBase(f);
    setForm(f);
    setAnswer(up);
  };
  return (
    <form class="config-form" onSubmit={(e) => e.preventDefault()}>
      {readOnly && <p class="muted">Read-only: changing a runtime's config needs the admin role.</p>}
      <fieldset disabled={readOnly}>
        <legend>Sandbox</legend>
        <Field id="cfg-image" label="Image" value={form.image} onInput={set("image")} />
        {numbers.map((k) => (
          <Field id={"cfg-" + k} label={numberLabels[k]} type="number" min="0" value={form[k]} onInput={set(k)} />
        ))}
        <Choice id="cfg-rootfs" label="Root filesystem" value={form.rootfs} options={["readonly", "writable"]} onChange={set("rootfs")} />
        <Choice id="cfg-user" label="User" value={form.user} options={["user", "root"]} onChange={set("user")} />
      </fieldset>
      <fieldset disabled={readOnly}>
        <legend>Network</legend>
        <Choice id="cfg-mode" label="Mode" value={form.mode} options={["none", "proxy", "open"]} onChange={set("mode")} />
        <Lines id="cfg-allow" label="Allow rules (one a line; proxy mode)" value={form.allow} onInput={set("allow")} />
        <Lines id="cfg-deny" label="Deny rules (one a line)" value={form.deny} onInput={set("deny")} />
      </fieldset>
      <fieldset disabled={readOnly}>
        <legend>Secrets</legend>
        <Lines id="cfg-secrets" label="Bound secrets, by name or id (one a line)" value={form.secrets} onInput={set("secrets")} />
      </fieldset>
      {!readOnly && (
        <Button kind="primary" type="submit" disabled={Object.keys(patch).length === 0} onClick={save}>
          Save config
        </Button>
      )}
      {answer && <Applied answer={answer} />}
    </form>
  );
}

// Applied says which settings a PATCH changed now and which at the next
// start.
function Applied({ answer }: { answer: Update }) {
  const none = !answer.live.length && !answer.next_start.length;
  return (
    <div class="applied" role="status">
      {none && <p>Nothing changed.</p>}
      {answer.live.length > 0 && (
        <p>
          Applied now: <strong>{answer.live.join(", ")}</strong>
        </p>
      )}
      {answer.next_start.length > 0 && (
        <p>
          Applies at the next start: <strong>{answer.next_start.join(", ")}</strong>
        </p>
      )}
    </div>
  );
}

// Choice is a labelled select.
function Choice(props: { id: string; label: string; value: string; options: string[]; onChange: (e: Event) => void }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={props.onChange}>
        {props.options.map((o) => (
          <option value={o}>{o}</option>
        ))}
      </select>
    </div>
  );
}

// Lines is a labelled textarea of one item a line.
function Lines(props: { id: string; label: string; value: string; onInput: (e: Event) => void }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <textarea id={props.id} rows={3} value={props.value} onInput={props.onInput} />
    </div>
  );
}
