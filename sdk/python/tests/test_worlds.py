"""Worlds through the synchronous client against a live server: members on
one private network, reached by name, paused, resumed and deleted as one."""

from __future__ import annotations

import pytest

from conftest import SMALL, Live, unique
from paddock import Paddock, PaddockError, models


def test_a_world_lives_as_one(live: Live, client: Paddock) -> None:
    org, ws = live.org, live.ws
    members = [
        models.WorldMemberRequest(name="server", runtime=SMALL, env={"ROLE": "server"}),
        models.WorldMemberRequest(name="player", runtime=SMALL),
    ]
    w = client.create_world(org, ws, unique("world"), members)
    try:
        assert w.status == "running"
        assert [m.name for m in w.members] == ["server", "player"]
        assert all(m.sandbox is not None and m.sandbox.kind == "world" for m in w.members)

        found = client.exec_world_member(org, ws, w.id, "player", ["getent", "hosts", "server"])
        assert found.exit is not None and found.exit.code == 0, found.stderr
        assert found.stdout.split()[1:] == [b"server"], found.stdout
        role = client.exec_world_member(org, ws, w.id, "server", ["sh", "-c", "echo $ROLE"])
        assert role.stdout.strip() == b"server"

        assert client.pause_world(org, ws, w.id).status == "paused"
        with pytest.raises(PaddockError) as e:
            client.exec_world_member(org, ws, w.id, "player", ["true"])
        assert (e.value.status, e.value.code) == (409, "world_conflict")
        assert client.resume_world(org, ws, w.id).status == "running"

        assert any(x.id == w.id for x in client.list_worlds(org, ws).items)
        got = client.get_world(org, ws, w.id)
        assert got.estimated_total_credits >= got.billed_credits
    finally:
        gone = client.delete_world(org, ws, w.id)
    assert gone.status == "deleted"
    assert all(m.sandbox is not None and m.sandbox.state == "killed" for m in gone.members)


def test_world_refusals(live: Live, client: Paddock) -> None:
    with pytest.raises(PaddockError) as e:
        client.create_world(live.org, live.ws, "bad", [models.WorldMemberRequest(name="Not_A_Label")])
    assert (e.value.status, e.value.code) == (400, "invalid_world")
    with pytest.raises(PaddockError) as e:
        client.get_world(live.org, live.ws, "00000000-0000-4000-8000-000000000000")
    assert (e.value.status, e.value.code) == (404, "world_not_found")
