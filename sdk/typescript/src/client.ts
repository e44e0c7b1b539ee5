// Paddock is the client: one server, one credential, a method per
// operation, named as the Go SDK (pkg/client) names them. Every method
// takes the org, the workspace and the runtime it acts on first.

import { fromBase64, toBase64, toBytes, toText } from "./bytes.js";
import { PaddockError } from "./errors.js";
import { ExecStream, type ProcessControl } from "./exec.js";
import { ndjson } from "./ndjson.js";
import { PromptStream } from "./sessions.js";
import { Terminal, type WebSocketConstructor } from "./terminal.js";
import { path, runtimePath, segment, Transport, wsPath, type Fetch, type Query } from "./transport.js";
import type * as T from "./types.js";

/** How to reach the server. */
export interface PaddockOptions {
  /** The server's URL, e.g. "http://127.0.0.1:8080" (a path prefix behind a proxy is kept). */
  url: string;
  /** An API key ("pdk_…") or a session token, sent as a bearer token; none in a browser that has the console's cookie. */
  apiKey?: string;
  /** The fetch to send requests with; globalThis.fetch by default. */
  fetch?: Fetch;
  /** The WebSocket constructor for terminals; globalThis.WebSocket by default. */
  WebSocket?: WebSocketConstructor;
  /** More headers every request carries. */
  headers?: Record<string, string>;
}

/** An exec's request: ExecRequest, with stdin as text or bytes rather than base64. */
export type ExecInput = Omit<T.ExecRequest, "stdin"> & { stdin?: string | Uint8Array };

/** The answer of a collected exec, its output decoded. A background process has no exit. */
export interface ExecOutput {
  id: string;
  pid: number;
  exit?: T.ExitStatus;
  /** The exit code, once exited: -1 when a signal ended the process. */
  exitCode?: number;
  stdout: string;
  stderr: string;
  stdoutBytes: Uint8Array;
  stderrBytes: Uint8Array;
  /** Output beyond max_output_bytes was discarded. */
  truncated: boolean;
}

/** Options of a streamed call: a signal that ends it. */
export interface StreamOptions {
  signal?: AbortSignal;
}

/** What an upload sends: bytes, a Blob (a File) or a stream of bytes. */
export type UploadBody = Uint8Array | Blob | ReadableStream<Uint8Array>;

const NDJSON = "application/x-ndjson";

/** Options of buildTemplate. */
export interface BuildTemplateOptions extends StreamOptions {
  /** The Dockerfile's path in the context (default Dockerfile). */
  dockerfile?: string;
  /** Called with each started, step and output event as it comes. */
  onEvent?: (ev: T.TemplateBuildEvent) => void;
}

/** The status a build's error event stands for (the stream's was 200). */
const BUILD_ERROR_STATUS: Record<string, number> = { build_step_failed: 400, build_timeout: 503 };
const OCTETS = "application/octet-stream";

/** Client of one paddock server. */
export class Paddock {
  private readonly t: Transport;
  private readonly WebSocketImpl?: WebSocketConstructor;

  constructor(opts: PaddockOptions) {
    let u: URL;
    try {
      u = new URL(opts.url);
    } catch {
      throw new PaddockError(400, "invalid_argument", `server URL ${JSON.stringify(opts.url)} is not a URL`);
    }
    if ((u.protocol !== "http:" && u.protocol !== "https:") || u.search || u.hash || u.username) {
      throw new PaddockError(400, "invalid_argument", `server URL ${JSON.stringify(opts.url)} must be http(s)://host[/prefix]`);
    }
    const base = u.origin + u.pathname.replace(/\/+$/, "");
    const f = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.t = new Transport(base, opts.apiKey, f, opts.headers ?? {});
    this.WebSocketImpl = opts.WebSocket;
  }

  /** The server URL the client talks to. */
  get baseURL(): string {
    return this.t.baseURL;
  }

  /** Who the caller is: its credential, user, scope and memberships. */
  me(): Promise<T.Me> {
    return this.t.json("GET", path("me"));
  }

  // Orgs and workspaces.

  /** Lists one page of the orgs the key may see. */
  listOrgs(opts: T.ListOptions = {}): Promise<T.Page<T.Org>> {
    return this.t.json("GET", path("orgs"), { query: { ...opts } });
  }

  /** Creates an org; it needs an installation admin key. */
  createOrg(req: T.CreateOrgRequest | string): Promise<T.Org> {
    return this.t.json("POST", path("orgs"), { json: named(req) });
  }

  /** Returns the org named org. */
  getOrg(org: string): Promise<T.Org> {
    return this.t.json("GET", path("org", org));
  }

  /** Lists one page of org's workspaces. */
  listWorkspaces(org: string, opts: T.ListOptions = {}): Promise<T.Page<T.Workspace>> {
    return this.t.json("GET", path("org", org, "ws"), { query: { ...opts } });
  }

  /** Creates a workspace in org. */
  createWorkspace(org: string, req: T.CreateWorkspaceRequest | string): Promise<T.Workspace> {
    return this.t.json("POST", path("org", org, "ws"), { json: named(req) });
  }

