// Provisioning operations, live: in flight first, then the recent ones,
// each with its steps and their timings. Loaded, then updated from the
// event stream's provision events, and read again every 5 s.
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, must, type Schemas } from "../../api/client";
import { listen } from "../../events";
import { Empty, ErrorNote, Page, Time, usePolled } from "../../ui";
import { Table } from "../../ui/table";
import { duration } from "./common";

type Provision = Schemas["Provision"];

const stateClass: Record<string, string> = { running: "status-starting", succeeded: "status-running", failed: "status-error" };

// merge puts p in place of the one with its id, or adds it.
function merge(list: Provision[], p: Provision): Provision[] {
  const i = list.findIndex((q) => q.id === p.id);
  if (i < 0) return [p, ...list];
  const next = list.slice();
  next[i] = p;
  return next;
}

// order is in flight first, then newest first.
function order(list: Provision[]): Provision[] {
  return list.slice().sort((a, b) => Number(b.state === "running") - Number(a.state === "running") || b.started_at.localeCompare(a.started_at));
}

export function Provisions() {
  const load = usePolled(async () => must(await api.GET("/api/provisions")).items, 5000);
  const [items, setItems] = useState<Provision[]>([]);
  useEffect(() => {
    if (load.data) setItems(load.data);
  }, [load.data]);
  useEffect(() => listen("provision", (e) => setItems((l) => merge(l, e.data as Provision))), []);
  const shown = useMemo(() => order(items), [items]);
  return (
    <Page title="Provisions">
      <ErrorNote error={load.error} />
      {load.data && shown.length === 0 && <Empty>No provisions yet.</Empty>}
      {shown.length > 0 && (
        <Table label="Provisions" cols={["Started", "State", "Kind", "Provider", "Runtime", "Took", "Steps"]}>
          {shown.map((p) => (
            <ProvisionRow key={p.id} p={p} />
          ))}
        </Table>
      )}
    </Page>
  );
}

function ProvisionRow({ p }: { p: Provision }) {
  return (
    <tr data-provision={p.id} data-state={p.state}>
      <td>
        <Time at={p.started_at} />
      </td>
      <td>
        <span class={"status " + (stateClass[p.state] ?? "")}>{p.state}</span>
        {p.error && <div class="error inline">{p.error}</div>}
      </td>
      <td>
        {p.kind}
        {p.warm && <span class="badge">warm</span>}
      </td>
      <td>{p.provider}</td>
      <td>
        <code class="wrap">{p.runtime_id}</code>
      </td>
      <td>{duration(p.duration_ms)}</td>
      <td>
        <Steps p={p} />
      </td>
    </tr>
  );
}

// Steps lists a provision's steps, each with its time as a bar relative
// to the whole.
function Steps({ p }: { p: Provision }) {
  const total = Math.max(p.duration_ms, 1);
  return (
    <ol class="steps" aria-label={`Steps of provision ${p.id}`}>
      {p.steps.map((s) => (
        <li class={s.error ? "error" : undefined}>
          <span class="step-name">{s.name}</span> <span class="step-time">{duration(s.duration_ms)}</span>
          <span class="step-bar" aria-hidden="true" style={{ width: `${Math.max(2, (100 * s.duration_ms) / total)}%` }} />
          {s.error && <span class="inline"> {s.error}</span>}
        </li>
      ))}
    </ol>
  );
}
