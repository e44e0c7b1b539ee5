"""Snapshots through the synchronous client against a live server: take,
list, get, restore into a new project and into the same runtime, delete."""

from __future__ import annotations

import pytest

from conftest import SMALL, Live, unique
from paddock import Paddock, PaddockError, models


def test_a_snapshot_is_taken_restored_and_deleted(live: Live, client: Paddock) -> None:
    org, ws = live.org, live.ws
    name, copy = unique("snap"), unique("snap-copy")
    rid = client.create_project(org, ws, name, runtime=SMALL, start=True).runtime_id
    try:
        client.write_file(org, ws, rid, "/workspace/notes/a.txt", b"before")
        snap = client.create_snapshot(org, ws, rid, name="first")
        assert isinstance(snap, models.Snapshot)
        assert (snap.name, snap.runtime_id) == ("first", rid) and snap.size_bytes > 0
        with pytest.raises(PaddockError) as e:
            client.create_snapshot(org, ws, rid, name="first")
        assert (e.value.status, e.value.code) == (409, "snapshot_exists")
        assert [s.id for s in client.list_runtime_snapshots(org, ws, rid).items] == [snap.id]
        assert any(s.id == snap.id for s in client.list_snapshots(org, ws).items)
        assert client.get_snapshot(org, ws, snap.id).name == "first"

        res = client.restore_snapshot(org, ws, snap.id, project_name=copy)
        assert isinstance(res, models.RestoreSnapshotResult)
        assert res.project is not None and res.project.name == copy and res.runtime.status == "running"
        assert client.read_text(org, ws, res.runtime.id, "/workspace/notes/a.txt") == "before"
        client.delete_project(org, ws, copy)

        client.write_file(org, ws, rid, "/workspace/notes/a.txt", b"after")
        back = client.restore_snapshot(org, ws, snap.id, runtime_id=rid)
        assert back.project is None and back.runtime.id == rid
        assert client.read_text(org, ws, rid, "/workspace/notes/a.txt") == "before"

        client.delete_snapshot(org, ws, snap.id)
        with pytest.raises(PaddockError) as e:
            client.get_snapshot(org, ws, snap.id)
        assert (e.value.status, e.value.code) == (404, "snapshot_not_found")
    finally:
        for p in (copy, name):
            try:
                client.delete_project(org, ws, p)
            except PaddockError as e:
                if e.status != 404:
                    raise
