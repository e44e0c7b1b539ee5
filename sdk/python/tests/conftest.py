"""Fixtures of the tests that drive a live paddock server.

internal/e2e/sdks/python_test.go starts the server on the real Docker
engine and runs these tests with its address and credentials in the
environment:

    PADDOCK_URL          the server
    PADDOCK_API_KEY      the installation admin's key
    PADDOCK_ORG, PADDOCK_WS  an org and a workspace made for the tests
    PADDOCK_VIEWER_KEY   a key of a viewer of them
    PADDOCK_VIEWER       that viewer (their email)
    PADDOCK_HARNESS_IMAGE  an image with the stand-in harness CLIs
    PADDOCK_HARNESS_SECRET a workspace secret giving them their (fake)
                           model credential, ANTHROPIC_API_KEY

Without PADDOCK_URL the live tests are skipped (only the model tests run),
unless PADDOCK_REQUIRE_LIVE is set.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from typing import Iterator

import pytest

from paddock import Paddock, models

# Small: the tests share two cores with everything else.
SMALL = models.RuntimeConfig(cpu_millis=500, memory_mb=256, pids_limit=128)


@dataclass
class Live:
    url: str
    key: str
    org: str
    ws: str
    viewer_key: str
    viewer_member: str
    harness_image: str
    harness_secret: str


@pytest.fixture(scope="session")
def live() -> Live:
    url = os.environ.get("PADDOCK_URL")
    if not url:
        if os.environ.get("PADDOCK_REQUIRE_LIVE"):
            pytest.fail("PADDOCK_URL is not set")
        pytest.skip("no live server (PADDOCK_URL)")
    env = os.environ
    return Live(
        url,
        env["PADDOCK_API_KEY"],
        env["PADDOCK_ORG"],
        env["PADDOCK_WS"],
        env["PADDOCK_VIEWER_KEY"],
        env["PADDOCK_VIEWER"],
        env["PADDOCK_HARNESS_IMAGE"],
        env["PADDOCK_HARNESS_SECRET"],
    )


@pytest.fixture(scope="session")
def client(live: Live) -> Iterator[Paddock]:
    with Paddock(live.url, live.key) as p:
        yield p


@dataclass
class Runtime:
    """A running runtime the tests share, in the live org and workspace."""

    org: str
    ws: str
    id: str
    project: str


@pytest.fixture(scope="session")
def runtime(live: Live, client: Paddock) -> Iterator[Runtime]:
    name = "py-" + secrets.token_hex(4)
    project = client.create_project(live.org, live.ws, name, runtime=SMALL, start=True)
    yield Runtime(live.org, live.ws, project.runtime_id, name)
    client.delete_project(live.org, live.ws, name)


@pytest.fixture(scope="module")
def agent(live: Live, client: Paddock) -> Iterator[Runtime]:
    """A running runtime whose image has the stand-in harness CLIs, with
    their model credential bound."""
    name = unique("agent")
    config = models.RuntimeConfig(
        image=live.harness_image, memory_mb=256, pids_limit=128, secrets=[live.harness_secret]
    )
    project = client.create_project(live.org, live.ws, name, runtime=config, start=True)
    yield Runtime(live.org, live.ws, project.runtime_id, name)
    client.delete_project(live.org, live.ws, name)


def unique(prefix: str) -> str:
    """A name no other test uses."""
    return f"{prefix}-{secrets.token_hex(4)}"
