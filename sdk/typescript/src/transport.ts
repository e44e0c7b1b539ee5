// The one way requests reach the server: the base URL, the credential and
// fetch, with paths built segment by segment so that a name can never
// change the route.

import { errorFromResponse, PaddockError } from "./errors.js";

/** Query parameters; undefined and "" leave a parameter out. */
export type Query = Record<string, string | number | boolean | string[] | undefined>;

/** What a request sends. */
export interface RequestInit {
  query?: Query;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is, with contentType. */
  body?: BodyInit;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
}

/** A function that sends a request: globalThis.fetch or one like it. */
export type Fetch = (input: string, init: globalThis.RequestInit) => Promise<Response>;

/** A path segment that names nothing but itself. */
export function segment(s: string): string {
  if (s === "" || s === "." || s === "..") {
    throw new PaddockError(400, "invalid_argument", `${JSON.stringify(s)} is not a name or id`);
  }
  return encodeURIComponent(s);
}

/** path joins segments under /api/v1, each escaped. */
export function path(...segments: string[]): string {
  return "/api/v1/" + segments.map(segment).join("/");
}

/** The path of workspace ws of org, and of what rest names under it. */
export function wsPath(org: string, ws: string, ...rest: string[]): string {
  return path("org", org, "ws", ws, ...rest);
}

/** The path of a runtime, and of what rest names under it. */
export function runtimePath(org: string, ws: string, runtimeId: string, ...rest: string[]): string {
  return wsPath(org, ws, "runtimes", runtimeId, ...rest);
}

/** queryString encodes q, leaving out empty values. */
export function queryString(q: Query | undefined): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q ?? {})) {
    if (v === undefined || v === "") continue;
    if (Array.isArray(v)) v.forEach((x) => p.append(k, x));
    else p.set(k, String(v));
  }
  const s = p.toString();
  return s ? "?" + s : "";
}

/** Transport sends the client's requests. */
export class Transport {
  constructor(
    readonly baseURL: string,
    private readonly apiKey: string | undefined,
    private readonly fetchFn: Fetch,
    private readonly extraHeaders: Record<string, string>,
  ) {}

  /** url is the absolute URL of path with query. */
  url(p: string, query?: Query): string {
    return this.baseURL + p + queryString(query);
  }

  /** headers are what every request carries: the credential and the extras. */
  headers(): Record<string, string> {
    const h: Record<string, string> = { ...this.extraHeaders };
    if (this.apiKey) h["Authorization"] = "Bearer " + this.apiKey;
    return h;
  }

  /** send sends one request and answers its 2xx response; any other is a PaddockError. */
  async send(method: string, p: string, init: RequestInit = {}): Promise<Response> {
    const headers = this.headers();
    headers["Accept"] = init.accept ?? "application/json";
    let body: BodyInit | undefined = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers["Content-Type"] = "application/json";
    } else if (init.contentType) {
      headers["Content-Type"] = init.contentType;
    }
    const req: globalThis.RequestInit & { duplex?: string } = { method, headers, body, signal: init.signal };
    if (isStream(body)) req.duplex = "half";
    const resp = await this.fetchFn(this.url(p, init.query), req);
    if (!resp.ok) throw await errorFromResponse(resp);
    return resp;
  }

  /** json sends one request and decodes its JSON answer (undefined for 204). */
  async json<T>(method: string, p: string, init: RequestInit = {}): Promise<T> {
    const resp = await this.send(method, p, init);
    if (resp.status === 204) {
      await resp.body?.cancel();
      return undefined as T;
    }
    return (await resp.json()) as T;
  }

  /** bytes sends one request and answers its body's bytes. */
  async bytes(method: string, p: string, init: RequestInit = {}): Promise<Uint8Array> {
    const resp = await this.send(method, p, init);
    return new Uint8Array(await resp.arrayBuffer());
  }
}

function isStream(body: BodyInit | undefined): boolean {
  return typeof ReadableStream !== "undefined" && body instanceof ReadableStream;
}
