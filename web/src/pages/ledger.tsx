// The org's sandbox ledger: every sandbox it ran, newest first, filtered
// by state, kind and runtime. The filters are in the URL's query, so a
// reload or a shared link shows the same rows.
import { useEffect } from "preact/hooks";
import { api, must, type Schemas } from "../api/client";
import { listen } from "../events";
import { Link, navigate, useLocation } from "../router";
import { useScope } from "../session";
import { Page, Time, useAsync } from "../ui";
import { SelectField, value } from "../ui/form";
import { PagedList, usePaged } from "../ui/paged";
import { Table } from "../ui/table";
import { credits } from "./money/format";

type Sandbox = Schemas["Sandbox"];
const states = ["starting", "running", "paused", "killed"] as const;
const kinds = ["runtime", "task", "world"] as const;

// Ledger is the page: its filters, the table and "More".
export function Ledger() {
  const { org } = useScope();
  const { path, query } = useLocation();
  const state = query.get("state") ?? "";
  const kind = query.get("kind") ?? "";
  const runtime = query.get("runtime") ?? "";
  const setFilter = (name: string, value: string) => {
    const q = new URLSearchParams(location.search);
    if (value) q.set(name, value);
    else q.delete(name);
    const s = q.toString();
    navigate(path + (s ? "?" + s : ""), true);
  };
  const list = usePaged(
    async (cursor) =>
      must(
        await api.GET("/api/v1/org/{org}/sandboxes", {
          params: {
            path: { org },
            query: {
              state: (state || undefined) as Sandbox["state"] | undefined,
              kind: (kind || undefined) as Sandbox["kind"] | undefined,
              runtime_id: runtime || undefined,
              cursor: cursor || undefined,
            },
          },
        }),
      ),
    [org, state, kind, runtime],
  );
  // A runtime's change adds or changes rows: read the first page again,
  // unless the reader has paged on (the rows would jump).
  useEffect(
    () =>
      listen("runtime", () => {
        if (!list.paged) list.reload();
      }),
    [list.paged, list.reload],
  );
  return (
    <Page title="Sandbox ledger">
      <p class="muted">Every sandbox of the org {org}, newest first.</p>
      <Filters state={state} kind={kind} runtime={runtime} onChange={setFilter} />
      <PagedList list={list} label="sandboxes" empty="No sandbox matches.">
        {(rows) => <LedgerTable rows={rows} />}
      </PagedList>
    </Page>
  );
}

// Filters are the ledger's three selects.
function Filters(props: { state: string; kind: string; runtime: string; onChange: (name: string, value: string) => void }) {
  const { org, ws } = useScope();
  const runtimes = useAsync(async () => {
    const l = must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes", { params: { path: { org, workspace: ws }, query: { limit: 500 } } }));
    return l.items ?? [];
  }, [org, ws]);
  const pick = (name: string) => (e: Event) => props.onChange(name, value(e));
  const known = (runtimes.data ?? []).some((r) => r.id === props.runtime);
  return (
    <form class="inline filters" role="search" aria-label="Filter the ledger" onSubmit={(e) => e.preventDefault()}>
      <SelectField label="State" id="ledger-state" value={props.state} onChange={pick("state")}>
        <option value="">any</option>
        {states.map((s) => (
          <option value={s}>{s}</option>
        ))}
      </SelectField>
      <SelectField label="Kind" id="ledger-kind" value={props.kind} onChange={pick("kind")}>
        <option value="">any</option>
        {kinds.map((k) => (
          <option value={k}>{k}</option>
        ))}
      </SelectField>
      <SelectField label="Runtime" id="ledger-runtime" value={props.runtime} onChange={pick("runtime")}>
        <option value="">any</option>
        {props.runtime && !known && <option value={props.runtime}>{props.runtime}</option>}
        {(runtimes.data ?? []).map((r) => (
          <option value={r.id}>{r.project_name || r.id}</option>
        ))}
      </SelectField>
    </form>
  );
}

// LedgerTable is the rows, one per sandbox. The ledger is the org's, so
// a row links to its runtime's page in the runtime's own workspace, when
// the principal may see that workspace.
function LedgerTable({ rows }: { rows: Sandbox[] }) {
  const { org } = useScope();
  const wss = useAsync(async () => {
    const l = must(await api.GET("/api/v1/org/{org}/ws", { params: { path: { org }, query: { limit: 500 } } }));
    return new Map((l.items ?? []).map((w) => [w.id, w.name]));
  }, [org]);
  return (
    <Table label="Sandboxes" cols={["Created", "Project", "Kind", "State", "Provider", "Image", "Resources", "Credits", "Ended"]}>
      {rows.map((sb) => (
        <LedgerRow sb={sb} ws={sb.workspace_id ? wss.data?.get(sb.workspace_id) : undefined} />
      ))}
    </Table>
  );
}

// LedgerRow is one sandbox; its project links to its runtime's page.
function LedgerRow({ sb, ws }: { sb: Sandbox; ws?: string }) {
  const { org } = useScope();
  const why = sb.state === "killed" ? sb.kill_reason : sb.state === "paused" ? sb.pause_reason : "";
  const name = sb.project_name || (sb.runtime_id ? sb.runtime_id.slice(0, 8) : "—");
  return (
    <tr data-sandbox={sb.id} data-state={sb.state}>
      <td>
        <Time at={sb.created_at} />
      </td>
      <th scope="row" class="rowhead">
        {sb.runtime_id && ws ? <Link href={`/o/${encodeURIComponent(org)}/w/${encodeURIComponent(ws)}/runtimes/${sb.runtime_id}/sandboxes`}>{name}</Link> : name}
        <div class="muted mono small" title={sb.id}>
          {sb.id.slice(0, 8)}
        </div>
      </th>
      <td>{sb.kind}</td>
      <td>
        <span class={"status status-" + sb.state}>{sb.state}</span>
        {why && <div class="muted small">{why}</div>}
        {sb.error && <div class="error small">{sb.error}</div>}
      </td>
      <td>{sb.provider}</td>
      <td class="mono">{sb.image}</td>
      <td>
        {sb.resources.cpu_millis / 1000} CPU, {sb.resources.memory_mb} MB
      </td>
      <td title={`billed ${credits(sb.billed_credits)}, running ${credits(sb.running_credits)}`}>{credits(sb.estimated_total_credits)}</td>
      <td>
        <Time at={sb.killed_at} />
      </td>
    </tr>
  );
}
