"""Keys, credits, sessions and prompts through the client, against a live
server."""

from __future__ import annotations

import pytest

from conftest import Live, Runtime, unique
from paddock import Paddock, PaddockError, SessionStream, models


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


def test_a_prompt_without_a_model_credential_is_refused(client: Paddock, runtime: Runtime) -> None:
    # The shared runtime has no model credential bound: the prompt is
    # refused before any harness runs, with the API's code.
    for run in (client.prompt, client.prompt_stream):
        with pytest.raises(PaddockError) as e:
            run(runtime.org, runtime.ws, runtime.id, "hello", harness="claude-code")
        assert (e.value.status, e.value.code) == (422, "harness_secret_missing")


def test_prompts_stream_and_keep_their_session(client: Paddock, agent: Runtime) -> None:
    assert client.list_sessions(agent.org, agent.ws, agent.id).items == []
    with client.prompt_stream(agent.org, agent.ws, agent.id, "list the workspace please") as s:
        assert isinstance(s, SessionStream) and s.session_id
        events = list(s)
    assert all(isinstance(ev, models.SessionEvent) for ev in events)
    assert (events[0].type, events[0].role, events[0].text) == ("message", "user", "list the workspace please")
    assert {"tool_call", "tool_result", "usage"} <= {ev.type for ev in events}
    assert events[-1].type == "done" and s.done is not None and s.done.exit_code == 0 and not s.failed
    # The next prompt continues the session; the harness resumes its conversation.
    second = client.prompt(agent.org, agent.ws, agent.id, "and now?", session_id=s.session_id)
    assert isinstance(second, models.PromptResult)
    assert "previous prompt: list the workspace please" in second.result
    assert (second.session.id, second.session.turns) == (s.session_id, 2)
    transcript = client.get_session(agent.org, agent.ws, agent.id, s.session_id)
    assert isinstance(transcript, models.SessionTranscript)
    assert len(transcript.events) == len(events) + len(second.events)
    assert [e.seq for e in transcript.events] == list(range(1, len(transcript.events) + 1))
    sessions = client.list_sessions(agent.org, agent.ws, agent.id).items
    assert [x.id for x in sessions] == [s.session_id]


def test_a_failed_turn_is_a_result_and_a_task_its_own_session(client: Paddock, agent: Runtime) -> None:
    failed = client.prompt(agent.org, agent.ws, agent.id, "please [fail]")
    assert failed.error and failed.session.status == "failed"
    with client.task_stream(agent.org, agent.ws, agent.id, "please [fail]") as s:
        events = list(s)
    assert events[-1].type == "done" and s.failed
    assert any(ev.type == "error" and ev.error is not None for ev in events)
    done = client.task(agent.org, agent.ws, agent.id, "a task")
    assert done.session.kind == "task" and done.session.status == "completed" and done.error is None
