"""Keys, credits, sessions and prompts through the client, against a live
server."""

from __future__ import annotations

import pytest

from conftest import Live, Runtime, unique
from paddock import Paddock, PaddockError, models


def test_a_key_is_made_used_and_revoked(live: Live, client: Paddock) -> None:
    name = unique("key")
    made = client.create_key(live.org, models.CreateKeyRequest(member=live.viewer_member, name=name, role="viewer"))
    assert isinstance(made, models.CreatedKey)
    assert made.key.startswith("pdk_") and made.name == name
    assert any(k.id == made.id for k in client.list_keys(live.org).items)
    with Paddock(live.url, made.key) as holder:
        assert holder.get_workspace(live.org, live.ws).name == live.ws
        client.revoke_key(live.org, made.id)
        with pytest.raises(PaddockError) as e:
            holder.get_workspace(live.org, live.ws)
        assert e.value.status == 401


def test_credits_are_read(live: Live, client: Paddock) -> None:
    account = client.get_credits(live.org)
    assert isinstance(account, models.CreditAccount)
    assert account.available == pytest.approx(account.balance - account.held)
    with Paddock(live.url, live.viewer_key) as viewer:
        with pytest.raises(PaddockError) as e:
            viewer.get_credits(live.org)
        assert (e.value.status, e.value.code) == (403, "role_too_low")


def test_sessions_and_a_prompt_without_a_model_credential(client: Paddock, runtime: Runtime) -> None:
    sessions = client.list_sessions(runtime.org, runtime.ws, runtime.id)
    assert isinstance(sessions, models.SessionList) and sessions.items == []
    # The runtime has no model credential bound: the prompt is refused
    # before any harness runs, with the API's code.
    with pytest.raises(PaddockError) as e:
        client.prompt(runtime.org, runtime.ws, runtime.id, models.PromptRequest(prompt="hello", harness="claude-code"))
    assert (e.value.status, e.value.code) == (422, "harness_secret_missing")
    with pytest.raises(PaddockError) as e:
        client.get_session(runtime.org, runtime.ws, runtime.id, "no-such-session")
    assert e.value.status in (400, 404)
