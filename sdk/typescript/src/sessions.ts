// A streamed prompt or task: the turn's session events as an async
// iterator, ending with done.

import { PaddockError, streamError } from "./errors.js";
import { ndjson } from "./ndjson.js";
import type { SessionEvent, TurnDone } from "./types.js";

/** The header that names the session a streamed turn runs in. */
export const SESSION_ID_HEADER = "X-Paddock-Session-Id";

/**
 * PromptStream is a streamed turn: iterate it (for await) for its events,
 * in order, the last one done. Error events are events (the harness's
 * failures are part of the transcript); a stream that ends before done
 * throws a PaddockError carrying the last error event, if any.
 */
export class PromptStream implements AsyncIterable<SessionEvent> {
  /** The session the turn runs in: pass it as session_id to continue it. */
  readonly sessionId: string;
  private doneEvent?: TurnDone;
  private lastError?: SessionEvent["error"];
  private iterating = false;

  constructor(
    private readonly resp: Response,
    private readonly abort: AbortController,
  ) {
    this.sessionId = resp.headers.get(SESSION_ID_HEADER) ?? "";
  }

  /** How the turn ended, once its done event was read. */
  get done(): TurnDone | undefined {
    return this.doneEvent;
  }

  /** failed says whether the turn, once done, failed: a non-zero exit or an error event. */
  get failed(): boolean {
    return this.doneEvent !== undefined && (this.doneEvent.exit_code !== 0 || this.lastError !== undefined);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SessionEvent> {
    if (this.iterating) throw new Error("paddock: a prompt stream can be read once");
    this.iterating = true;
    if (!this.resp.body) throw new PaddockError(503, "unavailable", "the event stream has no body");
    try {
      for await (const ev of ndjson<SessionEvent>(this.resp.body)) {
        if (ev.type === "error") this.lastError = ev.error ?? { message: "the turn failed" };
        if (ev.type === "done") this.doneEvent = ev.done ?? { exit_code: 0 };
        yield ev;
        if (this.doneEvent) return;
      }
      throw streamError(this.lastError, "the event stream ended before the turn was done");
    } finally {
      this.abort.abort();
    }
  }

  /** events reads the whole turn and answers its events. */
  async events(): Promise<SessionEvent[]> {
    const all: SessionEvent[] = [];
    for await (const ev of this) all.push(ev);
    return all;
  }

  /** close ends the stream and its request. */
  close(): void {
    this.abort.abort();
  }
}
