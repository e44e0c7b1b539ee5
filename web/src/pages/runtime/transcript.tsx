// A session's transcript: its events, one list item each, as a harness
// reported them.
import { Time } from "../../ui";
import type { SessionEvent } from "./stream";

// Transcript is the list of a session's events; live announces new ones.
export function Transcript({ events, live }: { events: SessionEvent[]; live?: boolean }) {
  if (!events.length) return <p class="muted">No events yet.</p>;
  return (
    <ol class="transcript" aria-label="Transcript" aria-live={live ? "polite" : undefined}>
      {events.map((e, i) => (
        <li key={e.seq + ":" + i} class={"ev ev-" + e.type + (e.role ? " ev-" + e.role : "")} data-seq={e.seq}>
          <EventBody e={e} />
        </li>
      ))}
    </ol>
  );
}

// EventBody renders one event by its type.
function EventBody({ e }: { e: SessionEvent }) {
  const head = (label: string) => (
    <div class="ev-head">
      <strong>{label}</strong> <span class="muted small">turn {e.turn} · <Time at={e.time} /></span>
    </div>
  );
  switch (e.type) {
    case "message":
      return (
        <>
          {head(e.role === "user" ? "You" : "Assistant")}
          <div class="ev-text">{e.text}</div>
        </>
      );
    case "tool_call":
      return (
        <>
          {head("Tool call: " + (e.tool?.name ?? ""))}
          <details>
            <summary>Input</summary>
            <pre>{JSON.stringify(e.tool?.input ?? null, null, 2)}</pre>
          </details>
        </>
      );
    case "tool_result":
      return (
        <>
          {head(e.result?.is_error ? "Tool error" : "Tool result")}
          <details>
            <summary>Output</summary>
            <pre>{e.result?.output}</pre>
          </details>
        </>
      );
    case "usage":
      return <>{head(`Usage: ${e.usage?.input_tokens ?? 0} in, ${e.usage?.output_tokens ?? 0} out` + (e.usage?.cost_usd ? `, $${e.usage.cost_usd}` : ""))}</>;
    case "error":
      return (
        <>
          {head("Error")}
          <p class="error">
            {e.error?.message} {e.error?.code && <code>{e.error.code}</code>}
          </p>
        </>
      );
    case "done":
      return <>{head(`Done (exit ${e.done?.exit_code ?? "?"})`)}</>;
    default:
      return <>{head(e.type)}</>;
  }
}
