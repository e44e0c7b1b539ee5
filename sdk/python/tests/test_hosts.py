"""Hosts through the client, against a live server. The server has no
machine to register (the Go tests register real ones): these check each
operation's route through its answers, and the refusals of a
registration."""

from __future__ import annotations

import pytest

from conftest import Live
from paddock import Paddock, PaddockError, models


def _req(host_key: str) -> models.AddHostRequest:
    return models.AddHostRequest(
        name="py-sdk-box", address="127.0.0.1:1", user="root", private_key="not a key", host_key=host_key
    )


def test_hosts_are_listed_and_a_missing_one_is_not_found(live: Live, client: Paddock) -> None:
    hosts = client.list_hosts(live.org, limit=10)
    assert isinstance(hosts, models.HostList)
    assert all(h.name != "py-sdk-box" for h in hosts.items)
    for op in (client.get_host, client.remove_host):
        with pytest.raises(PaddockError) as e:
            op(live.org, "py-sdk-box")
        assert (e.value.status, e.value.code) == (404, "host_not_found")


def test_a_registration_is_refused(live: Live, client: Paddock) -> None:
    with pytest.raises(PaddockError) as e:
        client.add_host(live.org, _req(""))
    assert (e.value.status, e.value.code) == (400, "host_key_required")
    with pytest.raises(PaddockError) as e:
        client.add_host(live.org, _req("ssh-ed25519 AAAA"))
    assert (e.value.status, e.value.code) == (400, "invalid_host_private_key")
    with Paddock(live.url, live.viewer_key) as viewer:
        with pytest.raises(PaddockError) as e:
            viewer.add_host(live.org, _req("ssh-ed25519 AAAA"))
        assert (e.value.status, e.value.code) == (403, "role_too_low")
