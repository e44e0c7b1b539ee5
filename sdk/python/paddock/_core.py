"""What the sync and async clients share: how an operation becomes a
request, how an answer becomes a result or a PaddockError, and how an NDJSON
event stream is read. Neither client knows an API path; both only send the
Requests the operations (_operations.py) describe."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, Mapping, Optional, Type, TypeVar
from urllib.parse import quote

import httpx

from . import models
from ._wire import Model
from .errors import PaddockError

M = TypeVar("M", bound=Model)
T = TypeVar("T")

JSON = "application/json"
NDJSON = "application/x-ndjson"
OCTETS = "application/octet-stream"

# The header naming the session a streamed prompt or task runs in.
SESSION_ID_HEADER = "X-Paddock-Session-Id"

# Decode turns a successful answer (its body read) into an operation's result.
Decode = Callable[[httpx.Response], T]


USER_AGENT = "paddock-python/0.1.0"

# Reads wait as long as the server takes (an exec lasts as long as its
# process); connecting, writing and waiting for a pooled connection do not.
DEFAULT_TIMEOUT = httpx.Timeout(60.0, read=None)


def base_headers(api_key: str) -> Dict[str, str]:
    """The headers every request carries."""
    h = {"User-Agent": USER_AGENT}
    if api_key:
        h["Authorization"] = "Bearer " + api_key
    return h


def build(http: Any, base: str, headers: Dict[str, str], req: "Request[Any]") -> httpx.Request:
    """The httpx request of req, for either client."""
    return http.build_request(
        req.method,
        base + req.path,
        params=req.params or None,
        json=req.json,
        content=req.content,
        headers={**headers, **req.headers()},
    )


def broken(e: httpx.HTTPError) -> PaddockError:
    """The error of a stream that broke after its answer began."""
    return PaddockError.from_stream("unavailable", f"the stream broke: {e}")


def _nothing(resp: httpx.Response) -> Any:
    return None


@dataclass
class Request(Generic[T]):
    """One call of the API, as both clients send it; T is its result."""

    method: str
    path: str
    params: Dict[str, str] = field(default_factory=dict)
    json: Any = None
    content: Any = None
    content_type: Optional[str] = None
    accept: str = JSON
    decode: Decode[T] = _nothing

    def headers(self) -> Dict[str, str]:
        h = {"Accept": self.accept}
        if self.content_type:
            h["Content-Type"] = self.content_type
        return h


def route(prefix: str, *segments: str) -> str:
    """prefix joined with segments, each escaped so that a name can never
    change the route; an empty, "." or ".." segment is a ValueError."""
    parts = [prefix]
    for s in segments:
        if s in ("", ".", ".."):
            raise ValueError(f"{s!r} is not a name or id (in {prefix})")
        parts.append(quote(s, safe=""))
    return "/".join(parts)


def ws_route(org: str, ws: str, *rest: str) -> str:
    return route("/api/v1/org", org, "ws", ws, *rest)


def runtime_route(org: str, ws: str, runtime_id: str, *rest: str) -> str:
    return ws_route(org, ws, "runtimes", runtime_id, *rest)


def as_model(cls: Type[M]) -> Decode[M]:
    """A Decode reading the answer's JSON body as cls."""
    return lambda resp: cls.from_dict(resp.json())


def body(m: Optional[Model]) -> Optional[Dict[str, Any]]:
    """A request model's JSON, or None."""
    return None if m is None else m.to_dict()


