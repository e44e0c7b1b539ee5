#!/usr/bin/env python3
"""memory: an MCP server that gives an agent durable notes across sessions.

It speaks the Model Context Protocol over stdio (JSON-RPC 2.0, one message
per line) and offers four tools: remember, recall, list and forget. Notes
are kept in one JSON file, PADDOCK_MEMORY_FILE (default
/workspace/.paddock/memory.json), which lives on the runtime's workspace
volume and so survives pause, resume, reset and new sandboxes. Several
servers (one per agent session) may share the file: every change is made
under an exclusive lock and written atomically.

Python 3 standard library only.
"""

import json
import os
import re
import sys
import tempfile
import time

try:
    import fcntl
except ImportError:  # not POSIX: no cross-process lock
    fcntl = None

SERVER_NAME = "paddock-memory"
SERVER_VERSION = "1.0.0"
# Newest first; the server answers with the client's version when it knows
# it, and with the newest otherwise (MCP lifecycle, version negotiation).
PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")

STORE_PATH = os.environ.get("PADDOCK_MEMORY_FILE") or "/workspace/.paddock/memory.json"

MAX_KEY = 200
MAX_TEXT = 64 * 1024
MAX_TAGS = 20
MAX_TAG = 50
MAX_NOTES = 5000

# JSON-RPC error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

INSTRUCTIONS = (
    "Durable notes that survive across sessions in this workspace. "
    "Call recall at the start of a task with a few keywords about it; "
    "remember decisions, conventions, user preferences and hard-won findings "
    "under short stable keys; forget notes that become wrong. Never store secrets."
)

TOOLS = [
    {
        "name": "remember",
        "description": (
            "Save a note under a key, replacing any note with that key. Use it for "
            "facts worth keeping across sessions: decisions and their reasons, project "
            "conventions, user preferences, how to build or test, findings that took "
            "effort. Keys are short and stable (e.g. 'build/test-command'). Never store secrets."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "key": {"type": "string", "description": "Short stable name, at most %d characters." % MAX_KEY},
                "text": {"type": "string", "description": "The note, in plain text or markdown."},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Optional tags to group notes (e.g. 'build', 'user-preference').",
                },
            },
            "required": ["key", "text"],
            "additionalProperties": False,
        },
    },
    {
        "name": "recall",
        "description": (
            "Search the notes: every word of the query is matched, case-insensitively, "
            "against keys, tags and text; the best matches come first. Call it at the "
            "start of a task and whenever earlier context might help."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "At most this many notes (default 10)."},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {
        "name": "list",
        "description": "List the notes' keys, tags and first lines, optionally only those with a tag.",
        "inputSchema": {
            "type": "object",
            "properties": {"tag": {"type": "string", "description": "Only notes with this tag."}},
            "additionalProperties": False,
        },
    },
    {
        "name": "forget",
        "description": "Delete the note with this key, e.g. when it has become wrong.",
        "inputSchema": {
            "type": "object",
            "properties": {"key": {"type": "string"}},
            "required": ["key"],
            "additionalProperties": False,
        },
    },
]


class ToolError(Exception):
    """A tool call that failed; the message is returned to the model."""


