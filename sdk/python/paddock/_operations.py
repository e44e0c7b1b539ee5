"""The API's operations, written once for both clients.

Each method describes its call as a Request (or, for a call of several
steps, a generator that yields Requests and receives their results) and
hands it to the client's driver: Paddock runs it and returns the result,
AsyncPaddock returns a coroutine of it. So every method of Paddock is a
method of AsyncPaddock, with the same arguments, to be awaited.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Generator, List, Mapping, Optional, Sequence, Union

from . import models
from ._core import (
    NDJSON,
    OCTETS,
    Request,
    as_model,
    body,
    params,
    route,
    runtime_route,
    ws_route,
)
from .errors import PaddockError

if TYPE_CHECKING:
    from .streams import ExecStream, FileStream, SessionStream

Steps = Generator[Request[Any], Any, Any]

# What a file write takes: bytes, text (written as UTF-8), a binary file
# object or an iterable of byte chunks (an async iterable too, for
# AsyncPaddock), streamed as it is read.
Data = Any


def _one(req: Request[Any]) -> Steps:
    return (yield req)


def _text(b: bytes) -> str:
    return b.decode("utf-8")


class Operations:
    """The operations of Paddock and AsyncPaddock (see their docs)."""

    # What a client provides.
    def _run(self, steps: Steps) -> Any:
        raise NotImplementedError

    def _exec_stream(self, req: Request[Any], follow: bool) -> Any:
        raise NotImplementedError

    def _file_stream(self, req: Request[Any], chunk_size: int) -> Any:
        raise NotImplementedError

    def _session_stream(self, req: Request[Any]) -> Any:
        raise NotImplementedError

    def _content(self, data: Data) -> Any:
        raise NotImplementedError

    def _call(self, req: Request[Any]) -> Any:
        return self._run(_one(req))

    # Identity.

    def me(self) -> models.Me:
        """Who the credential is: the user and their memberships."""
        return self._call(Request("GET", "/api/v1/me", decode=as_model(models.Me)))

    def health(self) -> models.Health:
        """The server's liveness and version (no credential needed)."""
        return self._call(Request("GET", "/health", decode=as_model(models.Health)))

    # Orgs and workspaces.

    def create_org(self, name: str) -> models.Org:
        """Creates an org (the installation admin only)."""
        req = models.CreateOrgRequest(name=name)
        return self._call(Request("POST", "/api/v1/orgs", json=req.to_dict(), decode=as_model(models.Org)))

    def list_orgs(self, *, cursor: Optional[str] = None, limit: Optional[int] = None) -> models.OrgList:
        """One page of the orgs the caller sees."""
        q = params(cursor=cursor, limit=limit)
        return self._call(Request("GET", "/api/v1/orgs", params=q, decode=as_model(models.OrgList)))

    def get_org(self, org: str) -> models.Org:
        return self._call(Request("GET", route("/api/v1/org", org), decode=as_model(models.Org)))

    def create_workspace(self, org: str, name: str) -> models.Workspace:
        req = models.CreateWorkspaceRequest(name=name)
        path = route("/api/v1/org", org, "ws")
        return self._call(Request("POST", path, json=req.to_dict(), decode=as_model(models.Workspace)))

    def list_workspaces(
        self, org: str, *, cursor: Optional[str] = None, limit: Optional[int] = None
    ) -> models.WorkspaceList:
        q = params(cursor=cursor, limit=limit)
        path = route("/api/v1/org", org, "ws")
        return self._call(Request("GET", path, params=q, decode=as_model(models.WorkspaceList)))

    def get_workspace(self, org: str, ws: str) -> models.Workspace:
        return self._call(Request("GET", ws_route(org, ws), decode=as_model(models.Workspace)))

    # Projects.

    def create_project(
        self,
        org: str,
        ws: str,
        name: str,
        *,
        description: Optional[str] = None,
        runtime: Optional[models.RuntimeConfig] = None,
        start: bool = False,
        template: Optional[str] = None,
    ) -> models.Project:
        """Creates a project and its runtime, idle (no compute) until
        start_runtime, as the API and the other SDKs do; with start=True it
        starts the runtime too. The runtime is project.runtime_id.
        When that start is refused (402 insufficient_credits, 503
        image_building, …) the project stays, its runtime idle, and the
        start's PaddockError is raised. template names a template of the
        workspace the runtime starts from; runtime's fields override it."""
        return self._run(self._create_project(org, ws, name, description, runtime, start, template))

    def _create_project(
        self,
        org: str,
        ws: str,
        name: str,
        description: Optional[str],
        runtime: Optional[models.RuntimeConfig],
        start: bool,
        template: Optional[str] = None,
    ) -> Steps:
        req = models.CreateProjectRequest(name=name, description=description, runtime=runtime, template=template)
        project = yield Request(
            "POST", ws_route(org, ws, "projects"), json=req.to_dict(), decode=as_model(models.Project)
        )
        if start:
            yield Request("POST", runtime_route(org, ws, project.runtime_id, "start"), decode=as_model(models.Runtime))
        return project

    def list_projects(
        self, org: str, ws: str, *, cursor: Optional[str] = None, limit: Optional[int] = None
    ) -> models.ProjectList:
        q = params(cursor=cursor, limit=limit)
        return self._call(Request("GET", ws_route(org, ws, "projects"), params=q, decode=as_model(models.ProjectList)))

    def get_project(self, org: str, ws: str, project: str) -> models.Project:
        return self._call(Request("GET", ws_route(org, ws, "projects", project), decode=as_model(models.Project)))

    def delete_project(self, org: str, ws: str, project: str) -> None:
        """Deletes a project and its runtime; its sandbox is killed."""
        return self._call(Request("DELETE", ws_route(org, ws, "projects", project)))

    # Templates.

    def create_template(
        self,
        org: str,
        ws: str,
        name: str,
        *,
        description: Optional[str] = None,
        runtime: Optional[models.RuntimeConfig] = None,
    ) -> models.Template:
        """Creates a template: a runtime config projects start from
        (create_project(template=...)), checked as a project's is."""
        req = models.CreateTemplateRequest(name=name, description=description, runtime=runtime)
        return self._call(
            Request("POST", ws_route(org, ws, "templates"), json=req.to_dict(), decode=as_model(models.Template))
        )

    def list_templates(
        self, org: str, ws: str, *, cursor: Optional[str] = None, limit: Optional[int] = None
    ) -> models.TemplateList:
        q = params(cursor=cursor, limit=limit)
        return self._call(
            Request("GET", ws_route(org, ws, "templates"), params=q, decode=as_model(models.TemplateList))
        )

    def get_template(self, org: str, ws: str, template: str) -> models.Template:
        return self._call(Request("GET", ws_route(org, ws, "templates", template), decode=as_model(models.Template)))

    def delete_template(self, org: str, ws: str, template: str) -> None:
        """Deletes a template; the projects made from it keep their config."""
        return self._call(Request("DELETE", ws_route(org, ws, "templates", template)))

    # Runtimes.

    def list_runtimes(
        self, org: str, ws: str, *, cursor: Optional[str] = None, limit: Optional[int] = None
    ) -> models.RuntimeList:
        q = params(cursor=cursor, limit=limit)
        return self._call(Request("GET", ws_route(org, ws, "runtimes"), params=q, decode=as_model(models.RuntimeList)))

    def get_runtime(self, org: str, ws: str, runtime_id: str) -> models.Runtime:
        return self._call(Request("GET", runtime_route(org, ws, runtime_id), decode=as_model(models.Runtime)))

    def configure_runtime(self, org: str, ws: str, runtime_id: str, patch: models.RuntimePatch) -> models.RuntimeUpdate:
        """Changes some of a runtime's settings; the answer says which apply now."""
        path = runtime_route(org, ws, runtime_id)
        return self._call(Request("PATCH", path, json=patch.to_dict(), decode=as_model(models.RuntimeUpdate)))

    def start_runtime(
        self, org: str, ws: str, runtime_id: str, *, secret_ids: Optional[Sequence[str]] = None
    ) -> models.Runtime:
        """Provisions a sandbox for an idle runtime."""
        req = models.StartRuntimeRequest(secret_ids=list(secret_ids) if secret_ids is not None else None)
        return self._runtime_action(org, ws, runtime_id, "start", req)

    def pause_runtime(self, org: str, ws: str, runtime_id: str) -> models.Runtime:
        return self._runtime_action(org, ws, runtime_id, "pause", None)

    def resume_runtime(self, org: str, ws: str, runtime_id: str) -> models.Runtime:
        return self._runtime_action(org, ws, runtime_id, "resume", None)

    def reset_runtime(self, org: str, ws: str, runtime_id: str, *, wipe_workspace: bool = False) -> models.Runtime:
        """Kills the runtime's sandbox and brings it back idle (with
        wipe_workspace, its workspace volume emptied too)."""
        req = models.ResetRequest(wipe_workspace=wipe_workspace or None)
        return self._runtime_action(org, ws, runtime_id, "reset", req)

    def keepalive_runtime(
        self, org: str, ws: str, runtime_id: str, *, duration_seconds: Optional[int] = None
    ) -> models.Runtime:
        """Extends the sandbox's expiry (never shortens it)."""
        req = models.KeepaliveRequest(duration_seconds=duration_seconds)
        return self._runtime_action(org, ws, runtime_id, "keepalive", req)

    def _runtime_action(self, org: str, ws: str, runtime_id: str, action: str, req: Optional[Any]) -> Any:
        path = runtime_route(org, ws, runtime_id, action)
        return self._call(Request("POST", path, json=body(req), decode=as_model(models.Runtime)))

    # Exec and processes.

    def exec(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        argv: Sequence[str],
        *,
        env: Optional[Mapping[str, str]] = None,
        clear_env: Optional[bool] = None,
        cwd: Optional[str] = None,
        user: Optional[models.ExecRequestUser] = None,
        stdin: Union[bytes, str, None] = None,
        timeout_ms: Optional[int] = None,
        background: Optional[bool] = None,
        max_output_bytes: Optional[int] = None,
    ) -> models.ExecResult:
        """Runs a process and returns its output (bytes) and exit once it
        exits; a background process returns at once, with no exit. The exit
        code is result.exit.code; a PaddockError means the process could not
        run (command_not_found, runtime_not_running, …)."""
        req = _exec_request(argv, env, clear_env, cwd, user, stdin, timeout_ms, background, max_output_bytes, None)
        path = runtime_route(org, ws, runtime_id, "exec")
        return self._call(Request("POST", path, json=req.to_dict(), decode=as_model(models.ExecResult)))

    def exec_stream(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        argv: Sequence[str],
        *,
        env: Optional[Mapping[str, str]] = None,
        clear_env: Optional[bool] = None,
        cwd: Optional[str] = None,
        user: Optional[models.ExecRequestUser] = None,
        stdin: Union[bytes, str, None] = None,
        open_stdin: Optional[bool] = None,
        timeout_ms: Optional[int] = None,
        background: Optional[bool] = None,
    ) -> "ExecStream":
        """Starts a process and returns once it has started, with its events
        to iterate (ExecStream; AsyncExecStream for AsyncPaddock): output
        (data decoded to bytes), lost and, last, exit. Closing the stream
        before the process exits kills a foreground process; a background
        one keeps running (attach)."""
        req = _exec_request(argv, env, clear_env, cwd, user, stdin, timeout_ms, background, None, open_stdin)
        path = runtime_route(org, ws, runtime_id, "exec")
        return self._exec_stream(Request("POST", path, json=req.to_dict(), accept=NDJSON), True)

    def attach(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        process_id: str,
        *,
        stdout_offset: int = 0,
        stderr_offset: int = 0,
        follow: bool = True,
    ) -> "ExecStream":
        """Replays a process's output from the offsets and follows it until
        it exits (follow=False: only what is buffered), as an exec stream.
        Closing the stream does not affect the process."""
        q = params(
            stdout_offset=stdout_offset or None, stderr_offset=stderr_offset or None, follow=None if follow else False
        )
        path = runtime_route(org, ws, runtime_id, "processes", process_id, "attach")
        return self._exec_stream(Request("GET", path, params=q, accept=NDJSON), follow)

    def list_processes(self, org: str, ws: str, runtime_id: str) -> List[models.Process]:
        """The running processes, and the most recent exited background ones."""
        path = runtime_route(org, ws, runtime_id, "processes")
        return self._call(Request("GET", path, decode=lambda r: models.ProcessList.from_dict(r.json()).items or []))

    def get_process(self, org: str, ws: str, runtime_id: str, process_id: str) -> models.Process:
        path = runtime_route(org, ws, runtime_id, "processes", process_id)
        return self._call(Request("GET", path, decode=as_model(models.Process)))

    def signal_process(
        self, org: str, ws: str, runtime_id: str, process_id: str, signal: str, *, process_only: bool = False
    ) -> None:
        """Sends a signal (TERM, KILL, INT, …) to a process's group, or to
        the process alone."""
        req = models.SignalRequest(signal=signal, process_only=process_only or None)
        path = runtime_route(org, ws, runtime_id, "processes", process_id, "signal")
        return self._call(Request("POST", path, json=req.to_dict()))

    def write_stdin(
        self, org: str, ws: str, runtime_id: str, process_id: str, data: Data, *, close: bool = False
    ) -> int:
        """Streams data to a process's stdin (one started with open_stdin),
        closing it afterwards if close; returns the bytes delivered."""
        path = runtime_route(org, ws, runtime_id, "processes", process_id, "stdin")
        req: Request[Any] = Request(
            "POST", path, params=params(close=close or None), content=self._content(data), content_type=OCTETS
        )
        req.decode = lambda r: models.StdinResult.from_dict(r.json()).bytes
        return self._call(req)

    def kill_all_processes(self, org: str, ws: str, runtime_id: str) -> models.KillAllResult:
        path = runtime_route(org, ws, runtime_id, "processes", "kill-all")
        return self._call(Request("POST", path, decode=as_model(models.KillAllResult)))

    # Files.

    def read_file(self, org: str, ws: str, runtime_id: str, path: str, *, offset: int = 0, length: int = 0) -> bytes:
        """A file's contents (length bytes from offset; length 0: to the end)."""
        return self._call(_read_request(org, ws, runtime_id, path, offset, length, lambda r: r.content))

    def read_text(self, org: str, ws: str, runtime_id: str, path: str) -> str:
        """A file's contents as UTF-8 text."""
        return self._call(_read_request(org, ws, runtime_id, path, 0, 0, lambda r: _text(r.content)))

    def open_file(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        path: str,
        *,
        offset: int = 0,
        length: int = 0,
        chunk_size: int = 1 << 16,
    ) -> "FileStream":
        """Opens a file for a streamed read: a FileStream (AsyncFileStream)
        of byte chunks, with the file's size and mode. A transfer that breaks
        midway raises, never ends as a short file."""
        return self._file_stream(_read_request(org, ws, runtime_id, path, offset, length, lambda r: None), chunk_size)

    def write_file(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        path: str,
        data: Data,
        *,
        mode: Optional[int] = None,
        parents: bool = True,
        no_overwrite: bool = False,
    ) -> models.FileInfo:
        """Replaces a file with data, streamed: bytes, text (UTF-8), a binary
        file object or an iterable of byte chunks. The file changes whole or
        not at all. mode is the permission bits (e.g. 0o755)."""
        q = params(
            path=path,
            mode=None if mode is None else format(mode, "o"),
            parents=None if parents else False,
            no_overwrite=no_overwrite or None,
        )
        req: Request[Any] = Request(
            "PUT",
            runtime_route(org, ws, runtime_id, "files"),
            params=q,
            content=self._content(data),
            content_type=OCTETS,
        )
        req.decode = as_model(models.FileInfo)
        return self._call(req)

    def stat_file(self, org: str, ws: str, runtime_id: str, path: str, *, no_follow: bool = False) -> models.FileInfo:
        q = params(path=path, no_follow=no_follow or None)
        return self._call(
            Request(
                "GET", runtime_route(org, ws, runtime_id, "files", "stat"), params=q, decode=as_model(models.FileInfo)
            )
        )

    def list_files(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        path: str,
        *,
        recursive: bool = False,
        max_entries: Optional[int] = None,
        max_depth: Optional[int] = None,
    ) -> models.FileList:
        """A directory's entries; truncated says there were more."""
        q = params(path=path, recursive=recursive or None, max_entries=max_entries, max_depth=max_depth)
        return self._call(
            Request(
                "GET", runtime_route(org, ws, runtime_id, "files", "list"), params=q, decode=as_model(models.FileList)
            )
        )

    def mkdir(
        self, org: str, ws: str, runtime_id: str, path: str, *, mode: Optional[int] = None, parents: bool = True
    ) -> models.FileInfo:
        """Creates a directory and, unless parents is False, its missing
        parents (an existing directory is fine then)."""
        req = models.MkdirRequest(path=path, mode=mode, parents=parents)
        p = runtime_route(org, ws, runtime_id, "files", "mkdir")
        return self._call(Request("POST", p, json=req.to_dict(), decode=as_model(models.FileInfo)))

    def rename(
        self, org: str, ws: str, runtime_id: str, src: str, dst: str, *, no_overwrite: bool = False
    ) -> models.FileInfo:
        req = models.RenameRequest(from_=src, to=dst, no_overwrite=no_overwrite or None)
        p = runtime_route(org, ws, runtime_id, "files", "rename")
        return self._call(Request("POST", p, json=req.to_dict(), decode=as_model(models.FileInfo)))

    def delete_file(self, org: str, ws: str, runtime_id: str, path: str, *, recursive: bool = False) -> None:
        """Removes a file or an empty directory; recursive: a directory and
        everything under it."""
        q = params(path=path, recursive=recursive or None)
        return self._call(Request("DELETE", runtime_route(org, ws, runtime_id, "files"), params=q))

    # Sessions, credits and keys.

    def prompt(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        prompt: str,
        *,
        harness: Optional[str] = None,
        session_id: Optional[str] = None,
        model: Optional[str] = None,
        timeout_seconds: Optional[int] = None,
    ) -> models.PromptResult:
        """Runs one turn of an agent harness in the runtime, in a new
        session or continuing session_id, and returns it once it ends. A
        turn that ran and failed is a result with error set; a PaddockError
        means it could not run (harness_secret_missing, session_busy, …)."""
        req = models.PromptRequest(
            prompt=prompt, harness=harness, session_id=session_id, model=model, timeout_seconds=timeout_seconds
        )
        return self._call(_turn(org, ws, runtime_id, "prompt", req, as_model(models.PromptResult)))

    def prompt_stream(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        prompt: str,
        *,
        harness: Optional[str] = None,
        session_id: Optional[str] = None,
        model: Optional[str] = None,
        timeout_seconds: Optional[int] = None,
    ) -> "SessionStream":
        """Runs a turn like prompt and streams its SessionEvents as they
        happen (SessionStream; AsyncSessionStream for AsyncPaddock)."""
        req = models.PromptRequest(
            prompt=prompt, harness=harness, session_id=session_id, model=model, timeout_seconds=timeout_seconds
        )
        return self._session_stream(_turn(org, ws, runtime_id, "prompt", req, None))

    def task(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        prompt: str,
        *,
        harness: Optional[str] = None,
        model: Optional[str] = None,
        timeout_seconds: Optional[int] = None,
    ) -> models.PromptResult:
        """Runs a prompt to completion in a new session of kind task."""
        req = models.PromptRequest(prompt=prompt, harness=harness, model=model, timeout_seconds=timeout_seconds)
        return self._call(_turn(org, ws, runtime_id, "task", req, as_model(models.PromptResult)))

    def task_stream(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        prompt: str,
        *,
        harness: Optional[str] = None,
        model: Optional[str] = None,
        timeout_seconds: Optional[int] = None,
    ) -> "SessionStream":
        """Runs a task like task and streams its events."""
        req = models.PromptRequest(prompt=prompt, harness=harness, model=model, timeout_seconds=timeout_seconds)
        return self._session_stream(_turn(org, ws, runtime_id, "task", req, None))

    def list_sessions(
        self, org: str, ws: str, runtime_id: str, *, cursor: Optional[str] = None, limit: Optional[int] = None
    ) -> models.SessionList:
        q = params(cursor=cursor, limit=limit)
        path = runtime_route(org, ws, runtime_id, "sessions")
        return self._call(Request("GET", path, params=q, decode=as_model(models.SessionList)))

    def get_session(self, org: str, ws: str, runtime_id: str, session_id: str) -> models.SessionTranscript:
        path = runtime_route(org, ws, runtime_id, "sessions", session_id)
        return self._call(Request("GET", path, decode=as_model(models.SessionTranscript)))

    def get_credits(self, org: str) -> models.CreditAccount:
        """The org's credit balance (admins)."""
        return self._call(Request("GET", route("/api/v1/org", org, "credits"), decode=as_model(models.CreditAccount)))

    def list_keys(self, org: str, *, cursor: Optional[str] = None, limit: Optional[int] = None) -> models.APIKeyList:
        q = params(cursor=cursor, limit=limit)
        return self._call(
            Request("GET", route("/api/v1/org", org, "keys"), params=q, decode=as_model(models.APIKeyList))
        )

    def create_key(self, org: str, req: models.CreateKeyRequest) -> models.CreatedKey:
        """Creates a key of the org; the answer holds the key, shown this once."""
        path = route("/api/v1/org", org, "keys")
        return self._call(Request("POST", path, json=req.to_dict(), decode=as_model(models.CreatedKey)))

    def revoke_key(self, org: str, key_id: str) -> None:
        return self._call(Request("DELETE", route("/api/v1/org", org, "keys", key_id)))

    # Snapshots and evaluation tasks.

    def create_snapshot(self, org: str, ws: str, runtime_id: str, name: Optional[str] = None) -> models.Snapshot:
        """Takes a snapshot of a runtime's workspace files and configuration
        (named name, else by the time)."""
        req = models.CreateSnapshotRequest(name=name)
        path = runtime_route(org, ws, runtime_id, "snapshots")
        return self._call(Request("POST", path, json=req.to_dict(), decode=as_model(models.Snapshot)))

    def list_runtime_snapshots(
        self, org: str, ws: str, runtime_id: str, *, cursor: Optional[str] = None, limit: Optional[int] = None
    ) -> models.SnapshotList:
        q = params(cursor=cursor, limit=limit)
        path = runtime_route(org, ws, runtime_id, "snapshots")
        return self._call(Request("GET", path, params=q, decode=as_model(models.SnapshotList)))

    def list_snapshots(
        self, org: str, ws: str, *, cursor: Optional[str] = None, limit: Optional[int] = None
    ) -> models.SnapshotList:
        """The workspace's snapshots, deleted runtimes' included."""
        q = params(cursor=cursor, limit=limit)
        return self._call(
            Request("GET", ws_route(org, ws, "snapshots"), params=q, decode=as_model(models.SnapshotList))
        )

    def get_snapshot(self, org: str, ws: str, snapshot_id: str) -> models.Snapshot:
        return self._call(Request("GET", ws_route(org, ws, "snapshots", snapshot_id), decode=as_model(models.Snapshot)))

    def delete_snapshot(self, org: str, ws: str, snapshot_id: str) -> None:
        """Deletes a snapshot: its artifact, then its record."""
        return self._call(Request("DELETE", ws_route(org, ws, "snapshots", snapshot_id)))

    def restore_snapshot(
        self,
        org: str,
        ws: str,
        snapshot_id: str,
        *,
        runtime_id: Optional[str] = None,
        project_name: Optional[str] = None,
        provider: Optional[str] = None,
    ) -> models.RestoreSnapshotResult:
        """Restores a snapshot into a runtime of the workspace (runtime_id)
        or a new project (project_name, on provider)."""
        req = models.RestoreSnapshotRequest(runtime_id=runtime_id, project_name=project_name, provider=provider)
        path = ws_route(org, ws, "snapshots", snapshot_id, "restore")
        return self._call(Request("POST", path, json=req.to_dict(), decode=as_model(models.RestoreSnapshotResult)))

    def create_tasks(self, org: str, ws: str, req: models.CreateTasksRequest) -> models.TaskBatch:
        """Runs a batch of evaluation tasks; answers at once, its tasks pending."""
        return self._call(
            Request("POST", ws_route(org, ws, "tasks"), json=req.to_dict(), decode=as_model(models.TaskBatch))
        )

    def list_tasks(
        self,
        org: str,
        ws: str,
        *,
        batch_id: Optional[str] = None,
        cursor: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> models.TaskList:
        """The workspace's tasks, oldest first, or one batch's."""
        q = params(batch_id=batch_id, cursor=cursor, limit=limit)
        return self._call(Request("GET", ws_route(org, ws, "tasks"), params=q, decode=as_model(models.TaskList)))

    def get_task(self, org: str, ws: str, task_id: str) -> models.Task:
        return self._call(Request("GET", ws_route(org, ws, "tasks", task_id), decode=as_model(models.Task)))

    def cancel_task(self, org: str, ws: str, task_id: str) -> models.Task:
        """Cancels a task: a pending one never runs, a running one's sandbox is killed."""
        return self._call(Request("DELETE", ws_route(org, ws, "tasks", task_id), decode=as_model(models.Task)))

    def get_task_batch(self, org: str, ws: str, batch_id: str) -> models.TaskBatch:
        """A batch: how many of its tasks are in each status, and its tasks."""
        return self._call(
            Request("GET", ws_route(org, ws, "task-batches", batch_id), decode=as_model(models.TaskBatch))
        )
    # Instance mode: a runtime's secret bindings and SSH, and the operations of the runtime a server in instance mode serves under /api/sandbox.

    def list_runtime_secrets(self, org: str, ws: str, runtime_id: str) -> models.RuntimeSecrets:
        """The secrets bound to a runtime."""
        path = runtime_route(org, ws, runtime_id, "secrets")
        return self._call(Request("GET", path, decode=as_model(models.RuntimeSecrets)))

    def bind_runtime_secret(self, org: str, ws: str, runtime_id: str, secret: str) -> models.RuntimeUpdate:
        """Binds a secret (id or name) to a runtime; it applies to its next sandbox."""
        path = runtime_route(org, ws, runtime_id, "secrets", secret)
        return self._call(Request("PUT", path, decode=as_model(models.RuntimeUpdate)))

    def unbind_runtime_secret(self, org: str, ws: str, runtime_id: str, secret: str) -> models.RuntimeUpdate:
        """Unbinds a secret from a runtime (secret_not_bound when it names none)."""
        path = runtime_route(org, ws, runtime_id, "secrets", secret)
        return self._call(Request("DELETE", path, decode=as_model(models.RuntimeUpdate)))

    def runtime_ssh(self, org: str, ws: str, runtime_id: str) -> models.RuntimeSSH:
        """What connecting to a runtime over the SSH gateway takes."""
        return self._call(Request("GET", runtime_route(org, ws, runtime_id, "ssh"), decode=as_model(models.RuntimeSSH)))

    def get_instance(self) -> models.Runtime:
        """The instance's runtime."""
        return self._call(Request("GET", route("/api/sandbox"), decode=as_model(models.Runtime)))

    def start_instance(self) -> models.Runtime:
        return self._instance_action("start")

    def stop_instance(self) -> models.Runtime:
        """Stops (pauses) the instance's sandbox, keeping its state."""
        return self._instance_action("stop")

    def resume_instance(self) -> models.Runtime:
        return self._instance_action("resume")

    def _instance_action(self, action: str) -> Any:
        return self._call(Request("POST", route("/api/sandbox", action), json=body(None), decode=as_model(models.Runtime)))

    def instance_exec(
        self, argv: Sequence[str], *, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
        timeout_ms: Optional[int] = None,
    ) -> models.ExecResult:
        """Runs a process in the instance's sandbox, as exec."""
        req = _exec_request(argv, env, None, cwd, None, None, timeout_ms, None, None, None)
        return self._call(Request("POST", route("/api/sandbox", "exec"), json=req.to_dict(), decode=as_model(models.ExecResult)))

    def snapshot_instance(self, *, name: Optional[str] = None) -> models.Snapshot:
        """Takes a snapshot of the instance's runtime."""
        req = models.CreateSnapshotRequest(name=name)
        return self._call(Request("POST", route("/api/sandbox", "snapshot"), json=req.to_dict(), decode=as_model(models.Snapshot)))

    def list_instance_snapshots(self, *, cursor: Optional[str] = None, limit: Optional[int] = None) -> models.SnapshotList:
        q = params(cursor=cursor, limit=limit)
        return self._call(Request("GET", route("/api/sandbox", "snapshots"), params=q, decode=as_model(models.SnapshotList)))

    def instance_ssh(self) -> models.RuntimeSSH:
        return self._call(Request("GET", route("/api/sandbox", "ssh"), decode=as_model(models.RuntimeSSH)))

    def list_instance_secrets(self) -> models.RuntimeSecrets:
        return self._call(Request("GET", route("/api/sandbox", "secrets"), decode=as_model(models.RuntimeSecrets)))

    def bind_instance_secret(self, secret: str) -> models.RuntimeUpdate:
        return self._call(Request("PUT", route("/api/sandbox", "secrets", secret), decode=as_model(models.RuntimeUpdate)))

    def unbind_instance_secret(self, secret: str) -> models.RuntimeUpdate:
        return self._call(Request("DELETE", route("/api/sandbox", "secrets", secret), decode=as_model(models.RuntimeUpdate)))

    def list_instance_ports(self) -> models.PortList:
        return self._call(Request("GET", route("/api/sandbox", "previews"), decode=as_model(models.PortList)))

    def set_instance_port_public(self, port: int, public: bool) -> models.Port:
        """Opens (public) or closes (private) a port of the instance's sandbox."""
        req = models.SetPortRequest(public=public)
        path = route("/api/sandbox", "previews", str(port))
        return self._call(Request("PATCH", path, json=req.to_dict(), decode=as_model(models.Port)))


    # Workflows: named steps run in order on a runtime, their runs, and a follow.

    def create_workflow(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        name: str,
        steps: Sequence[models.WorkflowStep],
        *,
        schedule: Optional[str] = None,
    ) -> models.Workflow:
        """Creates a workflow on the runtime; its first run starts at once
        (last_run, pending). schedule runs it again (cron, @hourly, @every 10m)."""
        req = models.CreateWorkflowRequest(name=name, steps=list(steps), schedule=schedule)
        path = runtime_route(org, ws, runtime_id, "workflows")
        return self._call(Request("POST", path, json=req.to_dict(), decode=as_model(models.Workflow)))

    def list_workflows(
        self, org: str, ws: str, runtime_id: str, *, cursor: Optional[str] = None, limit: Optional[int] = None
    ) -> models.WorkflowList:
        """The runtime's workflows, oldest first, each with its newest run."""
        q = params(cursor=cursor, limit=limit)
        path = runtime_route(org, ws, runtime_id, "workflows")
        return self._call(Request("GET", path, params=q, decode=as_model(models.WorkflowList)))

    def get_workflow(self, org: str, ws: str, runtime_id: str, workflow: str) -> models.Workflow:
        """A workflow (its id or name) with its newest run."""
        path = runtime_route(org, ws, runtime_id, "workflows", workflow)
        return self._call(Request("GET", path, decode=as_model(models.Workflow)))

    def delete_workflow(self, org: str, ws: str, runtime_id: str, workflow: str) -> None:
        """Deletes a workflow and its runs; a run in progress is cancelled first."""
        return self._call(Request("DELETE", runtime_route(org, ws, runtime_id, "workflows", workflow)))

    def cancel_workflow(
        self, org: str, ws: str, runtime_id: str, workflow: str, *, run_id: Optional[str] = None
    ) -> models.WorkflowRun:
        """Cancels the workflow's run run_id (its newest by default)."""
        path = runtime_route(org, ws, runtime_id, "workflows", workflow, "cancel")
        return self._call(Request("POST", path, params=params(run_id=run_id), decode=as_model(models.WorkflowRun)))

    def list_workflow_runs(
        self,
        org: str,
        ws: str,
        runtime_id: str,
        workflow: str,
        *,
        cursor: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> models.WorkflowRunList:
        """A workflow's runs, newest first, each with its steps."""
        q = params(cursor=cursor, limit=limit)
        path = runtime_route(org, ws, runtime_id, "workflows", workflow, "runs")
        return self._call(Request("GET", path, params=q, decode=as_model(models.WorkflowRunList)))

    def get_workflow_run(self, org: str, ws: str, runtime_id: str, workflow: str, run_id: str) -> models.WorkflowRun:
        """One run of a workflow with its steps."""
        path = runtime_route(org, ws, runtime_id, "workflows", workflow, "runs", run_id)
        return self._call(Request("GET", path, decode=as_model(models.WorkflowRun)))

    def follow_workflow(
        self, org: str, ws: str, runtime_id: str, workflow: str, *, run_id: Optional[str] = None
    ) -> List[models.WorkflowEvent]:
        """Follows the workflow's run run_id (its newest by default) until it
        ends and answers its events: its status, each step as its state
        changed, and its final status last."""
        path = runtime_route(org, ws, runtime_id, "workflows", workflow, "follow")
        return self._call(Request("GET", path, params=params(run_id=run_id), accept=NDJSON, decode=_workflow_events))

    # Template builds.

    def build_template(
        self, org: str, ws: str, template: str, context: bytes, *, dockerfile: Optional[str] = None
    ) -> models.TemplateBuildEvent:
        """Builds template's image on the server's engine from context, a
        tar holding the Dockerfile (at dockerfile, default Dockerfile), from
        local base images, and creates or updates the template to use it.
        It answers the stream's done event (its build and template; events,
        the steps and output before it); a build that fails is a
        PaddockError with the build's code (build_step_failed, …)."""
        path = ws_route(org, ws, "templates", template, "builds")
        q = params(dockerfile=dockerfile)
        return self._call(
            Request(
                "POST", path, params=q, content=context, content_type="application/x-tar", accept=NDJSON,
                decode=_build_result,
            )
        )

    def list_template_builds(
        self,
        org: str,
        ws: str,
        *,
        template: Optional[str] = None,
        cursor: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> models.TemplateBuildList:
        """The workspace's template builds, oldest first (template's only)."""
        q = params(template=template, cursor=cursor, limit=limit)
        return self._call(
            Request("GET", ws_route(org, ws, "template-builds"), params=q, decode=as_model(models.TemplateBuildList))
        )

    def get_template_build(self, org: str, ws: str, build_id: str) -> models.TemplateBuild:
        return self._call(
            Request("GET", ws_route(org, ws, "template-builds", build_id), decode=as_model(models.TemplateBuild))
        )

    # Worlds.

    def create_world(self, org: str, ws: str, name: str, members: Sequence[models.WorldMemberRequest]) -> models.World:
        """Starts a world: a sandbox for each member on one private network,
        where each reaches the others by member name; returns once every
        member runs."""
        req = models.CreateWorldRequest(name=name, members=list(members))
        return self._call(Request("POST", ws_route(org, ws, "worlds"), json=req.to_dict(), decode=as_model(models.World)))

    def list_worlds(
        self, org: str, ws: str, *, cursor: Optional[str] = None, limit: Optional[int] = None
    ) -> models.WorldList:
        q = params(cursor=cursor, limit=limit)
        return self._call(Request("GET", ws_route(org, ws, "worlds"), params=q, decode=as_model(models.WorldList)))

    def get_world(self, org: str, ws: str, world_id: str) -> models.World:
        """A world with its members' ledger rows and its cost."""
        return self._call(Request("GET", ws_route(org, ws, "worlds", world_id), decode=as_model(models.World)))

    def delete_world(self, org: str, ws: str, world_id: str) -> models.World:
        """Tears a world down: every member and its network."""
        return self._call(Request("DELETE", ws_route(org, ws, "worlds", world_id), decode=as_model(models.World)))

    def pause_world(self, org: str, ws: str, world_id: str) -> models.World:
        return self._call(Request("POST", ws_route(org, ws, "worlds", world_id, "pause"), decode=as_model(models.World)))

    def resume_world(self, org: str, ws: str, world_id: str) -> models.World:
        return self._call(Request("POST", ws_route(org, ws, "worlds", world_id, "resume"), decode=as_model(models.World)))

    def exec_world_member(
        self, org: str, ws: str, world_id: str, member: str, argv: Sequence[str], *, cwd: Optional[str] = None
    ) -> models.ExecResult:
        """Runs a process in member of a running world and returns its
        output and exit, as exec does."""
        req = _exec_request(argv, None, None, cwd, None, None, None, None, None, None)
        path = ws_route(org, ws, "worlds", world_id, "members", member, "exec")
        return self._call(Request("POST", path, json=req.to_dict(), decode=as_model(models.ExecResult)))

    # Hosts: the machines an org brings.

    def add_host(self, org: str, req: models.AddHostRequest) -> models.Host:
        """Registers a machine for the org; the server checks it first and
        never answers its key."""
        path = route("/api/v1/org", org, "hosts")
        return self._call(Request("POST", path, json=req.to_dict(), decode=as_model(models.Host)))

    def list_hosts(self, org: str, *, cursor: Optional[str] = None, limit: Optional[int] = None) -> models.HostList:
        q = params(cursor=cursor, limit=limit)
        return self._call(
            Request("GET", route("/api/v1/org", org, "hosts"), params=q, decode=as_model(models.HostList))
        )

    def get_host(self, org: str, name: str) -> models.Host:
        return self._call(Request("GET", route("/api/v1/org", org, "hosts", name), decode=as_model(models.Host)))

    def remove_host(self, org: str, name: str) -> None:
        """Removes the org's machine (409 host_in_use while a sandbox is on it)."""
        return self._call(Request("DELETE", route("/api/v1/org", org, "hosts", name)))


def _exec_request(
    argv: Sequence[str],
    env: Optional[Mapping[str, str]],
    clear_env: Optional[bool],
    cwd: Optional[str],
    user: Optional[models.ExecRequestUser],
    stdin: Union[bytes, str, None],
    timeout_ms: Optional[int],
    background: Optional[bool],
    max_output_bytes: Optional[int],
    open_stdin: Optional[bool],
) -> models.ExecRequest:
    if isinstance(argv, str):
        raise TypeError("argv is a sequence of strings, not one string")
    return models.ExecRequest(
        argv=list(argv),
        env=dict(env) if env is not None else None,
        clear_env=clear_env,
        cwd=cwd,
        user=user,
        stdin=stdin.encode("utf-8") if isinstance(stdin, str) else stdin,
        open_stdin=open_stdin,
        timeout_ms=timeout_ms,
        background=background,
        max_output_bytes=max_output_bytes,
    )


def _read_request(org: str, ws: str, runtime_id: str, path: str, offset: int, length: int, decode: Any) -> Request[Any]:
    q = params(path=path, offset=offset or None, length=length or None)
    return Request("GET", runtime_route(org, ws, runtime_id, "files"), params=q, accept=OCTETS, decode=decode)


def _turn(org: str, ws: str, runtime_id: str, kind: str, req: models.PromptRequest, decode: Any) -> Request[Any]:
    """The request of a prompt or task: collected when decode is given,
    else streamed."""
    path = runtime_route(org, ws, runtime_id, kind)
    if decode is None:
        return Request("POST", path, json=req.to_dict(), accept=NDJSON)
    return Request("POST", path, json=req.to_dict(), decode=decode)


def _workflow_events(resp: Any) -> List[models.WorkflowEvent]:
    """A followed run's NDJSON events; an error line is its PaddockError."""
    out: List[models.WorkflowEvent] = []
    for line in resp.text.splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        if "code" in d:
            raise PaddockError(503, d["code"], d.get("message", ""), d.get("request_id"))
        out.append(models.WorkflowEvent.from_dict(d))
    if not out or out[-1].type != "run" or out[-1].status in ("pending", "running"):
        raise PaddockError(503, "unavailable", "the event stream ended before the run did")
    return out


# The status a build's error event stands for (the stream's was 200).
_BUILD_ERROR_STATUS = {"build_step_failed": 400, "build_timeout": 503}


def _build_result(resp: Any) -> models.TemplateBuildEvent:
    """The done event of a build's stream, or its error as a PaddockError."""
    for line in resp.text.splitlines():
        if not line.strip():
            continue
        ev = models.TemplateBuildEvent.from_dict(json.loads(line))
        if ev.event == "done":
            return ev
        if ev.event == "error":
            e = ev.error
            code = e.code if e else "internal"
            raise PaddockError(
                _BUILD_ERROR_STATUS.get(code, 500), code, e.message if e else "the build failed", e.request_id if e else None
            )
    raise PaddockError(503, "unavailable", "the build's stream ended before its result")
