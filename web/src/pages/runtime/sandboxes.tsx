// The sandboxes tab: the rows of the org's compute ledger that backed
// this runtime, newest first.
import { useEffect, useState } from "preact/hooks";
import { api, must, type Schemas } from "../../api/client";
import { useScope } from "../../session";
import { Button, Empty, ErrorNote, Time, useAsync } from "../../ui";
import { credits, type Runtime } from "./common";
import { Table } from "../../ui/table";

type Sandbox = Schemas["Sandbox"];

// page is one page of the runtime's ledger rows.
async function page(org: string, runtime: string, cursor: string) {
  const query = cursor ? { runtime_id: runtime, limit: 100, cursor } : { runtime_id: runtime, limit: 100 };
  return must(await api.GET("/api/v1/org/{org}/sandboxes", { params: { path: { org }, query } }));
}

// SandboxesTab lists the runtime's ledger rows, reloaded when its status changes.
export function SandboxesTab({ rt }: { rt: Runtime }) {
  const { org } = useScope();
  // The current sandbox's row changes with the runtime's status.
  const first = useAsync(() => page(org, rt.id, ""), [org, rt.id, rt.status, rt.current_sandbox_id]);
  const [items, setItems] = useState<Sandbox[]>([]);
  const [next, setNext] = useState("");
  useEffect(() => {
    if (!first.data) return;
    setItems(first.data.items ?? []);
    setNext(first.data.next_cursor ?? "");
  }, [first.data]);
  const more = async () => {
    const l = await page(org, rt.id, next);
    setItems((cur) => [...cur, ...(l.items ?? [])]);
    setNext(l.next_cursor ?? "");
  };
  return (
    <>
      <ErrorNote error={first.error} />
      {first.data && (items.length === 0 ? <Empty>This runtime has had no sandbox yet.</Empty> : <SandboxTable items={items} current={rt.current_sandbox_id} />)}
      {next && <Button onClick={more}>Older sandboxes</Button>}
    </>
  );
}

// SandboxTable is one ledger row a row.
function SandboxTable({ items, current }: { items: Sandbox[]; current?: string }) {
  return (
    <Table class="rt-table" label="Sandboxes" cols={["Sandbox", "State", "Provider", "Image", "Resources", "Created", "Killed", "Credits"]}>
      {items.map((s) => (
        <tr key={s.id} data-sandbox={s.id} data-state={s.state}>
          <th scope="row" class="mono" title={s.id}>
            {s.id.slice(0, 8)}
            {s.id === current && <span class="muted"> (current)</span>}
          </th>
          <td>
            <span class={"status-" + (s.state === "killed" ? "idle" : s.state)}>{s.state}</span>
            {(s.kill_reason || s.pause_reason) && <div class="muted small">{s.kill_reason || s.pause_reason}</div>}
            {s.error && <div class="error small">{s.error}</div>}
          </td>
          <td>{s.provider}</td>
          <td class="mono">{s.image}</td>
          <td>
            {s.resources.cpu_millis / 1000} cores, {s.resources.memory_mb} MiB
          </td>
          <td>
            <Time at={s.created_at} />
          </td>
          <td>
            <Time at={s.killed_at} />
          </td>
          <td class="num">{credits(s.estimated_total_credits)}</td>
        </tr>
      ))}
    </Table>
  );
}