  /** Returns the workspace named ws in org. */
  getWorkspace(org: string, ws: string): Promise<T.Workspace> {
    return this.t.json("GET", wsPath(org, ws));
  }

  // Projects and runtimes.

  /** Creates a project in org/ws, and with it its runtime (runtime_id), idle. */
  createProject(org: string, ws: string, req: T.CreateProjectRequest | string): Promise<T.Project> {
    return this.t.json("POST", wsPath(org, ws, "projects"), { json: named(req) });
  }

  /** Lists one page of the projects in org/ws. */
  listProjects(org: string, ws: string, opts: T.ListOptions = {}): Promise<T.Page<T.Project>> {
    return this.t.json("GET", wsPath(org, ws, "projects"), { query: { ...opts } });
  }

  /** Returns a project of org/ws by name or id. */
  getProject(org: string, ws: string, project: string): Promise<T.Project> {
    return this.t.json("GET", wsPath(org, ws, "projects", project));
  }

  /** Deletes a project, by name or id, and its runtime (reset first). */
  async deleteProject(org: string, ws: string, project: string): Promise<void> {
    await this.t.json("DELETE", wsPath(org, ws, "projects", project));
  }

  /** Creates a template in org/ws: a runtime config projects start from (CreateProjectRequest.template). */
  createTemplate(org: string, ws: string, req: T.CreateTemplateRequest | string): Promise<T.Template> {
    return this.t.json("POST", wsPath(org, ws, "templates"), { json: named(req) });
  }

  /** Lists one page of the templates in org/ws. */
  listTemplates(org: string, ws: string, opts: T.ListOptions = {}): Promise<T.Page<T.Template>> {
    return this.t.json("GET", wsPath(org, ws, "templates"), { query: { ...opts } });
  }

  /** Returns a template of org/ws by name or id. */
  getTemplate(org: string, ws: string, template: string): Promise<T.Template> {
    return this.t.json("GET", wsPath(org, ws, "templates", template));
  }

  /** Deletes a template, by name or id; the projects made from it keep their config. */
  async deleteTemplate(org: string, ws: string, template: string): Promise<void> {
    await this.t.json("DELETE", wsPath(org, ws, "templates", template));
  }

  /** Lists one page of the runtimes in org/ws. */
  listRuntimes(org: string, ws: string, opts: T.ListOptions = {}): Promise<T.Page<T.Runtime>> {
    return this.t.json("GET", wsPath(org, ws, "runtimes"), { query: { ...opts } });
  }

