// One runtime, kept current from its GET, the fleet's "runtime" events
// and the answers of actions on it.
import { useEffect, useState } from "preact/hooks";
import { api, must } from "../../api/client";
import { listen } from "../../events";
import { useAsync } from "../../ui";
import { newer, rtParams, type Runtime } from "./common";

// useRuntime is the runtime id, kept current, put() for an action's answer, and whether it was deleted.
export function useRuntime(org: string, ws: string, id: string) {
  const got = useAsync(
    async () => must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}", { params: { path: rtParams(org, ws, id) } })),
    [org, ws, id],
  );
  const [rt, setRt] = useState<Runtime | undefined>(undefined);
  const [deleted, setDeleted] = useState(false);
  // put takes rt when it is as new as what shows; an event's runtime
  // lacks capability_problems (GET of one runtime only): keep those.
  const put = (next: Runtime) =>
    setRt((cur) => {
      if (cur && cur.id !== next.id) return cur;
      if (!newer(cur, next)) return cur;
      return { ...next, capability_problems: next.capability_problems ?? cur?.capability_problems };
    });
  useEffect(() => {
    setRt(undefined);
    setDeleted(false);
  }, [org, ws, id]);
  useEffect(() => {
    if (got.data && got.data.id === id) put(got.data);
  }, [got.data]);
  useEffect(
    () =>
      listen("runtime", (e) => {
        const ev = e.data;
        if (!ev?.runtime || ev.runtime.id !== id || ev.org !== org || ev.workspace !== ws) return;
        if (ev.kind === "deleted") setDeleted(true);
        else put(ev.runtime);
      }),
    [org, ws, id],
  );
  return { rt: rt?.id === id ? rt : undefined, put, deleted, error: got.error, reload: got.reload };
}