def params(**values: Any) -> Dict[str, str]:
    """Query parameters of the values that are set; booleans as true/false."""
    out: Dict[str, str] = {}
    for k, v in values.items():
        if v is None:
            continue
        out[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return out


def check(resp: httpx.Response, raw: bytes) -> None:
    """Raises the PaddockError of a non-2xx answer whose body is raw."""
    if not 200 <= resp.status_code <= 299:
        raise PaddockError.from_body(resp.status_code, raw, resp.headers.get("X-Request-Id"))


@dataclass
class FileMeta:
    """What the headers of a file read say of the file, when it was opened."""

    size: int
    mode: int

    @classmethod
    def of(cls, resp: httpx.Response) -> "FileMeta":
        size = resp.headers.get("X-Paddock-File-Size", "")
        mode = resp.headers.get("X-Paddock-File-Mode", "")
        return cls(int(size) if size.isdigit() else -1, int(mode, 8) if mode else 0)


E = TypeVar("E")


class LineReader(Generic[E]):
    """Reads an NDJSON stream line by line: the state a sync and an async
    stream share. feed returns the event a line holds (None for a blank
    line) or raises; last says whether an event ends the stream; end is
    called at the end of the body and raises when it came too soon."""

    def feed(self, line: str) -> Optional[E]:
        raise NotImplementedError

    def last(self, ev: E) -> bool:
        raise NotImplementedError

    def end(self) -> None:
        raise NotImplementedError


def _decode_line(line: str, cls: Type[M]) -> Optional[M]:
    if not line.strip():
        return None
    try:
        return cls.from_dict(json.loads(line))
    except ValueError as e:
        raise PaddockError.from_stream("unavailable", f"a malformed event in the stream: {e}") from None


class EventReader(LineReader[models.ExecEvent]):
    """Reads an exec or attach stream: an error event raises the
    PaddockError it carries; a followed stream must end with exit."""

    def __init__(self, follow: bool):
        self.follow = follow
        self.exit: Optional[models.ExitStatus] = None
        self.started: Optional[models.ExecEvent] = None

    def feed(self, line: str) -> Optional[models.ExecEvent]:
        ev = _decode_line(line, models.ExecEvent)
        if ev is None:
            return None
        if ev.event == "error":
            err = ev.error
            raise PaddockError.from_stream(
                err.code if err else "unavailable", err.message if err else "the stream ended with an error"
            )
        if ev.event == "exit":
            self.exit = ev.exit or models.ExitStatus.from_dict(
                {"code": 0, "exited_at": "1970-01-01T00:00:00Z", "stdout_bytes": 0, "stderr_bytes": 0}
            )
        return ev

    def last(self, ev: models.ExecEvent) -> bool:
        return ev.event == "exit"

    def begin(self, ev: Optional[models.ExecEvent]) -> None:
        """Checks the stream's first event, started."""
        if ev is None or ev.event != "started":
            raise PaddockError.from_stream("unavailable", "the stream did not begin with a started event")
        self.started = ev

    def end(self) -> None:
        if self.follow and self.exit is None:
            raise PaddockError.from_stream("unavailable", "the stream ended before the process exited")


class SessionReader(LineReader[models.SessionEvent]):
    """Reads a streamed prompt or task: error events are events (the
    harness's failures are part of the transcript, and a turn that ran ends
    with done); a stream that ends before done raises, with the last error
    event's code when there was one."""

    def __init__(self) -> None:
        self.done: Optional[models.TurnDone] = None
        self.last_error: Optional[models.TurnError] = None

    def feed(self, line: str) -> Optional[models.SessionEvent]:
        ev = _decode_line(line, models.SessionEvent)
        if ev is None:
            return None
        if self.done is not None:
            raise PaddockError.from_stream("unavailable", "the stream went on after its done event")
        if ev.type == "error":
            self.last_error = ev.error or models.TurnError(message="the turn failed")
        if ev.type == "done":
            self.done = ev.done or models.TurnDone(exit_code=0)
        return ev

    def last(self, ev: models.SessionEvent) -> bool:
        return ev.type == "done"

    def end(self) -> None:
        if self.done is not None:
            return
        err = self.last_error
        if err is not None:
            raise PaddockError.from_stream(err.code or "unavailable", err.message)
        raise PaddockError.from_stream("unavailable", "the stream ended before the turn was done")

    @property
    def failed(self) -> bool:
        """The turn, once done, failed: its harness exited non-zero or it
        reported an error."""
        return self.done is not None and (self.done.exit_code != 0 or self.last_error is not None)


def collect(ev: models.ExecEvent, out: Mapping[str, Optional[Callable[[bytes], Any]]]) -> None:
    """Hands an output event's data to the sink for its stream."""
    if ev.event == "output" and ev.data is not None:
        sink = out.get(ev.stream or "stdout")
        if sink is not None:
            sink(ev.data)
