// Newline-delimited JSON from a fetch body, one value per line, read
// with a reader (not async iteration of the stream, which not every
// browser has).

import { PaddockError } from "./errors.js";

/** ndjson yields the JSON value of each line of body as it arrives. */
export async function* ndjson<T>(body: ReadableStream<Uint8Array>): AsyncGenerator<T, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) yield parse<T>(line);
      }
    }
    finished = true;
    const rest = (buf + decoder.decode()).trim();
    if (rest) yield parse<T>(rest);
  } finally {
    // A consumer that stops early ends the request's body too.
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** parse decodes one line; a line that is not JSON breaks the stream. */
function parse<T>(line: string): T {
  try {
    return JSON.parse(line) as T;
  } catch {
    throw new PaddockError(503, "unavailable", `a line of the event stream is not JSON: ${line.slice(0, 100)}`);
  }
}
