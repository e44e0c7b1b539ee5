// The processes tab: what the sandbox's agent runs, with a signal to one
// and "kill all". Listing needs a member and a running runtime: the tab
// never wakes a paused one by looking.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../../api/client";
import { useScope } from "../../session";
import { Button, Empty, ErrorNote, Time, useAsync } from "../../ui";
import { rtParams, type Runtime } from "./common";
import { Table } from "../../ui/table";

type Process = Schemas["Process"];

const signals = ["TERM", "INT", "HUP", "KILL", "QUIT", "USR1", "USR2", "STOP", "CONT"];

// ProcessesTab shows the processes when the role and the status allow.
export function ProcessesTab({ rt }: { rt: Runtime }) {
  const { can } = useScope();
  if (!can("member")) return <p class="muted">Seeing a runtime's processes needs the member role.</p>;
  if (rt.status !== "running") return <p class="muted">The runtime is {rt.status}; its processes show while it runs.</p>;
  return <Processes rt={rt} />;
}

// Processes lists the processes, with "kill all".
function Processes({ rt }: { rt: Runtime }) {
  const { org, ws } = useScope();
  const path = rtParams(org, ws, rt.id);
  const list = useAsync(async () => must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/processes", { params: { path } })).items ?? [], [org, ws, rt.id]);
  const [killed, setKilled] = useState<number | null>(null);
  const killAll = async () => {
    const r = must(await api.POST("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/processes/kill-all", { params: { path } }));
    setKilled(r.killed);
    list.reload();
  };
  return (
    <>
      <p class="actions">
        <Button onClick={list.reload}>Refresh processes</Button>
        <Button kind="danger" confirm="Kill every process in the sandbox (but its agent)?" onClick={killAll}>
          Kill all
        </Button>
      </p>
      {killed !== null && <p role="status">Killed {killed} processes.</p>}
      <ErrorNote error={list.error} />
      {list.data && (list.data.length === 0 ? <Empty>No processes.</Empty> : <ProcessTable rt={rt} items={list.data} onChanged={list.reload} />)}
    </>
  );
}

// ProcessTable is one process a row, a running one with its signal control.
function ProcessTable({ rt, items, onChanged }: { rt: Runtime; items: Process[]; onChanged: () => void }) {
  return (
    <Table class="rt-table" label="Processes" cols={["PID", "Command", "Kind", "Started", "State", "Signal"]}>
      {items.map((p) => (
        <tr key={p.id} data-process={p.id}>
          <td class="num">{p.pid}</td>
          <td class="mono">{p.argv.join(" ")}</td>
          <td>{[p.background ? "background" : "foreground", p.pty ? "terminal" : ""].filter(Boolean).join(", ")}</td>
          <td>
            <Time at={p.started_at} />
          </td>
          <td>{p.running ? "running" : p.exit ? `exited ${p.exit.signal ?? p.exit.code}` : "exited"}</td>
          <td>{p.running && <SignalProcess rt={rt} p={p} onSent={onChanged} />}</td>
        </tr>
      ))}
    </Table>
  );
}

// SignalProcess sends a chosen signal (KILL by default) to a process.
function SignalProcess({ rt, p, onSent }: { rt: Runtime; p: Process; onSent: () => void }) {
  const { org, ws } = useScope();
  const [signal, setSignal] = useState("KILL");
  const send = async () => {
    must(
      await api.POST("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/processes/{process_id}/signal", {
        params: { path: { ...rtParams(org, ws, rt.id), process_id: p.id } },
        body: { signal },
      }),
    );
    onSent();
  };
  const id = "sig-" + p.id;
  return (
    <span class="signal">
      <label for={id} class="visually-hidden">
        Signal for process {p.pid}
      </label>
      <select id={id} value={signal} onChange={(e) => setSignal((e.target as HTMLSelectElement).value)}>
        {signals.map((s) => (
          <option value={s}>{s}</option>
        ))}
      </select>
      <Button kind="danger" aria-label={`Send ${signal} to process ${p.pid}`} onClick={send}>
        Send
      </Button>
    </span>
  );
}
