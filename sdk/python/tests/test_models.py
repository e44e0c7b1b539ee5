"""Unit tests of the generated models (paddock/models.py): every schema of
api/openapi.yaml round-trips a sample built from the schema itself."""

from __future__ import annotations

import base64
import datetime
import os
import typing
from typing import Any, Dict

import pytest
import yaml

from paddock import PaddockError, models
from paddock._wire import Model

SPEC_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "..", "api", "openapi.yaml")

with open(SPEC_PATH, encoding="utf-8") as f:
    SPEC = yaml.safe_load(f)
SCHEMAS: Dict[str, Any] = SPEC["components"]["schemas"]

TIME = "2026-01-02T03:04:05.123456Z"
BYTES = base64.b64encode(b"sample \x00\xff").decode()


def resolve(s: Dict[str, Any]) -> Dict[str, Any]:
    return SCHEMAS[s["$ref"].rsplit("/", 1)[1]] if "$ref" in s else s


def sample(s: Dict[str, Any], depth: int = 0) -> Any:
    """A JSON value of schema s with every property set."""
    assert depth < 12, "the schemas nest too deep"
    s = resolve(s)
    if "oneOf" in s:
        return sample(s["oneOf"][-1], depth + 1)
    if "allOf" in s:
        out: Dict[str, Any] = {}
        for part in s["allOf"]:
            out.update(sample(part, depth + 1))
        return out
    return _typed(s, depth)


def _typed(s: Dict[str, Any], depth: int) -> Any:
    t = s.get("type")
    if t == "string":
        if "enum" in s:
            return s["enum"][-1]
        return {"byte": BYTES, "date-time": TIME}.get(s.get("format", ""), "text")
    if t == "integer":
        return 7
    if t == "number":
        return 1.5
    if t == "boolean":
        return True
    if t == "array":
        return [sample(s.get("items", {}), depth + 1)]
    if s.get("properties"):
        return {k: sample(v, depth + 1) for k, v in s["properties"].items()}
    if isinstance(s.get("additionalProperties"), dict):
        return {"key": sample(s["additionalProperties"], depth + 1)}
    return {"any": [1, "two"]}


OBJECTS = [n for n, s in SCHEMAS.items() if "oneOf" not in s and "enum" not in s]
ALIASES = [n for n, s in SCHEMAS.items() if "oneOf" in s or "enum" in s]


@pytest.mark.parametrize("name", OBJECTS)
def test_every_schema_round_trips(name: str) -> None:
    cls = getattr(models, name)
    assert issubclass(cls, Model)
    doc = sample(SCHEMAS[name])
    m = cls.from_dict(doc)
    assert m.to_dict() == doc
    assert cls.from_dict(m.to_dict()) == m


@pytest.mark.parametrize("name", OBJECTS)
def test_unknown_fields_are_ignored(name: str) -> None:
    cls = getattr(models, name)
    doc = sample(SCHEMAS[name])
    assert cls.from_dict({**doc, "a_field_of_a_newer_server": {"x": 1}}) == cls.from_dict(doc)


@pytest.mark.parametrize("name", [n for n in OBJECTS if SCHEMAS[n].get("required")])
def test_a_missing_required_field_is_an_error(name: str) -> None:
    cls = getattr(models, name)
    doc = sample(SCHEMAS[name])
    field = SCHEMAS[name]["required"][0]
    del doc[field]
    with pytest.raises(ValueError, match=field):
        cls.from_dict(doc)


@pytest.mark.parametrize("name", ALIASES)
def test_enums_and_unions_are_typed(name: str) -> None:
    alias = getattr(models, name)
    s = SCHEMAS[name]
    if "enum" in s:
        assert typing.get_args(alias) == tuple(s["enum"])
    else:
        assert typing.get_origin(alias) is typing.Union


def test_values_get_their_python_types() -> None:
    r = models.ExecResult.from_dict({"id": "p-1", "pid": 3, "stdout": BYTES, "stderr": "", "truncated": False, "exit": {"code": 2, "exited_at": TIME, "stdout_bytes": 8, "stderr_bytes": 0}})
    assert r.stdout == b"sample \x00\xff" and r.stderr == b""
    assert r.exit is not None and r.exit.code == 2
    assert r.exit.exited_at == datetime.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc)
    # Nanoseconds, as Go writes them, are read (cut to microseconds).
    t = models.ExitStatus.from_dict({"code": 0, "exited_at": "2026-01-02T03:04:05.123456789Z", "stdout_bytes": 0, "stderr_bytes": 0})
    assert t.exited_at.microsecond == 123456
    # A number the server wrote as an integer is still a float.
    assert isinstance(models.Runtime.from_dict(sample(SCHEMAS["Runtime"]) | {"credits_per_hour": 0}).credits_per_hour, float)


def test_network_policy_reads_both_forms() -> None:
    bare = models.RuntimeConfig.from_dict({"network": "proxy"})
    assert bare.network == "proxy"
    full = models.RuntimeConfig.from_dict({"network": {"mode": "proxy", "allow": ["pypi.org"]}})
    assert full.network == models.NetworkRules(mode="proxy", allow=["pypi.org"])
    assert full.to_dict() == {"network": {"mode": "proxy", "allow": ["pypi.org"]}}


def test_keywords_are_renamed() -> None:
    req = models.RenameRequest(from_="/a", to="/b")
    assert req.to_dict() == {"from": "/a", "to": "/b"}
    assert models.RenameRequest.from_dict({"from": "/a", "to": "/b"}) == req


def test_wrong_types_are_errors_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"Org\.name"):
        models.Org.from_dict({"id": "x", "name": 3, "created_at": TIME})
    with pytest.raises(ValueError, match=r"FileList\.items"):
        models.FileList.from_dict({"items": {}, "truncated": False})
    with pytest.raises(ValueError, match="Health"):
        models.Health.from_dict([])  # type: ignore[arg-type]


def test_optional_fields_left_none_are_left_out() -> None:
    assert models.ExecRequest(argv=["true"]).to_dict() == {"argv": ["true"]}
    assert models.ExecRequest(argv=["cat"], stdin=b"\x00").to_dict() == {"argv": ["cat"], "stdin": "AA=="}


def test_error_bodies() -> None:
    e = PaddockError.from_body(409, b'{"code":"runtime_busy","message":"busy","request_id":"r1"}')
    assert (e.status, e.code, e.message, e.request_id) == (409, "runtime_busy", "busy", "r1")
    e = PaddockError.from_body(502, b"<html>bad gateway</html>", "r2")
    assert (e.status, e.code, e.message, e.request_id) == (502, "unavailable", "Bad Gateway", "r2")
    e = PaddockError.from_body(418, b"just text")
    assert (e.code, e.message) == ("unknown", "just text")
    assert str(PaddockError(404, "not_found", "gone")) == "not_found: gone"
