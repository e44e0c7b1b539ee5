"""A runtime's life through the synchronous client against a live server:
create, start, pause, wake by exec, keepalive, reset and delete."""

from __future__ import annotations

import pytest

from conftest import SMALL, Live, unique
from paddock import Paddock, PaddockError, models


def test_orgs_workspaces_and_projects_are_listed(live: Live, client: Paddock) -> None:
    assert any(o.name == live.org for o in client.list_orgs().items)
    assert client.get_org(live.org).name == live.org
    ws = client.get_workspace(live.org, live.ws)
    assert isinstance(ws, models.Workspace) and ws.name == live.ws
    assert any(w.name == live.ws for w in client.list_workspaces(live.org).items)
    me = client.me()
    assert isinstance(me, models.Me)
    assert client.health().status == "ok"


def test_a_runtime_lives_and_is_torn_down(live: Live, client: Paddock) -> None:
    name = unique("life")
    project = client.create_project(live.org, live.ws, name, description="lifecycle", runtime=SMALL, start=False)
    assert (project.name, project.description) == (name, "lifecycle")
    org, ws, rid = live.org, live.ws, project.runtime_id
    try:
        assert client.get_runtime(org, ws, rid).status == "idle"
        update = client.configure_runtime(org, ws, rid, models.RuntimePatch(idle_timeout_seconds=1234, memory_mb=320))
        assert isinstance(update, models.RuntimeUpdate)
        assert (update.runtime.config.idle_timeout_seconds, update.runtime.config.memory_mb) == (1234, 320)
        assert sorted(update.live + update.next_start) == ["idle_timeout_seconds", "memory_mb"]
        assert any(p.name == name for p in client.list_projects(org, ws).items)
        with pytest.raises(PaddockError) as e:
            client.exec(org, ws, rid, ["true"])
        assert (e.value.status, e.value.code) == (409, "runtime_not_running")
        started = client.start_runtime(org, ws, rid)
        assert started.status == "running" and started.current_sandbox_id
        assert any(r.id == rid for r in client.list_runtimes(org, ws).items)
        client.write_file(org, ws, rid, "/tmp/kept", "still here")
        assert client.pause_runtime(org, ws, rid).status == "paused"
        # An exec wakes a paused runtime; its files are where they were.
        assert client.exec(org, ws, rid, ["cat", "/tmp/kept"]).stdout == b"still here"
        assert client.get_runtime(org, ws, rid).status == "running"
        assert client.pause_runtime(org, ws, rid).status == "paused"
        assert client.resume_runtime(org, ws, rid).status == "running"
        kept = client.keepalive_runtime(org, ws, rid, duration_seconds=1800)
        assert kept.expires_at is not None
        reset = client.reset_runtime(org, ws, rid)
        assert reset.status == "idle" and not reset.current_sandbox_id
    finally:
        client.delete_project(org, ws, name)
    with pytest.raises(PaddockError) as e:
        client.get_project(org, ws, name)
    assert e.value.status == 404
    with pytest.raises(PaddockError) as e:
        client.get_runtime(org, ws, rid)
    assert e.value.status == 404


def test_the_readme_example(live: Live, client: Paddock) -> None:
    # The lines of the README's "SDKs" section, as written there.
    from paddock import Paddock as P

    url, api_key, org, ws, name = live.url, live.key, live.org, live.ws, unique("demo")
    p = P(url, api_key)
    rt = p.create_project(org, ws, name)
    p.start_runtime(org, ws, rt.runtime_id)
    try:
        r = p.exec(org, ws, rt.runtime_id, ["echo", "hello"])
        assert r.stdout == b"hello\n"
    finally:
        p.delete_project(org, ws, name)
        p.close()


def test_a_project_from_a_template(live: Live, client: Paddock) -> None:
    org, ws, name = live.org, live.ws, unique("tpl")
    tpl = client.create_template(
        org, ws, name, description="small", runtime=models.RuntimeConfig(cpu_millis=SMALL.cpu_millis, memory_mb=SMALL.memory_mb, model="m-1")
    )
    assert isinstance(tpl, models.Template) and tpl.runtime.model == "m-1"
    assert client.get_template(org, ws, name).id == tpl.id
    assert any(t.name == name for t in client.list_templates(org, ws).items)
    project = client.create_project(org, ws, unique("from-tpl"), template=name, runtime=models.RuntimeConfig(model="m-2"))
    config = client.get_runtime(org, ws, project.runtime_id).config
    assert (config.cpu_millis, config.memory_mb, config.model) == (SMALL.cpu_millis, SMALL.memory_mb, "m-2")
    client.delete_project(org, ws, project.id)
    client.delete_template(org, ws, name)
    with pytest.raises(PaddockError) as e:
        client.get_template(org, ws, name)
    assert (e.value.status, e.value.code) == (404, "template_not_found")
