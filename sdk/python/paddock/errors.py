"""The one error the client raises for an answer the API refused."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Optional

# The codes of an error body that had none, by status class, as the Go SDK
# (pkg/client) names them.
_STATUS_CODES = {
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
}


class PaddockError(Exception):
    """An answer of the API that is not a success: its HTTP status, the
    stable machine code of its error body (``runtime_not_running``,
    ``file_not_found``, …) and its message for people."""

    def __init__(self, status: int, code: str, message: str, request_id: Optional[str] = None):
        super().__init__(f"{code}: {message}" if message else code)
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id

    def __repr__(self) -> str:
        return f"PaddockError(status={self.status}, code={self.code!r}, message={self.message!r})"

    @classmethod
    def from_body(cls, status: int, body: bytes, request_id: Optional[str] = None) -> "PaddockError":
        """The error an answer with status and body stands for. A body that
        is not the API's JSON error (a proxy's page) still yields one, with a
        code for the status and the body's text as the message."""
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("code"), str) and doc["code"]:
            message = doc.get("message") if isinstance(doc.get("message"), str) else ""
            rid = doc.get("request_id") if isinstance(doc.get("request_id"), str) else None
            return cls(status, doc["code"], message or _status_text(status), rid or request_id)
        return cls(status, code_for_status(status), _plain_message(body, status), request_id)

    @classmethod
    def from_stream(cls, code: str, message: str) -> "PaddockError":
        """An error a stream reported after its 2xx answer: status 500 when
        internal, else 503."""
        return cls(500 if code == "internal" else 503, code, message)


def code_for_status(status: int) -> str:
    """The code of an error answer whose body had none."""
    if status in _STATUS_CODES:
        return _STATUS_CODES[status]
    return "internal" if 500 <= status <= 599 else "unknown"


def _status_text(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return f"HTTP status {status}"


def _plain_message(body: bytes, status: int) -> str:
    text = " ".join(body.decode("utf-8", "replace").split())
    if not text or text.startswith("<") or "\ufffd" in text:
        return _status_text(status)
    return text if len(text) <= 300 else text[:300] + "…"
