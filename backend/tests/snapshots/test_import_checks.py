"""Imports of files from elsewhere, over the real app and a real MariaDB: whatever the file holds, the
answer is 201 or 422 with the reason (never a 500), nothing is stored on refusal, and what is stored
reads back, renders and zips. Variables and SQL are redacted again by this installation's rules."""

from __future__ import annotations

import copy
import io
import json
import struct
import time
import zipfile
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, TargetConfig, UserConfig
from tests.served import login, served, wait_for_points

OPERATOR_PW = "import-operator-pw"
LIMITS = {"import_max_series": 100, "import_max_points": 20_000, "import_max_string_kb": 64}
MAX_COUNT = 4


@pytest.fixture(scope="module")
def app(monitor_dsn, tmp_path_factory):
    settings = Settings(
        poll_interval_s=0.5,
        store_url=f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('imports') / 'store.db'}",
        targets=[TargetConfig(name="db1", dsn=monitor_dsn)],
        users=[UserConfig(name="op", role="operator", password_hash=hash_password(OPERATOR_PW))],
        mutations_per_minute=1000,  # this module posts a file for every case
        snapshots={
            "window_before_s": 10,
            "window_after_s": 0,
            "max_count": MAX_COUNT,
            "import_max_mb": 2,
            "redact_sql_literals": True,
            **LIMITS,
        },
    )
    with served(settings, login_as=("op", OPERATOR_PW)) as client:
        yield client


@pytest.fixture(scope="module")
def operator(app):
    return login(app, "op", OPERATOR_PW)


@pytest.fixture(scope="module")
def base(app, operator) -> dict[str, Any]:
    """A real export of this backend's capture: every case changes one thing in it."""
    wait_for_points(app, "db1", 4)  # a few polls to capture
    created = app.post("/api/targets/db1/snapshots", headers=operator)
    assert created.status_code == 201, created.text
    doc = app.get(f"/api/snapshots/{created.json()['id']}/export.json").json()
    assert app.delete(f"/api/snapshots/{created.json()['id']}", headers=operator).status_code == 204
    return doc


def body(doc: dict[str, Any], **changes: Any) -> bytes:
    return json.dumps({**doc, **changes}).encode()


def literal(doc: dict[str, Any], field: str, json_text: str) -> bytes:
    """The document with `field` (top level) spelled as raw JSON text json.dumps would not write."""
    return json.dumps({**doc, field: "@@LITERAL@@"}).replace('"@@LITERAL@@"', json_text).encode()


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def with_series(doc: dict[str, Any], series: int, points: int) -> bytes:
    t0 = doc["window"]["from"]
    return body(
        doc,
        series=[
            {"metric": "qps", "labels": {"n": str(i)}, "points": [[t0 + j, 1.0] for j in range(points)]}
            for i in range(series)
        ],
    )


