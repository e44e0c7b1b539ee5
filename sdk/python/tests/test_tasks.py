"""Evaluation tasks through the synchronous client against a live server:
a batch and its summary, a task's result, a listing by batch, a cancel,
and a task made from a snapshot."""

from __future__ import annotations

import time

import pytest

from conftest import SMALL, Live, unique
from paddock import Paddock, PaddockError, models


def _ended(client: Paddock, live: Live, batch_id: str) -> models.TaskBatch:
    """Polls the batch until none of its tasks is pending or running."""
    deadline = time.monotonic() + 180
    while True:
        b = client.get_task_batch(live.org, live.ws, batch_id)
        if not b.statuses.get("pending") and not b.statuses.get("running"):
            return b
        assert time.monotonic() < deadline, f"batch {batch_id} still running: {b.statuses}"
        time.sleep(0.2)


def test_a_batch_runs_and_keeps_exit_output_and_score(live: Live, client: Paddock) -> None:
    req = models.CreateTasksRequest(
        runtime=SMALL,
        argv=["sh", "-c", "echo hello; exit 3"],
        score=["sh", "-c", 'echo \'{"ok": true}\''],
        count=2,
        concurrency=1,
        timeout_seconds=60,
    )
    b = client.create_tasks(live.org, live.ws, req)
    assert isinstance(b, models.TaskBatch) and (b.count, b.concurrency, len(b.tasks)) == (2, 1, 2)
    assert _ended(client, live, b.id).statuses.get("failed") == 2
    t = client.get_task(live.org, live.ws, b.tasks[0].id)
    assert isinstance(t, models.Task)
    assert (t.exit_code, t.stdout, t.score) == (3, "hello\n", {"ok": True})
    listed = client.list_tasks(live.org, live.ws, batch_id=b.id)
    assert sorted(x.id for x in listed.items) == sorted(x.id for x in b.tasks)
    with pytest.raises(PaddockError) as e:
        client.cancel_task(live.org, live.ws, t.id)
    assert (e.value.status, e.value.code) == (409, "task_finished")
    with pytest.raises(PaddockError) as e:
        client.create_tasks(live.org, live.ws, models.CreateTasksRequest(template="no-such-template", argv=["true"]))
    assert (e.value.status, e.value.code) == (404, "template_not_found")


def test_a_running_task_is_cancelled(live: Live, client: Paddock) -> None:
    b = client.create_tasks(live.org, live.ws, models.CreateTasksRequest(runtime=SMALL, argv=["sleep", "300"]))
    tid = b.tasks[0].id
    deadline = time.monotonic() + 120
    while client.get_task(live.org, live.ws, tid).status == "pending":
        assert time.monotonic() < deadline, "the task never started"
        time.sleep(0.2)
    assert client.cancel_task(live.org, live.ws, tid).status == "cancelled"


def test_a_task_from_a_snapshot_sees_its_files(live: Live, client: Paddock) -> None:
    org, ws, name = live.org, live.ws, unique("task-src")
    rid = client.create_project(org, ws, name, runtime=SMALL, start=True).runtime_id
    try:
        client.write_file(org, ws, rid, "/workspace/input.txt", b"from the snapshot")
        snap = client.create_snapshot(org, ws, rid, name=name)
        b = client.create_tasks(org, ws, models.CreateTasksRequest(snapshot=snap.id, argv=["cat", "input.txt"]))
        _ended(client, live, b.id)
        t = client.get_task(org, ws, b.tasks[0].id)
        assert (t.status, t.stdout, t.snapshot_id) == ("succeeded", "from the snapshot", snap.id), t.error
        client.delete_snapshot(org, ws, snap.id)
    finally:
        client.delete_project(org, ws, name)
