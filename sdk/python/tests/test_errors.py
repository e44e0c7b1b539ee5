"""Refusals as PaddockError(status, code, message), from a live server:
not found, a bad credential, a viewer's writes."""

from __future__ import annotations

import pytest

from conftest import Live, Runtime
from paddock import Paddock, PaddockError


def test_not_found(client: Paddock, live: Live) -> None:
    with pytest.raises(PaddockError) as e:
        client.get_project(live.org, live.ws, "no-such-project")
    assert e.value.status == 404 and e.value.code and e.value.message
    # Another org, which the caller may not see or that does not exist: 404 alike.
    with pytest.raises(PaddockError) as e:
        client.get_workspace("no-such-org", live.ws)
    assert e.value.status == 404


def test_a_refused_credential_is_401(live: Live) -> None:
    with Paddock(live.url, "pdk_" + "0" * 48) as bad:
        with pytest.raises(PaddockError) as e:
            bad.me()
    assert e.value.status == 401 and e.value.code


def test_a_viewer_reads_but_may_not_write(live: Live, runtime: Runtime) -> None:
    with Paddock(live.url, live.viewer_key) as viewer:
        assert viewer.get_runtime(runtime.org, runtime.ws, runtime.id).id == runtime.id
        attempts = [
            lambda: viewer.create_project(runtime.org, runtime.ws, "viewer-made"),
            lambda: viewer.exec(runtime.org, runtime.ws, runtime.id, ["true"]),
            lambda: viewer.write_file(runtime.org, runtime.ws, runtime.id, "/tmp/viewer", "x"),
            lambda: viewer.pause_runtime(runtime.org, runtime.ws, runtime.id),
        ]
        for attempt in attempts:
            with pytest.raises(PaddockError) as e:
                attempt()
            assert (e.value.status, e.value.code) == (403, "role_too_low")
    with pytest.raises(PaddockError) as e:
        Paddock(live.url, live.key).get_project(runtime.org, runtime.ws, "viewer-made")
    assert e.value.status == 404


def test_names_cannot_change_the_route(client: Paddock, live: Live) -> None:
    with pytest.raises(ValueError):
        client.get_project(live.org, live.ws, "..")
    with pytest.raises(PaddockError) as e:
        client.get_project(live.org, live.ws, "a/../../b")
    assert e.value.status in (400, 404)