def edited(doc: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> bytes:
    out = copy.deepcopy(doc)
    change(out)
    return json.dumps(out).encode()


def zipped(doc: dict[str, Any], compression: int = zipfile.ZIP_DEFLATED) -> bytearray:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        archive.writestr("x/snapshot.json", json.dumps(doc))
    return bytearray(buffer.getvalue())


def central_entry(data: bytearray) -> int:
    return data.rindex(b"PK\x01\x02")


def corrupt_deflate(doc: dict[str, Any]) -> bytes:
    data = zipped(doc)
    name_len, extra_len = struct.unpack_from("<HH", data, 26)
    start = 30 + name_len + extra_len
    data[start : start + 16] = b"\xff" * 16  # block type 3 does not exist in deflate
    return bytes(data)


def encrypted(doc: dict[str, Any]) -> bytes:
    data = zipped(doc)
    for offset in (6, central_entry(data) + 8):  # general purpose flags, local and central
        struct.pack_into("<H", data, offset, struct.unpack_from("<H", data, offset)[0] | 0x1)
    return bytes(data)


def unknown_compression(doc: dict[str, Any]) -> bytes:
    data = zipped(doc)
    for offset in (8, central_entry(data) + 10):  # compression method, local and central
        struct.pack_into("<H", data, offset, 99)
    return bytes(data)


def set_in(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[last] = value

    return change


CASES: list[tuple[str, Callable[[dict[str, Any]], bytes], str]] = [
    # Deep nesting: json.loads recursed until RecursionError (500).
    ("nested 100000 deep", lambda d: literal(d, "title", nested(100_000)), "nested too deeply"),
    (
        "nested 100 deep in extra",
        lambda d: literal(
            d,
            "variable_changes",
            "["
            + json.dumps({"at": d["moment_ts"], "variable": "x", "extra": {"v": "@@"}}).replace(
                '"@@"', nested(100)
            )
            + "]",
        ),
        "nested more than",
    ),
    # Numbers no time can be: 1e300 made the stored snapshot's archive and export fail for good.
    ("moment_ts 1e300", lambda d: body(d, moment_ts=1e300), "moment_ts: 1e+300 is not a Unix time"),
    ("moment_ts NaN", lambda d: literal(d, "moment_ts", "NaN"), "not a JSON document"),
    ("created_at Infinity", lambda d: literal(d, "created_at", "Infinity"), "not a JSON document"),
    ("moment_ts 1e400", lambda d: literal(d, "moment_ts", "1e400"), "moment_ts: inf is not a finite number"),
    ("moment_ts 'inf' as text", lambda d: body(d, moment_ts="inf"), "moment_ts: inf is not a finite number"),
    ("negative state.ts", lambda d: edited(d, set_in("state.ts", -5.0)), "state.ts: -5.0 is not a Unix time"),
    ("window backwards", lambda d: edited(d, set_in("window.from", d["window"]["to"] + 10)), "window: from"),
    (
        "point value 1e400",
        lambda d: literal(
            d,
            "series",
            '[{"metric": "qps", "labels": {}, "points": [[' + repr(d["moment_ts"]) + ", 1e400]]}]",
        ),
        "series.0.points: value inf is not a finite number",
    ),
    (
        "point time 1e300",
        lambda d: literal(d, "series", '[{"metric": "qps", "labels": {}, "points": [[1e300, 1]]}]'),
        "series.0.points: time 1e+300 is not a Unix time",
    ),
    # Wrong types and widths.
    (
        "alert_id 2**70",
        lambda d: body(d, alert_id=2**70),
        "alert_id: the number 1180591620717411303424 is out of range",
    ),
    (
        "alert_id 2**40",
        lambda d: body(d, alert_id=2**40),
        "alert_id: 1099511627776 is out of range (1 to 2147483647)",
    ),
    (
        "a count of 10**30",
        lambda d: edited(d, set_in("state.groups.0.connections", 10**30)),
        "state.groups.0.connections: the number 1000000000000000000000000000000 is out of range",
    ),
    (
        "schema_version true",
        lambda d: body(d, schema_version=True),
        "unsupported snapshot schema_version True",
    ),
    ("series not a list", lambda d: body(d, series={"qps": 1}), "does not match schema"),
    ("lone surrogate", lambda d: literal(d, "title", '"\\ud800"'), "not a JSON document"),
    # Sizes.
    (
        "a 65 KB text",
        lambda d: edited(d, set_in("server_tables.global_status.Big", "x" * 66_600)),
        "server_tables.global_status.Big: a text of 66600 characters, over the limit of 65536",
    ),
    ("101 series", lambda d: with_series(d, 101, 1), "101 series, over the limit of 100 (import_max_series)"),
    ("20001 points", lambda d: with_series(d, 3, 6667), "20001 points in all, over the limit of 20000"),
    # Archives: corrupt data (zlib.error), a password (RuntimeError), an unknown method: each a 500 before.
    ("corrupt zip entry", corrupt_deflate, "snapshot.json in the archive cannot be read"),
    ("encrypted zip entry", encrypted, "snapshot.json in the archive is encrypted"),
    ("unknown zip compression", unknown_compression, "snapshot.json in the archive cannot be read"),
]


@pytest.mark.parametrize(("make", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_file_is_refused_with_the_reason_and_nothing_is_stored(app, operator, base, make, message):
    before = app.get("/api/snapshots").json()
    response = app.post("/api/snapshots/import", content=make(base), headers=operator)
    assert response.status_code == 422, response.text
    assert message in response.json()["detail"]
    assert app.get("/api/snapshots").json() == before


def test_a_file_at_every_limit_is_stored_and_reads_back(app, operator, base):
    at_limits = json.loads(with_series(base, 100, 200))  # 100 series, 20000 points
    at_limits["server_tables"]["global_status"]["Big"] = "x" * 65536
    response = app.post("/api/snapshots/import", content=json.dumps(at_limits).encode(), headers=operator)
    assert response.status_code == 201, response.text
    snapshot_id = response.json()["id"]
    assert app.get(f"/api/snapshots/{snapshot_id}").json()["series"][99]["points"][199][1] == 1.0
    report = app.get(f"/api/snapshots/{snapshot_id}/report.html")
    assert report.status_code == 200 and "<polyline" in report.text
    archive = app.get(f"/api/snapshots/{snapshot_id}/archive")
    assert archive.status_code == 200
    assert app.post("/api/snapshots/import", content=archive.content, headers=operator).status_code == 201


def test_a_future_created_at_is_clamped_so_retention_deletes_it_in_turn(app, operator, base):
    future = time.time() + 10 * 365 * 86400
    response = app.post("/api/snapshots/import", content=body(base, created_at=future), headers=operator)
    assert response.status_code == 201, response.text
    imported = response.json()["id"]
    listed = {s["id"]: s for s in app.get("/api/snapshots").json()}
    assert listed[imported]["created_at"] <= time.time()
    for _ in range(MAX_COUNT):
        newer = app.post(
            "/api/snapshots/import", content=body(base, created_at=time.time()), headers=operator
        )
        assert newer.status_code == 201, newer.text
    assert imported not in {s["id"] for s in app.get("/api/snapshots").json()}


def test_imported_variables_and_sql_are_redacted_again(app, operator, base):
    doc = copy.deepcopy(base)
    doc["redacted_sql"] = False
    doc["state"]["variables"].update({"wsrep_sst_auth": "root:hunter2", "thread_pool_size": "4"})
    doc["server_tables"]["global_variables"].update({"my_secret_thing": "hunter2", "max_connections": "151"})
    doc["variable_changes"] = [
        {
            "at": doc["moment_ts"],
            "variable": "wsrep_sst_auth",
            "old_value": "a:hunter2",
            "new_value": "b:hunter2",
        }
    ]
    doc["state"]["sessions"] = [
        {"id": 7, "command": "Query", "info": "UPDATE t SET pw = 'hunter2' WHERE id = 42"}
    ]
    doc["server_tables"]["processlist"] = [{"id": 7, "info": "SELECT * FROM t WHERE pw = 'hunter2'"}]
    response = app.post("/api/snapshots/import", content=json.dumps(doc).encode(), headers=operator)
    assert response.status_code == 201, response.text
    stored_text = app.get(f"/api/snapshots/{response.json()['id']}").text
    assert "hunter2" not in stored_text
    stored = json.loads(stored_text)
    assert stored["state"]["variables"]["wsrep_sst_auth"] == "<redacted>"
    assert stored["state"]["variables"]["thread_pool_size"] == "4"
    assert stored["server_tables"]["global_variables"]["my_secret_thing"] == "<redacted>"
    assert stored["server_tables"]["global_variables"]["max_connections"] == "151"
    change = stored["variable_changes"][0]
    assert (change["old_value"], change["new_value"]) == ("<redacted>", "<redacted>")
    assert stored["state"]["sessions"][0]["info"] == "UPDATE t SET pw = ? WHERE id = ?"
    assert stored["server_tables"]["processlist"][0]["info"] == "SELECT * FROM t WHERE pw = ?"
    assert stored["redacted_sql"] is True


def test_every_stored_snapshot_reads_renders_and_zips(app):
    """After all the refused files above, the store holds nothing that cannot be shown."""
    listed = app.get("/api/snapshots").json()
    assert listed
    for snapshot in listed:
        for path in ("", "/export.json", "/report.html", "/archive"):
            response = app.get(f"/api/snapshots/{snapshot['id']}{path}")
            assert response.status_code == 200, (path, response.text[:200])


def test_a_request_that_is_not_a_snapshot_never_errs(app, operator):
    for junk in (
        b"[]",
        b"null",
        b"1e999",
        b'"x"',
        b'{"format": "poolscope-snapshot"}',
        b"PK",
        b"PK\x05\x06" + bytes(18),
    ):
        response = app.post("/api/snapshots/import", content=junk, headers=operator)
        assert response.status_code == 422, (junk, response.text)


def test_the_import_needs_an_operator(app):
    with httpx.Client(base_url=str(app.base_url), timeout=20) as anonymous:
        assert anonymous.post("/api/snapshots/import", content=b"{}").status_code == 401
