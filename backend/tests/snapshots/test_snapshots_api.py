"""Snapshots over the real app and a real MariaDB: capture needs an operator, the document and the
archive carry no credential, an export imports back, bad imports change nothing, retention holds;
and /metrics is valid Prometheus exposition with the per-group metrics."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import httpx
import pytest

from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, TargetConfig, UserConfig
from poolscope.snapshots.document import SnapshotDocument, json_schema
from poolscope_dev.sandbox import MONITOR_PASSWORD
from tests.served import login, served, wait_for_points
from tests.waiting import wait_for

OPERATOR_PW = "snap-operator-pw"
VIEWER_PW = "snap-viewer-pw"
SCHEMA_FILE = Path(__file__).resolve().parents[3] / "docs" / "reference" / "snapshot.schema.json"


@pytest.fixture(scope="module")
def app(monitor_dsn, tmp_path_factory):
    settings = Settings(
        poll_interval_s=0.5,
        store_url=f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('snap') / 'store.db'}",
        targets=[TargetConfig(name="db1", dsn=monitor_dsn)],
        users=[
            UserConfig(name="op", role="operator", password_hash=hash_password(OPERATOR_PW)),
            UserConfig(name="vi", role="viewer", password_hash=hash_password(VIEWER_PW)),
        ],
        snapshots={"window_before_s": 20, "window_after_s": 1, "max_count": 3, "import_max_mb": 1},
    )
    with served(settings, login_as=("vi", VIEWER_PW)) as client:
        yield client


@pytest.fixture(scope="module")
def operator(app):
    """The operator's header; `app` itself stays logged in as the viewer."""
    with httpx.Client(base_url=str(app.base_url), timeout=20) as other:
        return login(other, "op", OPERATOR_PW)


@pytest.fixture(scope="module")
def captured(app, operator):
    wait_for_points(app, "db1", 8)  # a few seconds of polls: the window before the moment has history
    response = app.post("/api/targets/db1/snapshots", json={"title": "on demand"}, headers=operator)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def test_capture_needs_an_operator_session(app, operator):
    with httpx.Client(base_url=str(app.base_url), timeout=20) as anonymous:
        assert anonymous.post("/api/targets/db1/snapshots").status_code == 401
        assert anonymous.get("/api/snapshots").status_code == 401
        viewer = login(anonymous, "vi", VIEWER_PW)
        refused = anonymous.post("/api/targets/db1/snapshots", headers=viewer)
        assert refused.status_code == 403 and "operator" in refused.json()["detail"]
        assert anonymous.get("/api/snapshots").status_code == 200
    # The operator's token where a browser would send it by itself (a cookie) is not a session.
    token = operator["Authorization"].removeprefix("Bearer ")
    with httpx.Client(base_url=str(app.base_url), timeout=20, cookies={"poolscope_session": token}) as jar:
        assert jar.post("/api/targets/db1/snapshots").status_code == 401


def test_unknown_target_is_404(app, operator):
    assert app.post("/api/targets/nope/snapshots", headers=operator).status_code == 404


def test_manual_snapshot_holds_the_moment_and_no_credential(app, captured):
    listed = {s["id"]: s for s in app.get("/api/snapshots").json()}
    assert listed[captured]["trigger"] == "manual" and listed[captured]["title"] == "on demand"
    text = app.get(f"/api/snapshots/{captured}").text
    doc = SnapshotDocument.model_validate_json(text)
    assert doc.format == "poolscope-snapshot" and doc.schema_version == 1
    assert {g.group_id for g in doc.state.groups} == {0, 1}
    tables = doc.server_tables
    assert tables.errors == {}
    assert (
        len(tables.thread_pool_groups) == 2
        and tables.thread_pool_stats
        and len(tables.thread_pool_waits) == 12
    )
    assert tables.processlist and "Uptime" in tables.global_status
    assert tables.global_variables["thread_handling"] == "pool-of-threads"
    assert doc.target_info.server and doc.target_info.server.flavor == "mariadb"
    assert any(s.metric == "tp_group_queue_length" for s in doc.series)
    assert MONITOR_PASSWORD not in text and OPERATOR_PW not in text
    assert "poolscope_monitor:" not in text  # no DSN


def test_window_completes_after_it_closes(app, captured):
    doc = wait_for(
        lambda: app.get(f"/api/snapshots/{captured}").json(),
        20,
        "window never completed",
        until=lambda d: d["window"]["complete"],
    )
    assert doc["window"]["to"] - doc["window"]["from"] == pytest.approx(21)
    assert {s["status"] for s in app.get("/api/snapshots").json() if s["id"] == captured} == {"complete"}


def test_archive_has_json_schema_and_an_offline_report(app, captured):
    response = app.get(f"/api/snapshots/{captured}/archive")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/zip"
    assert re.search(
        r'filename="poolscope-snapshot-db1-\d{8}T\d{6}Z-\d+\.zip"', response.headers["content-disposition"]
    )
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = {n.split("/", 1)[1]: n for n in archive.namelist()}
        assert set(names) == {"snapshot.json", "report.html", "snapshot.schema.json"}
        document = archive.read(names["snapshot.json"]).decode()
        report = archive.read(names["report.html"]).decode()
        schema = json.loads(archive.read(names["snapshot.schema.json"]))
    SnapshotDocument.model_validate_json(document)
    assert schema == json_schema()
    assert report.count("<svg") >= 9 and "<polyline" in report
    # Self-contained: nothing fetched from anywhere.
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", report)
    assert "<script src" not in report and "<link" not in report
    for secret in (MONITOR_PASSWORD, OPERATOR_PW):
        assert secret not in document and secret not in report