class Store:
    """The notes file: {"version": 1, "notes": {key: note}}."""

    def __init__(self, path):
        self.path = path

    def _lock(self):
        directory = os.path.dirname(self.path) or "."
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise ToolError("cannot create %s: %s" % (directory, e.strerror))
        f = open(self.path + ".lock", "a")
        if fcntl is not None:
            fcntl.flock(f, fcntl.LOCK_EX)
        return f

    def _read(self):
        try:
            with open(self.path, "r", encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return {}
        except ValueError as e:
            # Never overwrite a file we cannot read: the notes in it would be lost.
            raise ToolError("the memory file %s is not valid JSON (%s); fix or move it" % (self.path, e))
        notes = data.get("notes") if isinstance(data, dict) else None
        if not isinstance(notes, dict):
            raise ToolError("the memory file %s has no \"notes\" object; fix or move it" % self.path)
        return notes

    def _write(self, notes):
        directory = os.path.dirname(self.path) or "."
        fd, tmp = tempfile.mkstemp(prefix=".memory-", suffix=".json", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"version": 1, "notes": notes}, f, ensure_ascii=False, indent=2, sort_keys=True)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def read(self):
        with self._lock():
            return self._read()

    def update(self, change):
        """Apply change(notes) under the lock and save; returns its result."""
        with self._lock():
            notes = self._read()
            result = change(notes)
            self._write(notes)
            return result


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def string_arg(args, name, required=True, limit=None):
    value = args.get(name)
    if value is None:
        if required:
            raise ToolError("%s is required" % name)
        return None
    if not isinstance(value, str):
        raise ToolError("%s must be a string" % name)
    value = value.strip()
    if required and not value:
        raise ToolError("%s must not be empty" % name)
    if limit is not None and len(value) > limit:
        raise ToolError("%s is longer than %d characters" % (name, limit))
    return value


def normal_tags(value):
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ToolError("tags must be a list of strings")
    tags = []
    for t in value:
        t = t.strip().lower()
        if not t:
            continue
        if len(t) > MAX_TAG:
            raise ToolError("tag %r is longer than %d characters" % (t, MAX_TAG))
        if t not in tags:
            tags.append(t)
    if len(tags) > MAX_TAGS:
        raise ToolError("at most %d tags" % MAX_TAGS)
    return tags


def describe(key, note, full=True):
    tags = " [%s]" % ", ".join(note.get("tags") or []) if note.get("tags") else ""
    head = "## %s%s (updated %s)" % (key, tags, note.get("updated", "?"))
    text = note.get("text", "")
    if not full:
        first = text.strip().splitlines()[0] if text.strip() else ""
        return "- %s%s: %s" % (key, tags, first[:100] + ("..." if len(first) > 100 else ""))
    return head + "\n" + text


def tool_remember(store, args):
    key = string_arg(args, "key", limit=MAX_KEY)
    if "\n" in key or "\r" in key:
        raise ToolError("key must be one line")
    text = string_arg(args, "text", limit=MAX_TEXT)
    tags = normal_tags(args.get("tags"))

    def change(notes):
        old = notes.get(key)
        if old is None and len(notes) >= MAX_NOTES:
            raise ToolError("memory is full (%d notes); forget some first" % MAX_NOTES)
        stamp = now()
        notes[key] = {
            "text": text,
            "tags": tags,
            "created": old.get("created", stamp) if isinstance(old, dict) else stamp,
            "updated": stamp,
        }
        return "Updated" if old is not None else "Remembered"

    verb = store.update(change)
    return "%s %r." % (verb, key)


WORD = re.compile(r"\w+", re.UNICODE)


def tool_recall(store, args):
    query = string_arg(args, "query")
    limit = args.get("limit", 10)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 100:
        raise ToolError("limit must be an integer from 1 to 100")
    terms = [t.lower() for t in WORD.findall(query)] or [query.lower()]
    scored = []
    for key, note in store.read().items():
        if not isinstance(note, dict):
            continue
        k, text = key.lower(), str(note.get("text", "")).lower()
        tags = [str(t).lower() for t in note.get("tags") or []]
        score = 0
        for t in terms:
            hit = 0
            if t in k:
                hit += 3
            if any(t in tag for tag in tags):
                hit += 2
            if t in text:
                hit += 1
            score += hit
        if query.lower() == k:
            score += 10
        if score:
            scored.append((score, note.get("updated", ""), key, note))
    if not scored:
        return "No notes match %r." % query
    scored.sort(key=lambda s: s[2])  # ties: by key
    scored.sort(key=lambda s: (s[0], s[1]), reverse=True)  # best, then newest, first (stable)
    shown = scored[:limit]
    more = "" if len(scored) <= limit else "\n\n(%d more; narrow the query or raise the limit)" % (len(scored) - limit)
    return "\n\n".join(describe(key, note) for _, _, key, note in shown) + more


