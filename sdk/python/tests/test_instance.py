"""Instance mode: the server these tests run against is started with
--instance pysdk-instance/main/svc and serves that runtime's operations
under /api/sandbox; each acts on the runtime its own routes show."""

from __future__ import annotations

import pytest

from paddock import Paddock, PaddockError, models

ORG, WS = "pysdk-instance", "main"


def test_instance_operations_act_on_the_configured_runtime(client: Paddock) -> None:
    rt = client.get_instance()
    assert client.get_project(ORG, WS, "svc").runtime_id == rt.id
    client.configure_runtime(ORG, WS, rt.id, models.RuntimePatch(cpu_millis=500, memory_mb=256, pids_limit=128))

    with pytest.raises(PaddockError) as e:
        client.bind_instance_secret("nope")
    assert (e.value.status, e.value.code) == (404, "secret_not_found")
    assert client.bind_instance_secret("svc-token").runtime.config.secrets == ["svc-token"]
    assert client.list_runtime_secrets(ORG, WS, rt.id).secrets == ["svc-token"]

    assert client.start_instance().status == "running"
    out = client.instance_exec(["sh", "-c", 'echo "$SVC_TOKEN"'])
    assert out.stdout == b"instance-secret\n"
    assert client.stop_instance().status == "paused"
    assert client.get_runtime(ORG, WS, rt.id).status == "paused"
    assert client.resume_instance().status == "running"

    snap = client.snapshot_instance(name="py-instance-1")
    assert snap.runtime_id == rt.id
    assert [s.id for s in client.list_instance_snapshots().items] == [snap.id]

    assert client.set_instance_port_public(8080, True).public
    assert any(p.port == 8080 and p.public for p in client.list_instance_ports().items)

    client.unbind_instance_secret("svc-token")
    assert client.list_instance_secrets().secrets == []
    with pytest.raises(PaddockError) as e:
        client.unbind_instance_secret("svc-token")
    assert (e.value.status, e.value.code) == (404, "secret_not_bound")
    client.reset_runtime(ORG, WS, rt.id)
