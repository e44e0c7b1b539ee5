// The terminal tab of a runtime's page: xterm.js on the runtime's terminal
// WebSocket. A link that drops is re-attached, with the output missed in
// the meantime replayed from the byte offset received so far; opening it
// wakes a paused runtime (the server does, before it answers).
import { useEffect, useRef, useState } from "preact/hooks";
import { Terminal as XTerm } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import { api, type Schemas } from "../api/client";
import { useScope } from "../session";

type Message = Schemas["TerminalMessage"];
type Phase = "connecting" | "connected" | "reconnecting" | "ended";
type Status = { phase: Phase; text: string };
type Where = { org: string; ws: string; runtime: string };

// Waits between re-attach attempts; the server keeps a dropped terminal
// for 60 s.
const backoff = [250, 500, 1000, 2000, 4000, 8000];

// The terminal a reload of the page re-attaches (the browser ends the
// page's WebSocket as "going away", which leaves the terminal running).
const storeKey = (w: Where) => `paddock.terminal.${w.org}/${w.ws}/${w.runtime}`;

// terminalURL is the WebSocket URL of the runtime's terminal route on this
// origin (the browser sends the session cookie).
function terminalURL(w: Where, rows: number, cols: number, attach?: { id: string; offset: number }): string {
  const q = new URLSearchParams({ rows: String(rows), cols: String(cols) });
  if (attach) {
    q.set("attach", attach.id);
    q.set("offset", String(attach.offset));
  }
  const e = encodeURIComponent;
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/api/v1/org/${e(w.org)}/ws/${e(w.ws)}/runtimes/${e(w.runtime)}/terminal?${q}`;
}

// exitText says how the terminal's process ended.
function exitText(m: Message): string {
  const x = m.exit;
  if (x?.signal) return `The terminal's process was ended by ${x.signal}.`;
  return `The terminal's process exited with code ${x?.code ?? 0}.`;
}

// Link keeps one terminal session on a WebSocket, and re-attaches it with
// backoff after a close nobody asked for.
class Link {
  private socket?: WebSocket;
  private id = "";
  private offset = 0;
  private tries = 0;
  private timer?: number;
  private done = false;

  constructor(
    private term: XTerm,
    private where: Where,
    private report: (s: Status) => void,
    attachTo?: string,
  ) {
    this.id = attachTo ?? "";
  }

  open() {
    const attach = this.id ? { id: this.id, offset: this.offset } : undefined;
    const s = new WebSocket(terminalURL(this.where, this.term.rows, this.term.cols, attach));
    s.binaryType = "arraybuffer";
    let started = false;
    s.onmessage = (e) => {
      if (typeof e.data !== "string") {
        const b = new Uint8Array(e.data as ArrayBuffer);
        this.offset += b.length;
        this.term.write(b);
        return;
      }
      const m = JSON.parse(e.data) as Message;
      if (m.type === "started") started = true;
      this.control(m);
    };
    s.onclose = () => {
      if (s === this.socket) void this.closed(started);
    };
    this.socket = s;
  }

  // control handles a control message from the server.
  private control(m: Message) {
    if (m.type === "started") {
      this.id = m.terminal_id ?? "";
      this.offset = m.offset ?? 0;
      this.tries = 0;
      sessionStorage.setItem(storeKey(this.where), this.id);
      this.report({ phase: "connected", text: "Connected" });
    } else if (m.type === "exit") {
      this.end(exitText(m));
    } else if (m.type === "error" && m.error?.code === "terminal_attached_elsewhere") {
      this.end("This terminal was opened in another window.");
    } else if (m.type === "error") {
      this.report({ phase: "connected", text: `${m.error?.message ?? "Error"} (${m.error?.code ?? "error"})` });
    }
  }

  // closed decides what follows a close that ended nothing on purpose.
  private async closed(started: boolean) {
    if (this.done) return;
    if (!started && this.id && (await this.reachable())) {
      // The server answers but refused the re-attach: the terminal is
      // gone (its grace passed, or the runtime stopped).
      this.end("The terminal has ended; it could not be re-attached.");
      return;
    }
    if (!this.id && this.tries >= 2) {
      this.end(
        "The terminal could not be opened. Is the runtime running, and may you use it? A runtime keeps a bounded number of terminals, counting those whose window closed in the last minute.",
      );
      return;
    }
    const wait = backoff[Math.min(this.tries, backoff.length - 1)];
    this.tries++;
    this.report({ phase: "reconnecting", text: "Reconnecting…" });
    this.timer = window.setTimeout(() => this.open(), wait);
  }

  // reachable reports whether the server answers about the runtime.
  private async reachable(): Promise<boolean> {
    try {
      const w = this.where;
      const a = await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}", {
        params: { path: { org: w.org, workspace: w.ws, runtime_id: w.runtime } },
      });
      return a.response.status < 500;
    } catch {
      return false;
    }
  }

  private end(text: string) {
    this.done = true;
    sessionStorage.removeItem(storeKey(this.where));
    this.report({ phase: "ended", text });
  }

  // opening reports whether the first connection is still being made.
  opening(): boolean {
    return !this.id && !this.done;
  }

  send(data: string | Uint8Array) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(data);
  }

  resize(rows: number, cols: number) {
    this.send(JSON.stringify({ type: "resize", rows, cols } satisfies Message));
  }

  // close ends the session and the terminal with it.
  close() {
    this.done = true;
    window.clearTimeout(this.timer);
    sessionStorage.removeItem(storeKey(this.where));
    this.send(JSON.stringify({ type: "close" } satisfies Message));
    this.socket?.close(1000);
  }
}

