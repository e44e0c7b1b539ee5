"""Workflows through both clients, against a live server: steps run in
order, the run followed to its end, a prompt step without its model
credential, and a refusal."""

from __future__ import annotations

import time

import pytest

from conftest import Live, Runtime, unique
from test_async import run
from paddock import AsyncPaddock, Paddock, PaddockError, models


def exec_step(name: str, *argv: str) -> models.WorkflowStep:
    return models.WorkflowStep(name=name, type="exec", argv=list(argv))


def test_a_workflow_runs_its_steps_and_is_followed(live: Live, client: Paddock, runtime: Runtime) -> None:
    name = unique("wf")
    wf = client.create_workflow(
        runtime.org,
        runtime.ws,
        runtime.id,
        name,
        [
            exec_step("write", "sh", "-c", "echo py > pywf; echo out"),
            exec_step("read", "cat", "pywf"),
            models.WorkflowStep(name="ask", type="prompt", prompt="hi"),
        ],
    )
    assert isinstance(wf, models.Workflow) and wf.last_run is not None
    events = client.follow_workflow(runtime.org, runtime.ws, runtime.id, name)
    assert events[-1].type == "run" and events[-1].status == "failed"
    ended = {e.step.name: e.step for e in events if e.step is not None and e.step.status != "running"}
    assert ended["write"].status == "succeeded" and ended["write"].stdout == "out\n"
    assert ended["read"].stdout == "py\n" and ended["read"].exit_code == 0
    # The shared runtime binds no model credential: the prompt step fails
    # with the prompt route's code, after the exec steps ran.
    assert ended["ask"].status == "failed" and ended["ask"].error_code == "harness_secret_missing"

    runs = client.list_workflow_runs(runtime.org, runtime.ws, runtime.id, name)
    got = client.get_workflow_run(runtime.org, runtime.ws, runtime.id, name, runs.items[0].id)
    assert [s.status for s in got.steps] == ["succeeded", "succeeded", "failed"]
    assert any(w.name == name for w in client.list_workflows(runtime.org, runtime.ws, runtime.id).items)

    async def body(p: AsyncPaddock) -> models.Workflow:
        return await p.get_workflow(runtime.org, runtime.ws, runtime.id, name)

    assert run(live, body).id == wf.id
    client.delete_workflow(runtime.org, runtime.ws, runtime.id, name)
    with pytest.raises(PaddockError) as e:
        client.get_workflow(runtime.org, runtime.ws, runtime.id, name)
    assert (e.value.status, e.value.code) == (404, "workflow_not_found")


def test_a_run_is_cancelled(client: Paddock, runtime: Runtime) -> None:
    name = unique("wf")
    client.create_workflow(runtime.org, runtime.ws, runtime.id, name, [exec_step("sleep", "sleep", "300"), exec_step("next", "true")])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # until its first step runs
        wf = client.get_workflow(runtime.org, runtime.ws, runtime.id, name)
        if wf.last_run is not None and wf.last_run.steps[0].status == "running":
            break
        time.sleep(0.1)
    got = client.cancel_workflow(runtime.org, runtime.ws, runtime.id, name)
    assert got.status == "cancelled" and [s.status for s in got.steps] == ["cancelled", "skipped"]
    with pytest.raises(PaddockError) as e:
        client.cancel_workflow(runtime.org, runtime.ws, runtime.id, name, run_id=got.id)
    assert (e.value.status, e.value.code) == (409, "workflow_run_finished")


def test_a_bad_schedule_is_refused(client: Paddock, runtime: Runtime) -> None:
    with pytest.raises(PaddockError) as e:
        client.create_workflow(runtime.org, runtime.ws, runtime.id, unique("wf"), [exec_step("a", "true")], schedule="never")
    assert (e.value.status, e.value.code) == (400, "invalid_schedule")