  /** Returns a runtime of org/ws. */
  getRuntime(org: string, ws: string, runtimeId: string): Promise<T.Runtime> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId));
  }

  /** Changes some of a runtime's settings; the answer says which apply now and which at the next start. */
  configureRuntime(org: string, ws: string, runtimeId: string, patch: T.RuntimePatch): Promise<T.RuntimeUpdate> {
    return this.t.json("PATCH", runtimePath(org, ws, runtimeId), { json: patch });
  }

  /** Provisions a sandbox for the runtime; one already running is 409 runtime_already_running. */
  startRuntime(org: string, ws: string, runtimeId: string, req: T.StartRuntimeRequest = {}): Promise<T.Runtime> {
    return this.action(org, ws, runtimeId, "start", req);
  }

  /** Suspends the runtime's sandbox, keeping its state. */
  pauseRuntime(org: string, ws: string, runtimeId: string): Promise<T.Runtime> {
    return this.action(org, ws, runtimeId, "pause");
  }

  /** Resumes a paused runtime. */
  resumeRuntime(org: string, ws: string, runtimeId: string): Promise<T.Runtime> {
    return this.action(org, ws, runtimeId, "resume");
  }

  /** Terminates the runtime's sandbox and returns it to idle. */
  resetRuntime(org: string, ws: string, runtimeId: string, req: T.ResetRequest = {}): Promise<T.Runtime> {
    return this.action(org, ws, runtimeId, "reset", req);
  }

  /** Extends the expiry window of the runtime's sandbox. */
  keepaliveRuntime(org: string, ws: string, runtimeId: string, req: T.KeepaliveRequest = {}): Promise<T.Runtime> {
    return this.action(org, ws, runtimeId, "keepalive", req);
  }

  private action(org: string, ws: string, runtimeId: string, verb: string, req?: object): Promise<T.Runtime> {
    return this.t.json("POST", runtimePath(org, ws, runtimeId, verb), req === undefined ? {} : { json: req });
  }

  // Exec and processes.

  /**
   * Runs a process and answers its output once it exits (a background
   * process answers at once, with no exit). The exit code is in the
   * answer, not an error: an error means the process could not run (404
   * command_not_found, 409 runtime_not_running, …).
   */
  async exec(org: string, ws: string, runtimeId: string, req: ExecInput | string[]): Promise<ExecOutput> {
    return execOutput(await this.t.json<T.ExecResult>("POST", runtimePath(org, ws, runtimeId, "exec"), { json: execBody(req) }));
  }

  /**
   * Starts a process and answers once it started, streaming its events
   * (for await). Closing the stream, or the signal, kills a foreground
   * process; a background one goes on (attach to it again by id).
   */
  async execStream(org: string, ws: string, runtimeId: string, req: ExecInput | string[], opts: StreamOptions = {}): Promise<ExecStream> {
    const abort = linked(opts.signal);
    const p = runtimePath(org, ws, runtimeId, "exec");
    const resp = await this.t.send("POST", p, { json: execBody(req), accept: NDJSON, signal: abort.signal });
    return ExecStream.open(resp, true, abort, this.processControl(org, ws, runtimeId));
  }

  /** Replays a process's output from the offsets and follows it until it exits (follow: false: the replay alone). */
  async attach(org: string, ws: string, runtimeId: string, processId: string, opts: T.AttachOptions & StreamOptions = {}): Promise<ExecStream> {
    const { signal, ...query } = opts;
    const abort = linked(signal);
    const p = runtimePath(org, ws, runtimeId, "processes", processId, "attach");
    const resp = await this.t.send("GET", p, { query, accept: NDJSON, signal: abort.signal });
    return ExecStream.open(resp, query.follow !== false, abort, this.processControl(org, ws, runtimeId));
  }

  private processControl(org: string, ws: string, runtimeId: string): ProcessControl {
    return {
      writeStdin: (id, data, close) => this.writeStdin(org, ws, runtimeId, id, data, { close }),
      signal: (id, signal) => this.signalProcess(org, ws, runtimeId, id, signal),
    };
  }

  /** Lists the sandbox's running processes and its recent exited background ones. */
  async listProcesses(org: string, ws: string, runtimeId: string): Promise<T.Process[]> {
    const l = await this.t.json<T.Page<T.Process>>("GET", runtimePath(org, ws, runtimeId, "processes"));
    return l.items ?? [];
  }

  /** Describes one process; an unknown id is 404 process_not_found. */
  getProcess(org: string, ws: string, runtimeId: string, processId: string): Promise<T.Process> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "processes", processId));
  }

  /** Sends a signal ("TERM", "KILL", …) to a process's group, or to it alone with process_only. */
  async signalProcess(org: string, ws: string, runtimeId: string, processId: string, req: T.SignalRequest | string): Promise<void> {
    const body = typeof req === "string" ? { signal: req } : req;
    await this.t.json("POST", runtimePath(org, ws, runtimeId, "processes", processId, "signal"), { json: body });
  }

  /** Writes to the stdin of a process started with open_stdin, and closes it after with close; answers the bytes delivered. */
  async writeStdin(org: string, ws: string, runtimeId: string, processId: string, data: string | Uint8Array, opts: { close?: boolean } = {}): Promise<number> {
    const p = runtimePath(org, ws, runtimeId, "processes", processId, "stdin");
    const query = { close: opts.close || undefined };
    const r = await this.t.json<T.StdinResult>("POST", p, { query, body: toBytes(data) as BodyInit, contentType: OCTETS });
    return r.bytes;
  }

  /** Kills every process of the sandbox except its agent, and says how many. */
  killAllProcesses(org: string, ws: string, runtimeId: string): Promise<T.KillAllResult> {
    return this.t.json("POST", runtimePath(org, ws, runtimeId, "processes", "kill-all"));
  }

  // Files. Paths are absolute paths in the sandbox.

  /** Reads a file's bytes (a range with offset and length). */
  readFile(org: string, ws: string, runtimeId: string, filePath: string, opts: T.ReadFileOptions = {}): Promise<Uint8Array> {
    return this.t.bytes("GET", runtimePath(org, ws, runtimeId, "files"), { query: { path: filePath, ...opts }, accept: OCTETS });
  }

  /** Reads a file as UTF-8 text. */
  async readText(org: string, ws: string, runtimeId: string, filePath: string): Promise<string> {
    return toText(await this.readFile(org, ws, runtimeId, filePath));
  }

  /** Replaces a file with data (text is UTF-8), whole or not at all; answers the file. */
  writeFile(org: string, ws: string, runtimeId: string, filePath: string, data: string | UploadBody, opts: T.WriteFileOptions = {}): Promise<T.FileInfo> {
    const body = (typeof data === "string" ? toBytes(data) : data) as BodyInit;
    const query = { path: filePath, ...opts };
    return this.t.json("PUT", runtimePath(org, ws, runtimeId, "files"), { query, body, contentType: OCTETS });
  }

  /** Describes a file, following a final symbolic link. */
  statFile(org: string, ws: string, runtimeId: string, filePath: string): Promise<T.FileInfo> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "files", "stat"), { query: { path: filePath } });
  }

  /** Lists a directory (recursive, bounded by max_entries and max_depth). */
  listFiles(org: string, ws: string, runtimeId: string, dir: string, opts: T.ListFilesOptions = {}): Promise<T.FileList> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "files", "list"), { query: { path: dir, ...opts } });
  }

  /** Creates a directory (with parents: its missing parents too, and an existing one is fine). */
  mkdir(org: string, ws: string, runtimeId: string, dir: string, opts: Omit<T.MkdirRequest, "path"> = {}): Promise<T.FileInfo> {
    return this.t.json("POST", runtimePath(org, ws, runtimeId, "files", "mkdir"), { json: { path: dir, ...opts } });
  }

  /** Removes a file or an empty directory; with recursive, a directory and all under it. */
  async deleteFile(org: string, ws: string, runtimeId: string, filePath: string, opts: { recursive?: boolean } = {}): Promise<void> {
    await this.t.json("DELETE", runtimePath(org, ws, runtimeId, "files"), { query: { path: filePath, recursive: opts.recursive || undefined } });
  }

  /** Moves a file or directory (replacing the target unless no_overwrite); answers it at its new path. */
  rename(org: string, ws: string, runtimeId: string, from: string, to: string, opts: { no_overwrite?: boolean } = {}): Promise<T.FileInfo> {
    return this.t.json("POST", runtimePath(org, ws, runtimeId, "files", "rename"), { json: { from, to, ...opts } });
  }

  /** Downloads a tar of a directory's contents, or of one file. */
  downloadTar(org: string, ws: string, runtimeId: string, filePath: string): Promise<Uint8Array> {
    return this.t.bytes("GET", runtimePath(org, ws, runtimeId, "files", "tar"), { query: { path: filePath }, accept: "application/x-tar" });
  }

  /** Extracts a tar under dir, creating it if missing. */
  uploadTar(org: string, ws: string, runtimeId: string, dir: string, tar: UploadBody): Promise<T.TarResult> {
    const p = runtimePath(org, ws, runtimeId, "files", "tar");
    return this.t.json("POST", p, { query: { path: dir }, body: tar as BodyInit, contentType: "application/x-tar" });
  }

  // Terminals.

  /**
   * Opens a terminal (a PTY) in the sandbox over a WebSocket, or
   * re-attaches one (attach, offset). Closing it kills its processes; a
   * link that drops leaves it to be re-attached within the server's grace.
   */
  terminal(org: string, ws: string, runtimeId: string, opts: T.TerminalOptions = {}): Promise<Terminal> {
    const p = runtimePath(org, ws, runtimeId, "terminal");
    const query = opts as Query;
    const url = this.t.url(p, query).replace(/^http/, "ws");
    const WS = this.WebSocketImpl ?? (globalThis.WebSocket as unknown as WebSocketConstructor | undefined);
    if (!WS) throw new PaddockError(501, "not_implemented", "no WebSocket here: pass one as the WebSocket option");
    const socket = takesHeaders() ? new WS(url, { headers: this.t.headers() }) : new WS(url);
    return Terminal.open(socket, () => this.terminalRefusal(org, ws, runtimeId, p, query));
  }

  /**
   * terminalRefusal says why a terminal's WebSocket did not open, which
   * the WebSocket API does not tell: the same request without the upgrade
   * answers the server's refusal of the caller, and once that is only
   * websocket_required, the runtime itself answers whether it exists.
   */
  private async terminalRefusal(org: string, ws: string, runtimeId: string, p: string, query: Query): Promise<PaddockError> {
    const probe = await this.t.send("GET", p, { query }).catch((e: unknown) => e);
    if (probe instanceof PaddockError && probe.code !== "websocket_required") return probe;
    const rt = await this.getRuntime(org, ws, runtimeId).catch((e: unknown) => e);
    if (rt instanceof PaddockError) return rt;
    return new PaddockError(503, "unavailable", "the terminal's WebSocket did not open");
  }

  // Prompts and sessions.

  /** Runs one turn of an agent harness and answers once it ends (a failed turn has error set). */
  prompt(org: string, ws: string, runtimeId: string, req: T.PromptRequest | string): Promise<T.PromptResult> {
    return this.t.json("POST", runtimePath(org, ws, runtimeId, "prompt"), { json: promptBody(req) });
  }

  /** Runs one turn and streams its events (for await); sessionId names its session. */
  promptStream(org: string, ws: string, runtimeId: string, req: T.PromptRequest | string, opts: StreamOptions = {}): Promise<PromptStream> {
    return this.sessionStream(runtimePath(org, ws, runtimeId, "prompt"), promptBody(req), opts);
  }

  /** Runs a prompt to completion in a new session of kind task. */
  task(org: string, ws: string, runtimeId: string, req: T.PromptRequest | string): Promise<T.PromptResult> {
    return this.t.json("POST", runtimePath(org, ws, runtimeId, "task"), { json: promptBody(req) });
  }

  /** Runs a task and streams its events. */
  taskStream(org: string, ws: string, runtimeId: string, req: T.PromptRequest | string, opts: StreamOptions = {}): Promise<PromptStream> {
    return this.sessionStream(runtimePath(org, ws, runtimeId, "task"), promptBody(req), opts);
  }

  private async sessionStream(p: string, body: T.PromptRequest, opts: StreamOptions): Promise<PromptStream> {
    const abort = linked(opts.signal);
    const resp = await this.t.send("POST", p, { json: body, accept: NDJSON, signal: abort.signal });
    return new PromptStream(resp, abort);
  }

  /** Lists one page of a runtime's sessions, newest first. */
  listSessions(org: string, ws: string, runtimeId: string, opts: T.ListOptions = {}): Promise<T.Page<T.Session>> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "sessions"), { query: { ...opts } });
  }

  /** Returns a session with its whole transcript. */
  getSession(org: string, ws: string, runtimeId: string, sessionId: string): Promise<T.SessionTranscript> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "sessions", sessionId));
  }

  // Credits and keys.

  /** Returns org's credit balance and its most recent movements. */
  getCredits(org: string): Promise<T.CreditAccount> {
    return this.t.json("GET", path("org", org, "credits"));
  }

  /** Lists one page of org's credit movements, newest first, narrowed by f. */
  listCreditJournal(org: string, f: T.JournalFilter = {}): Promise<T.Page<T.CreditEntry>> {
    return this.t.json("GET", path("org", org, "credits", "journal"), { query: { ...f } });
  }

  /** Returns what org's compute cost, grouped as q says. */
  getUsage(org: string, q: T.UsageQuery = {}): Promise<T.Usage> {
    return this.t.json("GET", path("org", org, "usage"), { query: { ...q } });
  }

  /** Makes an API key in org; the key itself is in the answer, this once. */
  createKey(org: string, req: T.CreateKeyRequest = {}): Promise<T.CreatedKey> {
    return this.t.json("POST", path("org", org, "keys"), { json: req });
  }

  /** Lists one page of org's keys, without the keys themselves. */
  listKeys(org: string, opts: T.ListOptions = {}): Promise<T.Page<T.APIKey>> {
    return this.t.json("GET", path("org", org, "keys"), { query: { ...opts } });
  }

  /** Revokes a key of org: it is refused from its next request. */
  async revokeKey(org: string, keyId: string): Promise<void> {
    await this.t.json("DELETE", path("org", org, "keys", keyId));
  }

  // Snapshots and evaluation tasks.

  /** Takes a snapshot of a runtime's workspace files and configuration (a name, or one by the time). */
  createSnapshot(org: string, ws: string, runtimeId: string, req: T.CreateSnapshotRequest | string = {}): Promise<T.Snapshot> {
    return this.t.json("POST", runtimePath(org, ws, runtimeId, "snapshots"), { json: typeof req === "string" ? { name: req } : req });
  }

  /** Lists one page of a runtime's snapshots. */
  listRuntimeSnapshots(org: string, ws: string, runtimeId: string, opts: T.ListOptions = {}): Promise<T.Page<T.Snapshot>> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "snapshots"), { query: { ...opts } });
  }

  /** Lists one page of the snapshots in org/ws, deleted runtimes' included. */
  listSnapshots(org: string, ws: string, opts: T.ListOptions = {}): Promise<T.Page<T.Snapshot>> {
    return this.t.json("GET", wsPath(org, ws, "snapshots"), { query: { ...opts } });
  }

  /** Returns a snapshot of org/ws. */
  getSnapshot(org: string, ws: string, snapshotId: string): Promise<T.Snapshot> {
    return this.t.json("GET", wsPath(org, ws, "snapshots", snapshotId));
  }

  /** Deletes a snapshot: its artifact, then its record. */
  async deleteSnapshot(org: string, ws: string, snapshotId: string): Promise<void> {
    await this.t.json("DELETE", wsPath(org, ws, "snapshots", snapshotId));
  }

  /** Restores a snapshot into a runtime of org/ws ({runtime_id}) or a new project ({project_name, provider}). */
  restoreSnapshot(org: string, ws: string, snapshotId: string, req: T.RestoreSnapshotRequest): Promise<T.RestoreSnapshotResult> {
    return this.t.json("POST", wsPath(org, ws, "snapshots", snapshotId, "restore"), { json: req });
  }

  /** Runs a batch of evaluation tasks; answers at once, its tasks pending. */
  createTasks(org: string, ws: string, req: T.CreateTasksRequest): Promise<T.TaskBatch> {
    return this.t.json("POST", wsPath(org, ws, "tasks"), { json: req });
  }

  /** Lists one page of the tasks in org/ws, oldest first, or one batch's ({batch_id}). */
  listTasks(org: string, ws: string, opts: T.TaskListOptions = {}): Promise<T.Page<T.Task>> {
    return this.t.json("GET", wsPath(org, ws, "tasks"), { query: { ...opts } });
  }

  /** Returns a task of org/ws and what came of it. */
  getTask(org: string, ws: string, taskId: string): Promise<T.Task> {
    return this.t.json("GET", wsPath(org, ws, "tasks", taskId));
  }

  /** Cancels a task: a pending one never runs, a running one's sandbox is killed. */
  cancelTask(org: string, ws: string, taskId: string): Promise<T.Task> {
    return this.t.json("DELETE", wsPath(org, ws, "tasks", taskId));
  }

  /** Returns a batch of tasks: how many are in each status, and its tasks. */
  getTaskBatch(org: string, ws: string, batchId: string): Promise<T.TaskBatch> {
    return this.t.json("GET", wsPath(org, ws, "task-batches", batchId));
  }
  // Instance mode: a runtime's secret bindings and SSH, and the operations of the runtime a server in instance mode serves under /api/sandbox.

  /** The secrets bound to a runtime. */
  listRuntimeSecrets(org: string, ws: string, runtimeId: string): Promise<T.RuntimeSecrets> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "secrets"));
  }

  /** Binds a secret (id or name) to a runtime; it applies to its next sandbox. */
  bindRuntimeSecret(org: string, ws: string, runtimeId: string, secret: string): Promise<T.RuntimeUpdate> {
    return this.t.json("PUT", runtimePath(org, ws, runtimeId, "secrets", secret));
  }

  /** Unbinds a secret from a runtime (404 secret_not_bound when it names none). */
  unbindRuntimeSecret(org: string, ws: string, runtimeId: string, secret: string): Promise<T.RuntimeUpdate> {
    return this.t.json("DELETE", runtimePath(org, ws, runtimeId, "secrets", secret));
  }

  /** What connecting to a runtime over the SSH gateway takes. */
  runtimeSSH(org: string, ws: string, runtimeId: string): Promise<T.RuntimeSSH> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "ssh"));
  }

  /** The instance's runtime. */
  getInstance(): Promise<T.Runtime> {
    return this.t.json("GET", sandboxPath());
  }

  /** Starts the instance's runtime. */
  startInstance(req: T.StartRuntimeRequest = {}): Promise<T.Runtime> {
    return this.t.json("POST", sandboxPath("start"), { json: req });
  }

  /** Runs a process in the instance's sandbox, as exec. */
  async instanceExec(req: ExecInput | string[]): Promise<ExecOutput> {
    return execOutput(await this.t.json<T.ExecResult>("POST", sandboxPath("exec"), { json: execBody(req) }));
  }

  /** Runs one turn of a harness in the instance's sandbox, as prompt. */
  instancePrompt(req: T.PromptRequest | string): Promise<T.PromptResult> {
    return this.t.json("POST", sandboxPath("prompt"), { json: promptBody(req) });
  }

  /** Runs a prompt to completion as a task in the instance's sandbox. */
  instanceTask(req: T.PromptRequest | string): Promise<T.PromptResult> {
    return this.t.json("POST", sandboxPath("task"), { json: promptBody(req) });
  }

  /** Stops (pauses) the instance's sandbox, keeping its state. */
  stopInstance(): Promise<T.Runtime> {
    return this.t.json("POST", sandboxPath("stop"), {});
  }

  /** Continues the instance's stopped sandbox. */
  resumeInstance(): Promise<T.Runtime> {
    return this.t.json("POST", sandboxPath("resume"), {});
  }

  /** Takes a snapshot of the instance's runtime. */
  snapshotInstance(req: T.CreateSnapshotRequest = {}): Promise<T.Snapshot> {
    return this.t.json("POST", sandboxPath("snapshot"), { json: req });
  }

  /** The snapshots of the instance's runtime, a page at a time. */
  listInstanceSnapshots(opts: T.ListOptions = {}): Promise<T.Page<T.Snapshot>> {
    return this.t.json("GET", sandboxPath("snapshots"), { query: { ...opts } });
  }

  /** What connecting to the instance's sandbox over the SSH gateway takes. */
  instanceSSH(): Promise<T.RuntimeSSH> {
    return this.t.json("GET", sandboxPath("ssh"));
  }

  /** The secrets bound to the instance's runtime. */
  listInstanceSecrets(): Promise<T.RuntimeSecrets> {
    return this.t.json("GET", sandboxPath("secrets"));
  }

  /** Binds a secret to the instance's runtime. */
  bindInstanceSecret(secret: string): Promise<T.RuntimeUpdate> {
    return this.t.json("PUT", sandboxPath("secrets", secret));
  }

  /** Unbinds a secret from the instance's runtime. */
  unbindInstanceSecret(secret: string): Promise<T.RuntimeUpdate> {
    return this.t.json("DELETE", sandboxPath("secrets", secret));
  }

  /** The instance's sandbox's ports. */
  listInstancePorts(): Promise<T.Page<T.Port>> {
    return this.t.json("GET", sandboxPath("previews"));
  }

  /** Opens (public) or closes (private) a port of the instance's sandbox. */
  setInstancePortPublic(port: number, isPublic: boolean): Promise<T.Port> {
    return this.t.json("PATCH", sandboxPath("previews", String(port)), { json: { public: isPublic } });
  }

  // Workflows: named steps run in order on a runtime, their runs, and a live follow.

  /** Creates a workflow on the runtime; its first run starts at once (last_run, pending). */
  createWorkflow(org: string, ws: string, runtimeId: string, req: T.CreateWorkflowRequest): Promise<T.Workflow> {
    return this.t.json("POST", runtimePath(org, ws, runtimeId, "workflows"), { json: req });
  }

  /** Lists one page of the runtime's workflows, oldest first, each with its newest run. */
  listWorkflows(org: string, ws: string, runtimeId: string, opts: T.ListOptions = {}): Promise<T.Page<T.Workflow>> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "workflows"), { query: { ...opts } });
  }

  /** Returns a workflow (its id or name) with its newest run. */
  getWorkflow(org: string, ws: string, runtimeId: string, workflow: string): Promise<T.Workflow> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "workflows", workflow));
  }

  /** Deletes a workflow and its runs; a run in progress is cancelled first. */
  async deleteWorkflow(org: string, ws: string, runtimeId: string, workflow: string): Promise<void> {
    await this.t.json("DELETE", runtimePath(org, ws, runtimeId, "workflows", workflow));
  }

  /** Cancels the workflow's run runId (its newest when absent) and answers it. */
  cancelWorkflow(org: string, ws: string, runtimeId: string, workflow: string, runId?: string): Promise<T.WorkflowRun> {
    const query = runId ? { run_id: runId } : {};
    return this.t.json("POST", runtimePath(org, ws, runtimeId, "workflows", workflow, "cancel"), { query });
  }

  /** Lists one page of a workflow's runs, newest first. */
  listWorkflowRuns(org: string, ws: string, runtimeId: string, workflow: string, opts: T.ListOptions = {}): Promise<T.Page<T.WorkflowRun>> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "workflows", workflow, "runs"), { query: { ...opts } });
  }

  /** Returns one run of a workflow with its steps. */
  getWorkflowRun(org: string, ws: string, runtimeId: string, workflow: string, runId: string): Promise<T.WorkflowRun> {
    return this.t.json("GET", runtimePath(org, ws, runtimeId, "workflows", workflow, "runs", runId));
  }

  /**
   * Follows the workflow's run runId (its newest when absent) live: yields
   * the run's status, each step as its state changes, and the run's final
   * status last. A stream that ends before the run did throws.
   */
  async *followWorkflow(
    org: string, ws: string, runtimeId: string, workflow: string, runId?: string, opts: StreamOptions = {},
  ): AsyncGenerator<T.WorkflowEvent, void, undefined> {
    const abort = linked(opts.signal);
    const query = runId ? { run_id: runId } : {};
    const resp = await this.t.send("GET", runtimePath(org, ws, runtimeId, "workflows", workflow, "follow"), { query, accept: NDJSON, signal: abort.signal });
    if (!resp.body) throw new PaddockError(503, "unavailable", "the event stream has no body");
    try {
      // The stream is read to its end: a run that had ended when it was
      // followed is sent as its status, its steps, then its status again.
      let ended = false;
      for await (const line of ndjson<T.WorkflowEvent & { code?: string; message?: string }>(resp.body)) {
        if (line.code) throw new PaddockError(503, line.code, line.message ?? "the follow failed");
        yield line;
        ended = line.type === "run" && line.status !== "pending" && line.status !== "running";
      }
      if (!ended) throw new PaddockError(503, "unavailable", "the event stream ended before the run did");
    } finally {
      abort.abort();
    }
  }

  // Template builds

  /**
   * Builds template's image in org/ws on the server's engine from context, a
   * tar holding the Dockerfile (at opts.dockerfile, default Dockerfile), from
   * local base images; the template is created or updated to use it. Each
   * started, step and output event goes to opts.onEvent as it comes. It
   * resolves to the build and the template; a build that fails rejects with a
   * PaddockError of the build's code (build_step_failed, build_timeout, …).
   */
  async buildTemplate(
    org: string,
    ws: string,
    template: string,
    context: UploadBody,
    opts: BuildTemplateOptions = {},
  ): Promise<{ build: T.TemplateBuild; template: T.Template }> {
    const resp = await this.t.send("POST", wsPath(org, ws, "templates", template, "builds"), {
      query: opts.dockerfile ? { dockerfile: opts.dockerfile } : undefined,
      body: context as BodyInit,
      contentType: "application/x-tar",
      accept: NDJSON,
      signal: opts.signal,
    });
    if (!resp.body) throw new PaddockError(503, "unavailable", "the build's answer has no body");
    for await (const ev of ndjson<T.TemplateBuildEvent>(resp.body)) {
      if (ev.event === "done" && ev.build && ev.template) return { build: ev.build, template: ev.template };
      if (ev.event === "error") {
        const code = ev.error?.code ?? "internal";
        throw new PaddockError(BUILD_ERROR_STATUS[code] ?? 500, code, ev.error?.message ?? "the build failed", ev.error?.request_id);
      }
      opts.onEvent?.(ev);
    }
    throw new PaddockError(503, "unavailable", "the build's stream ended before its result");
  }

  /** Lists one page of org/ws's template builds, oldest first (only opts.template's when given). */
  listTemplateBuilds(org: string, ws: string, opts: T.ListOptions & { template?: string } = {}): Promise<T.Page<T.TemplateBuild>> {
    return this.t.json("GET", wsPath(org, ws, "template-builds"), { query: { ...opts } });
  }

  /** Returns a template build of org/ws. */
  getTemplateBuild(org: string, ws: string, buildId: string): Promise<T.TemplateBuild> {
    return this.t.json("GET", wsPath(org, ws, "template-builds", buildId));
  }

  // Worlds: sandboxes started, paused and torn down as one on a private network.

  /** Starts a world in org/ws: a sandbox for each member on one private network; answers once every member runs. */
  createWorld(org: string, ws: string, req: T.CreateWorldRequest): Promise<T.World> {
    return this.t.json("POST", wsPath(org, ws, "worlds"), { json: req });
  }

  /** Lists one page of org/ws's worlds, oldest first. */
  listWorlds(org: string, ws: string, opts: T.ListOptions = {}): Promise<T.Page<T.World>> {
    return this.t.json("GET", wsPath(org, ws, "worlds"), { query: { ...opts } });
  }

  /** Returns a world with its members' ledger rows and its cost. */
  getWorld(org: string, ws: string, id: string): Promise<T.World> {
    return this.t.json("GET", wsPath(org, ws, "worlds", id));
  }

  /** Tears a world down: every member and its network; answers it, deleted. */
  deleteWorld(org: string, ws: string, id: string): Promise<T.World> {
    return this.t.json("DELETE", wsPath(org, ws, "worlds", id));
  }

  /** Pauses every member of a world. */
  pauseWorld(org: string, ws: string, id: string): Promise<T.World> {
    return this.t.json("POST", wsPath(org, ws, "worlds", id, "pause"));
  }

  /** Resumes every member of a world. */
  resumeWorld(org: string, ws: string, id: string): Promise<T.World> {
    return this.t.json("POST", wsPath(org, ws, "worlds", id, "resume"));
  }

  /** Runs a process in member of a running world and answers its output and exit, as exec does. */
  async execWorldMember(org: string, ws: string, id: string, member: string, req: ExecInput | string[]): Promise<ExecOutput> {
    return execOutput(await this.t.json<T.ExecResult>("POST", wsPath(org, ws, "worlds", id, "members", member, "exec"), { json: execBody(req) }));
  }

  // Hosts: the machines an org brings.

  /** Registers a machine for org; the server checks it first and never answers its key. */
  addHost(org: string, req: T.AddHostRequest): Promise<T.Host> {
    return this.t.json("POST", path("org", org, "hosts"), { json: req });
  }

  /** Lists one page of org's machines. */
  listHosts(org: string, opts: T.ListOptions = {}): Promise<T.Page<T.Host>> {
    return this.t.json("GET", path("org", org, "hosts"), { query: { ...opts } });
  }

  /** Returns org's machine called name. */
  getHost(org: string, name: string): Promise<T.Host> {
    return this.t.json("GET", path("org", org, "hosts", name));
  }

  /** Removes org's machine called name (409 host_in_use while a sandbox is on it). */
  async removeHost(org: string, name: string): Promise<void> {
    await this.t.json("DELETE", path("org", org, "hosts", name));
  }
}

