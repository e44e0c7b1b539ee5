// The workspace's runtimes, kept current: the pages of the list, then
// every "runtime" event of the fleet's stream for this workspace, and
// every runtime an action answers.
import { useEffect, useState } from "preact/hooks";
import { api, must } from "../../api/client";
import { listen } from "../../events";
import { useAsync } from "../../ui";
import { newer, type Runtime, type RuntimeEvent } from "./common";

// pageSize is how many runtimes one request asks for; maxPages bounds the
// first load, after which "More" follows the cursor.
const pageSize = 200;
const maxPages = 5;

type Page = { items: Runtime[]; next: string };

// loadPages reads up to pages pages of runtimes from cursor.
async function loadPages(org: string, ws: string, cursor: string, pages: number): Promise<Page> {
  const items: Runtime[] = [];
  let next = cursor;
  for (let i = 0; i < pages; i++) {
    const query = next ? { limit: pageSize, cursor: next } : { limit: pageSize };
    const l = must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes", { params: { path: { org, workspace: ws }, query } }));
    items.push(...(l.items ?? []));
    next = l.next_cursor ?? "";
    if (!next) break;
  }
  return { items, next };
}

// merge puts rt in list in place of the runtime with its id (when rt is
// as new), or at the end.
export function merge(list: Runtime[], rt: Runtime): Runtime[] {
  const i = list.findIndex((r) => r.id === rt.id);
  if (i < 0) return [...list, rt];
  if (!newer(list[i], rt)) return list;
  const out = list.slice();
  out[i] = rt;
  return out;
}

// applyEvent is list after a runtime event of the workspace.
export function applyEvent(list: Runtime[], ev: RuntimeEvent): Runtime[] {
  if (ev.kind === "deleted") return list.filter((r) => r.id !== ev.runtime.id);
  return merge(list, ev.runtime);
}

// useLiveRuntimes is the workspace's runtimes, kept current, with more() for the next page and put() for an action's answer.
export function useLiveRuntimes(org: string, ws: string) {
  const [list, setList] = useState<Runtime[]>([]);
  const [next, setNext] = useState("");
  const first = useAsync(() => loadPages(org, ws, "", maxPages), [org, ws]);
  // Another workspace: nothing of the last one stays while it loads.
  useEffect(() => {
    setList([]);
    setNext("");
  }, [org, ws]);
  useEffect(() => {
    if (!first.data) return;
    setList(first.data.items);
    setNext(first.data.next);
  }, [first.data]);
  useEffect(
    () =>
      listen("runtime", (e) => {
        const ev = e.data;
        if (!ev?.runtime || ev.org !== org || ev.workspace !== ws) return;
        setList((l) => applyEvent(l, ev));
      }),
    [org, ws],
  );
  const more = async () => {
    const p = await loadPages(org, ws, next, 1);
    setList((l) => p.items.reduce(merge, l));
    setNext(p.next);
  };
  const put = (rt: Runtime) => setList((l) => merge(l, rt));
  return { list, next, more, put, loading: first.loading && !first.data, error: first.error, reload: first.reload };
}