// copySelection puts the terminal's selection on the clipboard.
function copySelection(term: XTerm) {
  const text = term.getSelection();
  if (text) void navigator.clipboard?.writeText(text).catch(() => {});
}

// pasteClipboard types the clipboard's text into the terminal.
function pasteClipboard(term: XTerm) {
  void navigator.clipboard
    ?.readText()
    .then((text) => term.paste(text))
    .catch(() => {});
}

// keys handles the console's own keys before the terminal sees them:
// Ctrl+Shift+C copies, Ctrl+Shift+V pastes, F6 leaves the terminal.
function keys(term: XTerm, leave: () => void) {
  return (e: KeyboardEvent): boolean => {
    if (e.type !== "keydown") return true;
    if (e.ctrlKey && e.shiftKey && e.code === "KeyC") {
      copySelection(term);
      e.preventDefault();
      return false;
    }
    if (e.ctrlKey && e.shiftKey && e.code === "KeyV") {
      pasteClipboard(term);
      e.preventDefault();
      return false;
    }
    if (e.key === "F6") {
      e.preventDefault();
      leave();
      return false;
    }
    return true;
  };
}

// useXterm makes the terminal emulator in box, fitted to it as it resizes.
function useXterm(box: { current: HTMLDivElement | null }, leave: () => void): XTerm | null {
  const [term, setTerm] = useState<XTerm | null>(null);
  useEffect(() => {
    if (!box.current) return;
    const t = new XTerm({ cursorBlink: true, fontSize: 14, scrollback: 5000, theme: { background: "#1b1f24" } });
    const fit = new FitAddon();
    t.loadAddon(fit);
    t.attachCustomKeyEventHandler(keys(t, leave));
    t.open(box.current);
    const refit = () => {
      try {
        fit.fit();
      } catch {
        // Not laid out (a hidden tab): the next resize fits it.
      }
    };
    refit();
    const watch = new ResizeObserver(refit);
    watch.observe(box.current);
    setTerm(t);
    return () => {
      watch.disconnect();
      t.dispose();
      setTerm(null);
    };
  }, []);
  return term;
}

// sayWaking reports that the runtime is being woken when it is paused or
// archived while the terminal opens (the server wakes it before it
// answers the WebSocket).
async function sayWaking(w: Where, opening: () => boolean, report: (s: Status) => void) {
  const a = await api
    .GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}", {
      params: { path: { org: w.org, workspace: w.ws, runtime_id: w.runtime } },
    })
    .catch(() => null);
  const status = a?.data?.status;
  if ((status === "paused" || status === "archived") && opening()) {
    report({ phase: "connecting", text: `Waking the ${status} runtime, then opening the terminal…` });
  }
}

// useLink joins term to the runtime's terminal for one session; a new
// generation starts a new terminal.
function useLink(term: XTerm | null, where: Where, generation: number, report: (s: Status) => void) {
  useEffect(() => {
    if (!term) return;
    const saved = generation === 0 ? sessionStorage.getItem(storeKey(where)) : null;
    const link = new Link(term, where, report, saved ?? undefined);
    const enc = new TextEncoder();
    const input = term.onData((d) => link.send(enc.encode(d)));
    const resize = term.onResize(({ rows, cols }) => link.resize(rows, cols));
    report({ phase: "connecting", text: saved ? "Re-attaching the terminal…" : "Opening the terminal…" });
    link.open();
    void sayWaking(where, () => link.opening(), report);
    term.focus();
    return () => {
      input.dispose();
      resize.dispose();
      link.close();
    };
  }, [term, where.org, where.ws, where.runtime, generation]);
}

// Terminal is the terminal tab: the emulator, its status and its controls.
export function Terminal({ runtime }: { runtime: string }) {
  const { can } = useScope();
  if (!can("member")) {
    return <p class="note">A terminal is open to the org's members: your role here is viewer.</p>;
  }
  return <TerminalTab runtime={runtime} />;
}

// TerminalTab is the terminal of a principal who may open one.
function TerminalTab({ runtime }: { runtime: string }) {
  const { org, ws } = useScope();
  const box = useRef<HTMLDivElement>(null);
  const bar = useRef<HTMLDivElement>(null);
  const [status, setStatus] = useState<Status>({ phase: "connecting", text: "Opening the terminal…" });
  const [generation, setGeneration] = useState(0);
  const term = useXterm(box, () => bar.current?.querySelector("button")?.focus());
  useLink(term, { org, ws, runtime }, generation, setStatus);
  const renew = () => {
    term?.reset();
    setGeneration((g) => g + 1);
  };
  return (
    <section class="terminal-tab" aria-label="Terminal">
      <div class="terminal-bar" ref={bar}>
        <button type="button" class="btn btn-plain" disabled={!term} onClick={() => term && copySelection(term)}>
          Copy
        </button>
        <button type="button" class="btn btn-plain" disabled={!term} onClick={() => term && pasteClipboard(term)}>
          Paste
        </button>
        {status.phase === "ended" && (
          <button type="button" class="btn btn-primary" onClick={renew}>
            New terminal
          </button>
        )}
        <p class={"terminal-status terminal-" + status.phase} role="status" aria-live="polite">
          {status.text}
        </p>
      </div>
      <div class="terminal" role="application" aria-label="Terminal" aria-describedby="terminal-keys" ref={box} />
      <p id="terminal-keys" class="hint">
        Keys go to the shell. Ctrl+Shift+C copies the selection, Ctrl+Shift+V pastes, F6 leaves the terminal.
      </p>
    </section>
  );
}
