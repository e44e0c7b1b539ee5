// A harness turn's events as they happen: POST …/prompt answered as
// NDJSON, read line by line from fetch's body as it arrives.
import { ApiError, csrfHeaders, type Schemas } from "../../api/client";

export type SessionEvent = Schemas["SessionEvent"];
export type PromptRequest = Schemas["PromptRequest"];

// streamPrompt starts a turn and calls onEvent with each event in order;
// onSession learns the session's id first. It resolves when the stream
// ends and throws the API's error when the turn could not start.
export async function streamPrompt(
  path: { org: string; workspace: string; runtime_id: string },
  body: PromptRequest,
  onSession: (id: string) => void,
  onEvent: (e: SessionEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const e = encodeURIComponent;
  const url = `/api/v1/org/${e(path.org)}/ws/${e(path.workspace)}/runtimes/${e(path.runtime_id)}/prompt`;
  const res = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: "application/x-ndjson", ...csrfHeaders() },
    body: JSON.stringify(body),
    signal,
  });
  if (!res.ok || !res.body) {
    const err = (await res.json().catch(() => ({}))) as Partial<Schemas["Error"]>;
    throw new ApiError(res.status, err.code ?? "http_" + res.status, err.message ?? res.statusText);
  }
  const sid = res.headers.get("X-Paddock-Session-Id");
  if (sid) onSession(sid);
  await readLines(res.body, (line) => onEvent(JSON.parse(line) as SessionEvent));
}

// readLines calls fn with each non-empty line of body as it arrives.
export async function readLines(body: ReadableStream<Uint8Array>, fn: (line: string) => void) {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  const flush = () => {
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (line) fn(line);
    }
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    flush();
  }
  buf += dec.decode() + "\n";
  flush();
}
