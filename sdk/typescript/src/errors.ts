// The API's errors as one typed error. Match an error's kind with its
// status and its cause with its stable code, never with its message:
//
//   if (e instanceof PaddockError && e.code === "runtime_not_running") { … }

/** An error the server answered, or a stream reported. */
export class PaddockError extends Error {
  /** The HTTP status: 404, 409, …; a stream's error is 503, or 500 for code "internal". */
  readonly status: number;
  /** The API's stable machine code, such as "runtime_not_found". */
  readonly code: string;
  /** The request's id, when the server gave one. */
  readonly requestId?: string;

  constructor(status: number, code: string, message: string, requestId?: string) {
    super(message);
    this.name = "PaddockError";
    this.status = status;
    this.code = code;
    this.requestId = requestId;
  }

  /** A 404: the resource does not exist, or the caller may not see it. */
  get notFound(): boolean {
    return this.status === 404;
  }
}

/** The codes of the kinds of status, for an error body that named none. */
const statusCodes: Record<number, string> = {
  400: "invalid_argument",
  401: "unauthenticated",
  402: "payment_required",
  403: "permission_denied",
  404: "not_found",
  409: "conflict",
  412: "failed_precondition",
  413: "resource_exhausted",
  422: "failed_precondition",
  429: "resource_exhausted",
  501: "not_implemented",
  502: "unavailable",
  503: "unavailable",
  504: "unavailable",
};

/** codeForStatus is the code of an error whose body had none. */
export function codeForStatus(status: number): string {
  return statusCodes[status] ?? (status >= 500 && status <= 599 ? "internal" : "unknown");
}

/**
 * errorFromResponse turns a non-2xx answer into a PaddockError. A body that
 * is not the API's JSON error (a proxy's page, plain text) still makes one,
 * with the status's generic code and the text, trimmed, as its message.
 */
export async function errorFromResponse(resp: Response): Promise<PaddockError> {
  const raw = await resp.text().catch(() => "");
  const requestId = resp.headers.get("X-Request-Id") ?? undefined;
  const body = parseErrorBody(raw);
  if (body) {
    return new PaddockError(resp.status, body.code, body.message || resp.statusText, body.request_id ?? requestId);
  }
  return new PaddockError(resp.status, codeForStatus(resp.status), plainMessage(raw, resp), requestId);
}

interface ErrorBody {
  code: string;
  message: string;
  request_id?: string;
}

function parseErrorBody(raw: string): ErrorBody | undefined {
  try {
    const v: unknown = JSON.parse(raw);
    if (typeof v === "object" && v !== null && typeof (v as ErrorBody).code === "string" && (v as ErrorBody).code !== "") {
      const b = v as ErrorBody;
      return { code: b.code, message: typeof b.message === "string" ? b.message : "", request_id: b.request_id };
    }
  } catch {
    // Not JSON: the caller makes a plain message of it.
  }
  return undefined;
}

function plainMessage(raw: string, resp: Response): string {
  const msg = raw.split(/\s+/).filter(Boolean).join(" ");
  if (msg === "" || msg.startsWith("<")) {
    return resp.statusText || `HTTP status ${resp.status}`;
  }
  return msg.length > 300 ? msg.slice(0, 300) + "…" : msg;
}

/** streamError is the error a stream reported after its 2xx answer. */
export function streamError(e: { code?: string; message?: string } | undefined, fallback: string): PaddockError {
  const code = e?.code || "unavailable";
  return new PaddockError(code === "internal" ? 500 : 503, code, e?.message || fallback);
}
