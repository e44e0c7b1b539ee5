// A terminal in a sandbox over one WebSocket: binary messages carry its
// bytes both ways, text messages its control (TerminalMessage).

import { toBytes } from "./bytes.js";
import { PaddockError, streamError } from "./errors.js";
import type { ExitStatus, TerminalMessage } from "./types.js";

/** The part of the WHATWG WebSocket a terminal uses. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: string | ArrayBuffer | Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/**
 * A WebSocket constructor: the global one (Node 22 and later, browsers),
 * or another such as the ws package's. On Node.js (and Bun) it is called as
 * new WebSocket(url, { headers }), which both Node's and ws take, so that
 * the API key goes in the Authorization header; a browser's WebSocket can
 * send no header, and authenticates with the console's session cookie.
 */
export type WebSocketConstructor = new (url: string, init?: { headers: Record<string, string> }) => WebSocketLike;

/** The codes of refused control messages: the session goes on. */
const refusals = new Set(["invalid_message", "invalid_size", "invalid_signal"]);

/** A queue of output an async iterator takes from. */
interface Waiter {
  resolve: (r: IteratorResult<Uint8Array>) => void;
  reject: (e: unknown) => void;
}

/**
 * Terminal is an interactive terminal: write its input, iterate (for
 * await) its output, resize it, signal it, close it. Its output ends
 * when its process exits (exit then says how) or the session is closed;
 * a broken link throws a PaddockError.
 */
export class Terminal implements AsyncIterable<Uint8Array> {
  /** The process's id and pid, and the id to re-attach the terminal by. */
  id = "";
  pid = 0;
  terminalId = "";
  /** The offset of the next output byte, to re-attach from. */
  offset = 0;
  private exitStatus?: ExitStatus;
  private readonly chunks: Uint8Array[] = [];
  private waiter?: Waiter;
  private ended = false;
  private failure?: unknown;

  private constructor(private readonly ws: WebSocketLike) {}

  /** open dials url and answers the terminal once the server said started. */
  static open(ws: WebSocketLike, refusal: () => Promise<unknown>): Promise<Terminal> {
    const t = new Terminal(ws);
    ws.binaryType = "arraybuffer";
    return new Promise<Terminal>((resolve, reject) => {
      let started = false;
      ws.onmessage = (ev) => {
        const m = t.receive(ev.data);
        if (!started && m?.type === "started") {
          started = true;
          resolve(t);
        } else if (!started && m?.type === "error") {
          reject(streamError(m.error, "the terminal did not start"));
        }
      };
      ws.onerror = () => undefined;
      ws.onclose = (ev) => {
        if (!started) {
          refusal().then(reject, reject);
          return;
        }
        t.closed(ev.code, ev.reason);
      };
    });
  }

  /** How the terminal's process ended, once its output ended. */
  get exit(): ExitStatus | undefined {
    return this.exitStatus;
  }

  private receive(data: unknown): TerminalMessage | undefined {
    if (typeof data !== "string") {
      const b = new Uint8Array(data as ArrayBuffer);
      this.offset += b.length;
      this.push(b);
      return undefined;
    }
    let m: TerminalMessage;
    try {
      m = JSON.parse(data) as TerminalMessage;
    } catch {
      this.failure = new PaddockError(503, "unavailable", "a control message of the terminal is not JSON");
      this.ws.close(1000);
      return undefined;
    }
    switch (m.type) {
      case "started":
        this.id = m.id ?? "";
        this.pid = m.pid ?? 0;
        this.terminalId = m.terminal_id ?? "";
        this.offset = m.offset ?? 0;
        break;
      case "exit":
        this.exitStatus = m.exit ?? { code: 0, exited_at: "", stdout_bytes: 0, stderr_bytes: 0 };
        break;
      case "error":
        if (!refusals.has(m.error?.code ?? "")) this.failure = streamError(m.error, "the terminal failed");
        break;
    }
    return m;
  }

  private push(b: Uint8Array): void {
    if (this.waiter) {
      this.waiter.resolve({ value: b, done: false });
      this.waiter = undefined;
    } else {
      this.chunks.push(b);
    }
  }

  private closed(code: number, reason: string): void {
    this.ended = true;
    if (!this.failure && code !== 1000 && !this.exitStatus) {
      this.failure = new PaddockError(503, "unavailable", `the terminal's link closed (${code}${reason ? ": " + reason : ""})`);
    }
    const w = this.waiter;
    this.waiter = undefined;
    if (w && this.failure) w.reject(this.failure);
    else w?.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return { next: () => this.next() };
  }

  private next(): Promise<IteratorResult<Uint8Array>> {
    const b = this.chunks.shift();
    if (b) return Promise.resolve({ value: b, done: false });
    if (this.ended) {
      return this.failure ? Promise.reject(this.failure) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** write sends input: keystrokes ("\x03" is Ctrl-C) or bytes. */
  write(data: string | Uint8Array): void {
    this.ws.send(toBytes(data));
  }

  private control(m: TerminalMessage): void {
    this.ws.send(JSON.stringify(m));
  }

  /** resize changes the terminal's size. */
  resize(rows: number, cols: number): void {
    if (!(rows > 0 && cols > 0 && rows <= 0xffff && cols <= 0xffff)) {
      throw new PaddockError(400, "invalid_size", `terminal size ${rows}x${cols} is out of range`);
    }
    this.control({ type: "resize", rows, cols });
  }

  /** signal sends a signal ("INT", "TERM", …) to the terminal's process group. */
  signal(signal: string): void {
    this.control({ type: "signal", signal });
  }

  /** close ends the session and kills the terminal's processes. */
  close(): void {
    if (this.ws.readyState === 1) this.control({ type: "close" });
    this.ws.close(1000);
  }
}
