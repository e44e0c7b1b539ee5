// The fleet's live updates: one server-sent event stream per tab
// (GET /api/v1/events), shared by every page that listens. The server
// asks the same Authorize as the API of every event: a page hears only
// of what its principal may see. Nothing is replayed after a break: pages
// listening for "resync" read their lists again.
import type { Schemas } from "./api/client";

// What each event type carries: the server's three (their data typed by
// the OpenAPI document) and the console's own "resync".
export type EventData = {
  runtime: Schemas["RuntimeEvent"];
  egress: Schemas["EgressEvent"];
  provision: Schemas["Provision"];
  resync: null;
};
export type EventType = keyof EventData;
export type FleetEvent<T extends EventType = EventType> = { type: T; data: EventData[T]; id: string };
type Listener<T extends EventType> = (e: FleetEvent<T>) => void;

const listeners = new Map<EventType, Set<Listener<never>>>();
let source: EventSource | null = null;
let broken = false;
let retry: ReturnType<typeof setTimeout> | null = null;

// The event types the server sends.
const serverTypes = ["runtime", "egress", "provision"] as const;

function tell<T extends EventType>(type: T, data: EventData[T], id: string) {
  const set = listeners.get(type) as Set<Listener<T>> | undefined;
  set?.forEach((fn) => fn({ type, data, id }));
}

function dispatch(type: (typeof serverTypes)[number], e: MessageEvent<string>) {
  let data: EventData[typeof type];
  try {
    data = JSON.parse(e.data);
  } catch {
    return;
  }
  tell(type, data, e.lastEventId);
}

function anyListening(): boolean {
  return [...listeners.values()].some((s) => s.size > 0);
}

function open() {
  if (source) return;
  const s = new EventSource("/api/v1/events", { withCredentials: true });
  source = s;
  s.onerror = () => {
    broken = true;
    // A refused reconnect (a credential revoked, signed out elsewhere)
    // closes the source for good: try again later while pages listen.
    if (s.readyState === EventSource.CLOSED && source === s) {
      source = null;
      if (anyListening() && !retry) {
        retry = setTimeout(() => {
          retry = null;
          if (anyListening()) open();
        }, 5000);
      }
    }
  };
  s.onopen = () => {
    if (broken) {
      broken = false;
      resync();
    }
  };
  for (const type of serverTypes) {
    s.addEventListener(type, (e) => dispatch(type, e as MessageEvent<string>));
  }
}

// listen calls fn for every event of type until the returned function is
// called; the stream opens with the first listener and closes with the
// last.
export function listen<T extends EventType>(type: T, fn: Listener<T>): () => void {
  let set = listeners.get(type) as Set<Listener<T>> | undefined;
  if (!set) {
    set = new Set();
    listeners.set(type, set as Set<Listener<never>>);
  }
  set.add(fn);
  open();
  return () => {
    set.delete(fn);
    if (!anyListening()) close();
  };
}

// resync tells the "resync" listeners to read their lists again (after a
// break in the stream, or whenever what they show may be stale).
export function resync() {
  tell("resync", null, "");
}

// close ends the stream (on sign-out).
export function close() {
  if (retry) clearTimeout(retry);
  retry = null;
  source?.close();
  source = null;
  broken = false;
}

// A page the browser keeps in its back/forward cache must not hold its
// stream open: each such page would keep a connection to the server, and
// a handful of them fill the browser's connections to it, stalling the
// next page. The stream closes as the page is left and opens again, with
// a resync, if the page is shown again from the cache.
window.addEventListener("pagehide", () => close());
window.addEventListener("pageshow", (e) => {
  if (e.persisted && anyListening()) {
    open();
    resync();
  }
});