def test_the_report_reads_in_the_zone_and_theme_the_ui_asked_for(app, captured):
    default = app.get(f"/api/snapshots/{captured}/report.html").text
    assert " UTC" in default and 'id="theme-system" checked' in default
    asked = app.get(
        f"/api/snapshots/{captured}/report.html",
        params={"tz_offset_min": 330, "tz_name": "GMT+5:30", "theme": "dark"},
    )
    assert asked.status_code == 200
    assert " GMT+5:30" in asked.text and 'id="theme-dark" checked' in asked.text
    zipped = app.get(f"/api/snapshots/{captured}/archive", params={"tz_name": "CET", "tz_offset_min": 60})
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
        report = archive.read(next(n for n in archive.namelist() if n.endswith("report.html"))).decode()
    assert " CET" in report
    for bad in ({"tz_name": "<script>"}, {"tz_offset_min": 5000}, {"theme": "pink"}):
        refused = app.get(f"/api/snapshots/{captured}/report.html", params=bad)
        assert refused.status_code == 422, bad
        assert "<script>" not in refused.text


def test_published_schema_file_is_current():
    assert json.loads(SCHEMA_FILE.read_text()) == json_schema(), "run: make reference"


def test_export_imports_back(app, operator, captured):
    exported = app.get(f"/api/snapshots/{captured}/export.json")
    assert "attachment" in exported.headers["content-disposition"]
    response = app.post("/api/snapshots/import", content=exported.content, headers=operator)
    assert response.status_code == 201, response.text
    imported = app.get(f"/api/snapshots/{response.json()['id']}").json()
    assert imported["trigger"] == "import"
    assert imported["state"] == json.loads(exported.text)["state"]
    archive = app.get(f"/api/snapshots/{captured}/archive").content
    from_zip = app.post("/api/snapshots/import", content=archive, headers=operator)
    assert from_zip.status_code == 201, from_zip.text


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"{not json", 422, "not a JSON document"),
        (b'{"hello": 1}', 422, "not a Poolscope snapshot"),
        (
            b'{"format": "poolscope-snapshot", "schema_version": 99}',
            422,
            "unsupported snapshot schema_version 99",
        ),
        (
            b'{"format": "poolscope-snapshot", "schema_version": 1, "target": "x"}',
            422,
            "does not match schema",
        ),
        (b"PK\x03\x04 not really a zip", 422, "not a valid zip archive"),
        (b"", 422, "empty request"),
        (b"\xff\xfe\x00garbage", 422, "not a JSON document or a zip archive"),
        (b"{" + b" " * (1024 * 1024 + 10) + b"}", 413, "over the limit"),
    ],
)
def test_bad_imports_are_refused_clearly_and_store_nothing(app, operator, body, status, message):
    before = app.get("/api/snapshots").json()
    response = app.post("/api/snapshots/import", content=body, headers=operator)
    assert response.status_code == status, response.text
    assert message in response.json()["detail"]
    assert app.get("/api/snapshots").json() == before


def test_zip_without_a_snapshot_is_refused(app, operator):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", "hello")
    response = app.post("/api/snapshots/import", content=buffer.getvalue(), headers=operator)
    assert response.status_code == 422 and "no snapshot.json" in response.json()["detail"]


def test_retention_keeps_the_newest_max_count(app, operator):
    ids = []
    for _ in range(4):
        response = app.post("/api/targets/db1/snapshots", headers=operator)
        assert response.status_code == 201
        ids.append(response.json()["id"])
    listed = [s["id"] for s in app.get("/api/snapshots").json()]
    assert listed == sorted(ids[-3:], reverse=True)
    assert app.get(f"/api/snapshots/{ids[0]}").status_code == 404


def test_delete_needs_an_operator(app, operator):
    newest = app.get("/api/snapshots").json()[0]["id"]
    assert app.delete(f"/api/snapshots/{newest}").status_code == 403  # app is the viewer
    assert app.delete(f"/api/snapshots/{newest}", headers=operator).status_code == 204
    assert app.delete(f"/api/snapshots/{newest}", headers=operator).status_code == 404


def test_prometheus_metrics(app):
    response = app.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = response.text
    samples = {}
    for line in text.splitlines():
        if line.startswith("#"):
            assert re.fullmatch(r"# (HELP|TYPE) poolscope_\w+ .+", line), line
            continue
        match = re.fullmatch(
            r'(poolscope_\w+)(\{(?:\w+="[^"]*",?)*\})? (-?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?|NaN|[+-]Inf)',
            line,
        )
        assert match, f"not exposition format: {line!r}"
        samples[match.group(1) + (match.group(2) or "")] = float(match.group(3))
    assert samples['poolscope_target_up{target="db1"}'] == 1
    assert samples['poolscope_tp_group_queue_length{target="db1",group="0"}'] >= 0
    assert 'poolscope_tp_group_stalled{target="db1",group="1"}' in samples
    assert samples['poolscope_poll_duration_seconds{target="db1"}'] > 0
    assert samples['poolscope_collector_success{target="db1",collector="thread_pool_groups"}'] == 1
    assert (
        samples['poolscope_alerts{target="db1",rule="group_stalled",severity="critical",state="firing"}'] == 0
    )
    assert samples["poolscope_alert_evaluations_total"] > 0
    assert MONITOR_PASSWORD not in text
