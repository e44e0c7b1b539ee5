// Streamed exec and attach: a process's events as an async iterator, its
// output decoded (bytes, and UTF-8 text decoded across chunk borders).

import { concat, fromBase64, toText } from "./bytes.js";
import { PaddockError, streamError } from "./errors.js";
import { ndjson } from "./ndjson.js";
import type { ExecEvent, ExitStatus } from "./types.js";

/** Which of a process's output streams. */
export type StreamName = "stdout" | "stderr";

/** An event of a streamed process, decoded. */
export type ProcessEvent =
  /** Output: data is the bytes, text their UTF-8 (a character split across events is whole in the later one). */
  | { type: "output"; stream: StreamName; offset: number; data: Uint8Array; text: string }
  /** Output the agent no longer held (an attach that started too far back). */
  | { type: "lost"; stream: StreamName; offset: number; bytes: number }
  /** The process ended; the last event. */
  | { type: "exit"; exit: ExitStatus };

/** What a process printed and how it ended. */
export interface ProcessOutput {
  exit: ExitStatus;
  /** The exit code: -1 when a signal ended the process. */
  exitCode: number;
  stdout: string;
  stderr: string;
  stdoutBytes: Uint8Array;
  stderrBytes: Uint8Array;
}

/** What a stream can do to its process besides reading it. */
export interface ProcessControl {
  writeStdin(processId: string, data: string | Uint8Array, close: boolean): Promise<number>;
  signal(processId: string, signal: string): Promise<void>;
}

/**
 * ExecStream is a streamed exec or attach: iterate it (for await) for the
 * process's events, or wait() for all of its output. It ends after the
 * exit event, or, for an attach that does not follow, after the replay.
 * A stream that breaks throws a PaddockError (status 503, or 500 for an
 * internal error).
 */
export class ExecStream implements AsyncIterable<ProcessEvent> {
  /** The process's id in the sandbox's agent (for attach, signal, stdin). */
  readonly id: string;
  /** The process's pid in the sandbox. */
  readonly pid: number;
  private exitStatus?: ExitStatus;
  private readonly decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  private iterating = false;

  private constructor(
    private readonly events: AsyncGenerator<ExecEvent, void, undefined>,
    started: ExecEvent,
    private readonly follow: boolean,
    private readonly abort: AbortController,
    private readonly control: ProcessControl,
  ) {
    this.id = started.id ?? "";
    this.pid = started.pid ?? 0;
  }

  /** open reads a stream's started event and answers the stream. */
  static async open(resp: Response, follow: boolean, abort: AbortController, control: ProcessControl): Promise<ExecStream> {
    if (!resp.body) throw new PaddockError(503, "unavailable", "the event stream has no body");
    const events = ndjson<ExecEvent>(resp.body);
    const first = await events.next();
    if (first.done || first.value.event !== "started") {
      abort.abort();
      if (!first.done && first.value.event === "error") throw streamError(first.value.error, "the process did not start");
      throw new PaddockError(503, "unavailable", "the stream did not begin with a started event");
    }
    return new ExecStream(events, first.value, follow, abort, control);
  }

  /** How the process ended, once the exit event was read. */
  get exit(): ExitStatus | undefined {
    return this.exitStatus;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ProcessEvent> {
    if (this.iterating) throw new Error("paddock: an exec stream can be read once");
    this.iterating = true;
    try {
      for await (const ev of this.events) {
        const out = this.decode(ev);
        if (out) yield out;
        if (out?.type === "exit") return;
      }
      if (this.follow) throw new PaddockError(503, "unavailable", "the event stream ended before the process exited");
    } finally {
      this.abort.abort();
    }
  }

  private decode(ev: ExecEvent): ProcessEvent | undefined {
    const stream: StreamName = ev.stream === "stderr" ? "stderr" : "stdout";
    switch (ev.event) {
      case "output": {
        const data = fromBase64(ev.data);
        return { type: "output", stream, offset: ev.offset ?? 0, data, text: this.decoders[stream].decode(data, { stream: true }) };
      }
      case "lost":
        return { type: "lost", stream, offset: ev.offset ?? 0, bytes: ev.bytes ?? 0 };
      case "exit":
        this.exitStatus = ev.exit ?? { code: 0, exited_at: "", stdout_bytes: 0, stderr_bytes: 0 };
        return { type: "exit", exit: this.exitStatus };
      case "error":
        throw streamError(ev.error, "the stream ended with an error");
    }
    return undefined;
  }

  /**
   * wait reads the stream to its end and answers everything the process
   * printed and how it ended. A stream that ends without the process
   * exiting (an attach that does not follow) is code "not_exited".
   */
  async wait(): Promise<ProcessOutput> {
    const chunks: Record<StreamName, Uint8Array[]> = { stdout: [], stderr: [] };
    for await (const ev of this) {
      if (ev.type === "output") chunks[ev.stream].push(ev.data);
    }
    if (!this.exitStatus) throw new PaddockError(409, "not_exited", "the process has not exited");
    return processOutput(this.exitStatus, concat(chunks.stdout), concat(chunks.stderr));
  }

  /** writeStdin writes to the process's stdin (exec with open_stdin), closing it after if close. */
  writeStdin(data: string | Uint8Array, close = false): Promise<number> {
    return this.control.writeStdin(this.id, data, close);
  }

  /** closeStdin closes the process's stdin: it reads end of file. */
  closeStdin(): Promise<number> {
    return this.control.writeStdin(this.id, new Uint8Array(0), true);
  }

  /** signal sends a signal ("INT", "TERM", "KILL", …) to the process's group. */
  signal(signal: string): Promise<void> {
    return this.control.signal(this.id, signal);
  }

  /** close ends the stream: a foreground exec's process is killed, a background one goes on. */
  close(): void {
    this.abort.abort();
  }
}

/** processOutput makes a ProcessOutput of an exit and the bytes. */
export function processOutput(exit: ExitStatus, stdoutBytes: Uint8Array, stderrBytes: Uint8Array): ProcessOutput {
  return { exit, exitCode: exit.code, stdout: toText(stdoutBytes), stderr: toText(stderrBytes), stdoutBytes, stderrBytes };
}
