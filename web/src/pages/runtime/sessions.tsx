// The sessions tab: a runtime's harness sessions, the transcript of the
// one chosen, and a prompt box that runs a turn (in the chosen session,
// or a new one) and shows its events as they stream.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, failed, must, type ApiError, type Schemas } from "../../api/client";
import { useScope } from "../../session";
import { Button, Empty, ErrorNote, Field, Time, useAsync } from "../../ui";
import { rtParams, type Runtime } from "./common";
import { streamPrompt, type SessionEvent } from "./stream";
import { Transcript } from "./transcript";
import { Table } from "../../ui/table";

type Session = Schemas["Session"];

// SessionsTab is the sessions, the prompt box and the transcript shown.
export function SessionsTab({ rt }: { rt: Runtime }) {
  const { org, ws, can } = useScope();
  const path = rtParams(org, ws, rt.id);
  const list = useAsync(async () => must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/sessions", { params: { path, query: { limit: 100 } } })).items, [org, ws, rt.id]);
  const [chosen, setChosen] = useState<string | null>(null);
  const [streamed, setStreamed] = useState<SessionEvent[] | null>(null);
  const transcript = useAsync(
    async () => (chosen ? must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/sessions/{session_id}", { params: { path: { ...path, session_id: chosen } } })) : null),
    [org, ws, rt.id, chosen],
  );
  // A turn running elsewhere (another tab, the CLI, an SDK) is followed
  // by reading its transcript again each second until it ends; a turn
  // this tab started streams instead.
  const running = transcript.data?.status === "running" && !streamed;
  useEffect(() => {
    if (!running) return;
    const t = window.setTimeout(() => transcript.reload(), 1000);
    return () => window.clearTimeout(t);
  }, [running, transcript.data]);
  const wasRunning = useRef(false);
  useEffect(() => {
    if (wasRunning.current && !running) list.reload();
    wasRunning.current = running;
  }, [running]);
  const turnEnded = (sid: string | null) => {
    list.reload();
    if (sid && sid !== chosen) setChosen(sid);
    else transcript.reload();
  };
  const shown = [...(transcript.data?.events ?? []), ...(streamed ?? [])];
  return (
    <div class="sessions">
      <ErrorNote error={list.error} />
      {list.data && <SessionTable items={list.data} chosen={chosen} onChoose={(id) => setChosen(id)} />}
      {can("member") && <PromptBox rt={rt} session={chosen} onStream={setStreamed} onEnded={turnEnded} onNew={() => setChosen(null)} />}
      <h2>{chosen ? "Transcript of " + (transcript.data?.title || chosen) : streamed ? "New session" : "Transcript"}</h2>
      <ErrorNote error={transcript.error} />
      {chosen || streamed ? <Transcript events={shown} live={!!streamed} /> : <p class="muted">Choose a session to read its transcript.</p>}
    </div>
  );
}

// SessionTable is one session a row; its title chooses it.
function SessionTable({ items, chosen, onChoose }: { items: Session[]; chosen: string | null; onChoose: (id: string) => void }) {
  if (!items.length) return <Empty>No sessions yet.</Empty>;
  return (
    <Table class="rt-table" label="Sessions" cols={["Title", "Kind", "Harness", "Status", "Turns", "Updated"]}>
      {items.map((s) => (
        <tr key={s.id} data-session={s.id} aria-current={s.id === chosen ? "true" : undefined}>
          <th scope="row">
            <button type="button" class="btn btn-link" onClick={() => onChoose(s.id)}>
              {s.title || s.id}
            </button>
          </th>
          <td>{s.kind}</td>
          <td>{s.harness}</td>
          <td class={"status-" + (s.status === "failed" ? "error" : s.status)}>{s.status}</td>
          <td class="num">{s.turns}</td>
          <td>
            <Time at={s.updated_at} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

type PromptProps = {
  rt: Runtime;
  session: string | null;
  onStream: (events: SessionEvent[] | null) => void;
  onEnded: (session: string | null) => void;
  onNew: () => void;
};

// PromptBox starts a turn and streams its events to onStream; when the
// stream ends the transcript (which keeps them) takes over.
function PromptBox({ rt, session, onStream, onEnded, onNew }: PromptProps) {
  const { org, ws } = useScope();
  const [text, setText] = useState("");
  const [harness, setHarness] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const abort = useRef<AbortController | null>(null);
  const send = async () => {
    const ctl = (abort.current = new AbortController());
    let sid: string | null = session;
    let events: SessionEvent[] = [];
    setBusy(true);
    setError(null);
    onStream([]);
    try {
      const body = { prompt: text, ...(harness ? { harness } : {}), ...(session ? { session_id: session } : {}) };
      await streamPrompt(rtParams(org, ws, rt.id), body, (id) => (sid = id), (e) => onStream((events = [...events, e])), ctl.signal);
      setText("");
    } catch (e) {
      if (!ctl.signal.aborted) setError(failed(e));
    } finally {
      setBusy(false);
      onStream(null);
      onEnded(sid);
    }
  };
  return (
    <form class="prompt-box" aria-label="Prompt" onSubmit={(e) => e.preventDefault()}>
      <div class="field">
        <label for="prompt-text">{session ? "Prompt (continues the chosen session)" : "Prompt (starts a new session)"}</label>
        <textarea id="prompt-text" rows={4} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
      </div>
      <Field id="prompt-harness" label="Harness (optional)" value={harness} onInput={(e) => setHarness((e.target as HTMLInputElement).value)} />
      <p class="actions">
        <Button kind="primary" type="submit" disabled={busy || !text.trim()} onClick={send}>
          Send prompt
        </Button>
        {busy && <Button onClick={() => abort.current?.abort()}>Stop reading</Button>}
        {session && !busy && <Button onClick={onNew}>New session</Button>}
      </p>
      <ErrorNote error={error} />
    </form>
  );
}