/** named makes a request of a bare name. */
function named<R extends { name: string }>(req: R | string): R {
  return (typeof req === "string" ? { name: req } : req) as R;
}

/** execOutput is an exec's answer with its output decoded. */
function execOutput(r: T.ExecResult): ExecOutput {
  const stdoutBytes = fromBase64(r.stdout);
  const stderrBytes = fromBase64(r.stderr);
  return {
    id: r.id,
    pid: r.pid,
    exit: r.exit,
    exitCode: r.exit?.code,
    stdout: toText(stdoutBytes),
    stderr: toText(stderrBytes),
    stdoutBytes,
    stderrBytes,
    truncated: r.truncated,
  };
}

function execBody(req: ExecInput | string[]): T.ExecRequest {
  if (Array.isArray(req)) return { argv: req };
  const { stdin, ...rest } = req;
  return stdin === undefined ? rest : { ...rest, stdin: toBase64(toBytes(stdin)) };
}

function promptBody(req: T.PromptRequest | string): T.PromptRequest {
  return typeof req === "string" ? { prompt: req } : req;
}

/** linked is an AbortController that also aborts when signal does. */
function linked(signal?: AbortSignal): AbortController {
  const c = new AbortController();
  if (signal?.aborted) c.abort(signal.reason);
  else signal?.addEventListener("abort", () => c.abort(signal.reason), { once: true });
  return c;
}

/**
 * takesHeaders says whether this runtime's WebSockets take headers: Node's
 * (and Bun's, which says it is Node) do, a browser's or a worker's do not.
 */
function takesHeaders(): boolean {
  const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof proc?.versions?.node === "string";
}

/** sandboxPath is the path of the instance's operation named by rest. */
function sandboxPath(...rest: string[]): string {
  return ["/api/sandbox", ...rest.map(segment)].join("/");
}