def tool_list(store, args):
    tag = string_arg(args, "tag", required=False)
    tag = tag.lower() if tag else None
    notes = store.read()
    lines = [
        describe(key, notes[key], full=False)
        for key in sorted(notes)
        if isinstance(notes[key], dict) and (tag is None or tag in (notes[key].get("tags") or []))
    ]
    if not lines:
        return "No notes%s." % (" tagged %r" % tag if tag else "")
    return "%d notes:\n%s" % (len(lines), "\n".join(lines))


def tool_forget(store, args):
    key = string_arg(args, "key")

    def change(notes):
        if key not in notes:
            raise ToolError("there is no note %r" % key)
        del notes[key]

    store.update(change)
    return "Forgot %r." % key


HANDLERS = {"remember": tool_remember, "recall": tool_recall, "list": tool_list, "forget": tool_forget}


class RPCError(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code
        self.message = message


def handle(store, method, params):
    """Answers one request; returns its result or raises RPCError."""
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
            "instructions": INSTRUCTIONS,
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name = params.get("name")
        if name not in HANDLERS:
            raise RPCError(INVALID_PARAMS, "unknown tool: %r" % (name,))
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            raise RPCError(INVALID_PARAMS, "arguments must be an object")
        try:
            text = HANDLERS[name](store, args)
            return {"content": [{"type": "text", "text": text}], "isError": False}
        except ToolError as e:
            return {"content": [{"type": "text", "text": "Error: %s" % e}], "isError": True}
        except OSError as e:
            return {"content": [{"type": "text", "text": "Error: %s: %s" % (STORE_PATH, e.strerror or e)}], "isError": True}
    raise RPCError(METHOD_NOT_FOUND, "method not found: %s" % method)


def respond(msg_id, result=None, error=None):
    msg = {"jsonrpc": "2.0", "id": msg_id}
    if error is not None:
        msg["error"] = {"code": error.code, "message": error.message}
    else:
        msg["result"] = result
    return msg


def process(store, msg):
    """Handles one message; returns the response, or None for a notification."""
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
        # A response from the client (we send no requests) or junk.
        if isinstance(msg, dict) and ("result" in msg or "error" in msg):
            return None
        return respond(msg.get("id") if isinstance(msg, dict) else None, error=RPCError(INVALID_REQUEST, "invalid request"))
    is_notification = "id" not in msg
    params = msg.get("params") or {}
    if not isinstance(params, dict):
        if is_notification:
            return None
        return respond(msg["id"], error=RPCError(INVALID_PARAMS, "params must be an object"))
    if is_notification:
        # notifications/initialized, notifications/cancelled, ...: nothing to do.
        return None
    try:
        return respond(msg["id"], result=handle(store, msg["method"], params))
    except RPCError as e:
        return respond(msg["id"], error=e)
    except Exception as e:  # a bug: answer, log, keep serving
        sys.stderr.write("memory: %s: %r\n" % (msg["method"], e))
        return respond(msg["id"], error=RPCError(INTERNAL_ERROR, "internal error"))


def main():
    store = Store(STORE_PATH)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        line = stdin.readline()
        if not line:
            return 0
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line.decode("utf-8"))
        except ValueError as e:
            out = respond(None, error=RPCError(PARSE_ERROR, "parse error: %s" % e))
        else:
            if isinstance(msg, list):  # a JSON-RPC batch (protocol 2025-03-26)
                out = [r for r in (process(store, m) for m in msg) if r is not None] or None
                if msg == []:
                    out = respond(None, error=RPCError(INVALID_REQUEST, "empty batch"))
            else:
                out = process(store, msg)
        if out is not None:
            stdout.write(json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
            stdout.flush()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
