// The network tab: a runtime's egress rules, and the egress proxy's
// decisions about its traffic, newest first, new ones as they happen.
import { useEffect, useState } from "preact/hooks";
import { api, must, type Schemas } from "../../api/client";
import { listen } from "../../events";
import { useScope } from "../../session";
import { Button, Empty, ErrorNote, Time, useAsync } from "../../ui";
import { networkMode, rtParams, type Runtime } from "./common";
import { Prop } from "./overview";
import { Table } from "../../ui/table";

type Decision = Schemas["EgressDecision"];


// keepDecisions bounds how many decisions the tab holds.
const keepDecisions = 500;

// ruleList shows the runtime's allow or deny rules.
function ruleList(rt: Runtime, which: "allow" | "deny") {
  const n = rt.config.network as { allow?: string[]; deny?: string[] } | string | undefined;
  const l = typeof n === "object" && n ? (n[which] ?? []) : [];
  if (!l.length) return undefined;
  return (
    <ul class="rules">
      {l.map((r) => (
        <li>
          <code>{r}</code>
        </li>
      ))}
    </ul>
  );
}

// NetworkTab shows the rules and the decisions.
export function NetworkTab({ rt }: { rt: Runtime }) {
  return (
    <>
      <h2>Rules</h2>
      <dl class="props">
        <Prop term="Mode">{networkMode(rt)}</Prop>
        <Prop term="Allow">{ruleList(rt, "allow")}</Prop>
        <Prop term="Deny">{ruleList(rt, "deny")}</Prop>
      </dl>
      <Decisions rt={rt} />
    </>
  );
}

// useDecisions is the runtime's egress decisions: a page of them, then
// each new one the stream tells of, first.
function useDecisions(id: string) {
  const { org, ws } = useScope();
  const [items, setItems] = useState<Decision[]>([]);
  const [next, setNext] = useState("");
  const first = useAsync(
    async () => must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/egress", { params: { path: rtParams(org, ws, id), query: { limit: 100 } } })),
    [org, ws, id],
  );
  // suppressed counts the decisions the stream held back (more than the
  // server sends a second for one runtime); the audit log has them all.
  const [suppressed, setSuppressed] = useState(0);
  useEffect(() => {
    if (!first.data) return;
    setSuppressed(0);
    setItems(first.data.items ?? []);
    setNext(first.data.next_cursor ?? "");
  }, [first.data]);
  useEffect(
    () =>
      listen("egress", (e) => {
        const d = e.data;
        if (!d || d.runtime_id !== id || d.org !== org || d.workspace !== ws) return;
        setItems((l) => (l.some((x) => x.id === d.id) ? l : [d, ...l].slice(0, keepDecisions)));
        if (d.suppressed) setSuppressed((n) => n + (d.suppressed ?? 0));
      }),
    [org, ws, id],
  );
  const more = async () => {
    const l = must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/egress", { params: { path: rtParams(org, ws, id), query: { limit: 100, cursor: next } } }));
    setItems((cur) => [...cur, ...(l.items ?? []).filter((d) => !cur.some((x) => x.id === d.id))]);
    setNext(l.next_cursor ?? "");
  };
  return { items, next, more, suppressed, reload: first.reload, error: first.error, loading: first.loading && !first.data };
}

// Decisions is the live list of egress decisions, with older ones on demand.
function Decisions({ rt }: { rt: Runtime }) {
  const d = useDecisions(rt.id);
  return (
    <>
      <h2>Egress decisions</h2>
      <ErrorNote error={d.error} />
      {d.suppressed > 0 && (
        <p class="note">
          {d.suppressed} more decisions were made than the live list shows; <Button onClick={d.reload}>Read them all again</Button>
        </p>
      )}
      {d.loading ? <p aria-live="polite">Loading…</p> : d.items.length === 0 ? <Empty>No egress decisions yet (they are made in proxy mode).</Empty> : <DecisionTable items={d.items} />}
      {d.next && <Button onClick={d.more}>Older decisions</Button>}
    </>
  );
}

// DecisionTable is one decision a row, newest first.
function DecisionTable({ items }: { items: Decision[] }) {
  return (
    <Table class="rt-table" label="Egress decisions" cols={["At", "Decision", "Method", "Host", "Reason", "Up / down (bytes)", "Duration"]}>
      {items.map((d) => (
        <tr key={d.id} data-egress={d.id} data-allowed={String(d.allowed)}>
          <td>
            <Time at={d.at} />
          </td>
          <td class={d.allowed ? "status-running" : "status-error"}>{d.allowed ? "allowed" : "refused"}{d.brokered ? " · brokered" : ""}</td>
          <td>{d.method}</td>
          <td class="mono">
            {d.host}:{d.port}
          </td>
          <td>{d.reason}</td>
          <td class="num">
            {d.bytes_up} / {d.bytes_down}
          </td>
          <td class="num">{Math.round(d.duration_ms)} ms</td>
        </tr>
      ))}
    </Table>
  );
}
