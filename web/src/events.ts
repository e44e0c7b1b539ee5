// The fleet's live updates: one server-sent event stream per tab
// (GET /api/v1/events), shared by every page that listens. The server
// scopes it with the same Authorize as the API: a page hears only of
// what its principal may see.
export type FleetEvent = { type: string; data: any; id: string };
type Listener = (e: FleetEvent) => void;

const listeners = new Map<string, Set<Listener>>();
let source: EventSource | null = null;
let broken = false;

function dispatch(type: string, e: MessageEvent) {
  let data: unknown = null;
  try {
    data = JSON.parse(e.data);
  } catch {
    return;
  }
  listeners.get(type)?.forEach((fn) => fn({ type, data, id: e.lastEventId }));
}

function open() {
  if (source) return;
  source = new EventSource("/api/v1/events", { withCredentials: true });
  source.onerror = () => {
    broken = true;
  };
  source.onopen = () => {
    // After a break, what happened meanwhile is not replayed: pages
    // listening for "resync" read their lists again.
    if (broken) {
      broken = false;
      listeners.get("resync")?.forEach((fn) => fn({ type: "resync", data: null, id: "" }));
    }
  };
  for (const type of knownTypes) {
    source.addEventListener(type, (e) => dispatch(type, e as MessageEvent));
  }
}

// The event types the server sends; "resync" is the console's own.
const knownTypes = ["runtime", "egress", "provision"];

// listen calls fn for every event of type until the returned function is
// called; the stream opens with the first listener and closes with the
// last.
export function listen(type: string, fn: Listener): () => void {
  let set = listeners.get(type);
  if (!set) listeners.set(type, (set = new Set()));
  set.add(fn);
  open();
  return () => {
    set!.delete(fn);
    if ([...listeners.values()].every((s) => s.size === 0)) close();
  };
}

// close ends the stream (on sign-out).
export function close() {
  source?.close();
  source = null;
}
