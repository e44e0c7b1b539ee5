"""Template builds against the live server: a Dockerfile's image built on
its engine, the template made with it, the builds listed, and a failing
step and a missing base refused with their codes."""

from __future__ import annotations

import asyncio
import io
import tarfile

import pytest

from conftest import Live, unique
from paddock import AsyncPaddock, Paddock, PaddockError


def context(files: dict) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_build_template(live: Live, client: Paddock) -> None:
    name = unique("pybuild")
    dockerfile = f"FROM {live.harness_image}\nCOPY note.txt /opt/note.txt\nRUN echo from-python > /opt/run.txt\n"
    done = client.build_template(live.org, live.ws, name, context({"Dockerfile": dockerfile, "note.txt": "n"}))
    assert done.event == "done"
    assert done.build is not None and done.template is not None
    assert done.build.state == "succeeded" and done.build.size_bytes > 0
    assert done.template.runtime.image == done.build.image
    assert done.build.image.startswith("paddock-org/")
    builds = client.list_template_builds(live.org, live.ws, template=name)
    assert [b.id for b in builds.items] == [done.build.id]
    got = client.get_template_build(live.org, live.ws, done.build.id)
    assert got.state == "succeeded" and "from-python" in got.log_tail
    client.delete_template(live.org, live.ws, name)


def test_build_template_refusals(live: Live, client: Paddock) -> None:
    name = unique("pybad")
    with pytest.raises(PaddockError) as e:
        client.build_template(
            live.org, live.ws, name, context({"d/Build": f"FROM {live.harness_image}\nRUN exit 4\n"}), dockerfile="d/Build"
        )
    assert e.value.code == "build_step_failed" and e.value.status == 400
    failed = client.list_template_builds(live.org, live.ws, template=name).items
    assert [b.state for b in failed] == ["failed"]
    with pytest.raises(PaddockError) as e:
        client.build_template(live.org, live.ws, name, context({"Dockerfile": "FROM paddock/not-here:1\n"}))
    assert e.value.code == "base_image_not_found" and e.value.status == 400


def test_build_template_async(live: Live) -> None:
    async def run() -> None:
        async with AsyncPaddock(live.url, live.key) as p:
            name = unique("pyasync")
            done = await p.build_template(live.org, live.ws, name, context({"Dockerfile": f"FROM {live.harness_image}\n"}))
            assert done.build is not None and done.build.state == "succeeded"
            await p.delete_template(live.org, live.ws, name)

    asyncio.run(run())
