"""No answer echoes what a request sent: malformed bodies carrying a marker go to every operation of the
OpenAPI document of a running backend (users configured, a real MariaDB target with its admin
credential), as the operator and as nobody, and the marker never comes back, in a body or a header.

FastAPI's default 422 puts the whole body in `detail[].input`: a login's password included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, TargetConfig, UserConfig
from tests.served import login, ready_app

MARKER = "QzEchoMarker7"
OPERATOR_PW = "echo-operator-pw"
# The live channel is a stream that does not end; it takes no body (tests/api/test_live_channel.py).
SKIP = {"/api/live"}


@pytest.fixture(scope="module")
def backend(monitor_dsn: str, admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings(
        store_url=f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('echo') / 'store.db'}",
        users=[UserConfig(name="op", role="operator", password_hash=hash_password(OPERATOR_PW))],
        targets=[TargetConfig(name="db1", dsn=monitor_dsn, admin_dsn=admin_dsn)],
    )
    with ready_app(settings) as base:
        yield base


def _resolve(schema: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return _resolve(doc["components"]["schemas"][ref.rsplit("/", 1)[1]], doc) if ref else schema


TYPED: dict[str, Any] = {"integer": 60, "number": 60, "boolean": False}


def _type(field: dict[str, Any], doc: dict[str, Any]) -> str:
    """A property's JSON type, through a $ref or the first non-null branch of an anyOf."""
    field = _resolve(field, doc)
    for branch in field.get("anyOf", []):
        if branch.get("type") != "null":
            return _type(branch, doc)
    return str(field.get("type", "string"))


def bodies(operation: dict[str, Any], doc: dict[str, Any]) -> list[tuple[str, bytes]]:
    """(content type, body) pairs, each malformed a different way, each carrying the marker."""
    content = operation.get("requestBody", {}).get("content", {})
    schema = _resolve(content.get("application/json", {}).get("schema", {}), doc)
    properties = schema.get("properties", {}) or {"username": {}, "password": {}}
    wrong_types = {name: {MARKER: [MARKER]} for name in properties}
    as_text = {name: f"{MARKER}-{name}" for name in properties}
    # Well typed, so the route's own checks (not the model's) meet the marker in every string.
    typed = {name: TYPED.get(_type(field, doc), f"{MARKER}-{name}") for name, field in properties.items()}
    return [
        ("application/json", json.dumps({**wrong_types, f"{MARKER}-unknown": MARKER}).encode()),
        ("application/json", json.dumps(as_text).encode()),
        ("application/json", json.dumps(typed).encode()),
        ("application/json", json.dumps([MARKER, {"password": MARKER}]).encode()),
        ("application/json", f'{{"password": "{MARKER}'.encode()),  # cut short: not JSON
        ("application/x-www-form-urlencoded", f"username=op&password={MARKER}".encode()),
        ("text/plain", f"user=operator password={MARKER}".encode()),
        ("application/octet-stream", f"PK\x03\x04{MARKER}".encode()),
    ]


def concrete(path: str) -> str:
    values = {"name": "db1", "snapshot_id": "1", "change_id": "1", "alert_id": "1", "silence_id": "1"}
    for key, value in values.items():
        path = path.replace(f"{{{key}}}", value)
    return path


def test_no_answer_echoes_a_malformed_body(backend: str) -> None:
    with (
        httpx.Client(base_url=backend, timeout=30) as op,
        httpx.Client(base_url=backend, timeout=30) as nobody,
    ):
        login(op, "op", OPERATOR_PW)
        doc = op.get("/api/openapi.json").json()
        sent, echoed, validation = 0, [], 0
        for path, operations in doc["paths"].items():
            if path in SKIP:
                continue
            for method, operation in operations.items():
                if path == "/api/auth/logout":
                    continue  # would end the operator's session; it reads no body anyway
                for content_type, body in bodies(operation, doc):
                    for client in (op, nobody):
                        res = client.request(
                            method.upper(),
                            concrete(path),
                            content=body,
                            headers={"Content-Type": content_type},
                        )
                        sent += 1
                        validation += res.status_code == 422 and isinstance(res.json().get("detail"), list)
                        seen = res.text + json.dumps(dict(res.headers))
                        if MARKER in seen:
                            echoed.append(
                                f"{method.upper()} {path} [{content_type}] -> {res.status_code}: {seen[:300]}"
                            )
        assert sent > 200 and validation > 20, (sent, validation)
        assert not echoed, "\n".join(echoed[:30])


def test_a_malformed_login_names_the_fields_not_the_password(backend: str) -> None:
    secret = "MySecret123"
    for kwargs in (
        {"json": {"user": "operator", "password": secret}},
        {"data": {"user": "operator", "password": secret}},
        {"json": {"username": ["x"], "password": secret, secret: secret}},
    ):
        res = httpx.post(f"{backend}/api/auth/login", timeout=30, **kwargs)  # type: ignore[arg-type]
        assert res.status_code == 422, res.text
        assert secret not in res.text
        for problem in res.json()["detail"]:
            assert set(problem) == {"loc", "msg", "type"}
            assert problem["loc"][0] == "body"
    missing = httpx.post(f"{backend}/api/auth/login", json={"user": "operator"}, timeout=30).json()["detail"]
    assert {"loc": ["body", "username"], "msg": "Field required", "type": "missing"} in missing
    unknown = httpx.post(f"{backend}/api/auth/login", json={"username": 1, "password": "x"}, timeout=30)
    assert unknown.json()["detail"] == [
        {"loc": ["body", "username"], "msg": "Input should be a valid string", "type": "string_type"}
    ]
