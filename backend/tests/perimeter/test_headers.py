"""Security headers on every answer of a running backend: a strict Content-Security-Policy (no inline
script, no framing), nosniff, no Referer, and no-store on every /api answer, the perimeter's own
refusals included; report.html's policy forbids any script or network; /api/docs is off unless
asked for, and then served from Poolscope's own files with no inline script."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from poolscope.perimeter.headers import CSP
from tests.perimeter.helpers import VIEWER_PW, settings_for
from tests.served import login, ready_app, served

OPERATOR_PW = "headers-operator-pw"


def a_build(tmp: Path) -> Path:
    """A built UI's layout: index.html, a hashed asset, and Swagger UI's files under api-docs/."""
    (tmp / "assets").mkdir(parents=True)
    (tmp / "index.html").write_text('<!doctype html><script type="module" src="/assets/app.js"></script>')
    (tmp / "assets" / "app.js").write_text("console.log('app')")
    (tmp / "api-docs").mkdir()
    for name in ("swagger-ui-bundle.js", "swagger-ui.css", "init.js"):
        (tmp / "api-docs" / name).write_text(f"/* {name} */")
    return tmp


def assert_guarded(res: httpx.Response, where: str) -> None:
    h = res.headers
    assert h.get("x-content-type-options") == "nosniff", where
    assert h.get("referrer-policy") == "no-referrer", where
    assert h.get("x-frame-options") == "DENY", where
    policy = h.get("content-security-policy", "")
    assert "frame-ancestors 'none'" in policy, where
    script = re.search(r"script-src ([^;]*)", policy) or re.search(r"default-src ([^;]*)", policy)
    assert script is not None and "unsafe-inline" not in script.group(1), where


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("headers")
    settings = settings_for(
        tmp,
        static_dir=a_build(tmp / "ui"),
        anonymous_read=True,
        api_docs=True,
        max_body_bytes=2048,
        targets=[{"name": "db1", "dsn": "fixture://mariadb/10.11"}],
    )
    with ready_app(settings) as base:
        yield base


def test_every_answer_is_guarded_and_api_answers_are_not_stored(backend: str) -> None:
    with httpx.Client(base_url=backend, timeout=10) as c:
        answers = {
            "ui": c.get("/"),
            "deep link": c.get("/targets/db1"),
            "asset": c.get("/assets/app.js"),
            "health": c.get("/api/health"),
            "read": c.get("/api/targets"),
            "not found": c.get("/api/nope"),
            "refused change": c.post("/api/alerts/silences", json={"target": "db1", "duration_s": 60}),
            "validation": c.post("/api/auth/login", json={}),
            "body limit": c.post("/api/auth/login", content=b"x" * 4096),
            "foreign host": c.get("/api/targets", headers={"Host": "evil.example"}),
            "metrics": c.get("/metrics"),
            "probe": c.get("/healthz"),
            "docs": c.get("/api/docs"),
        }
        with c.stream("GET", "/api/live") as live:
            answers["live"] = live
        for where, res in answers.items():
            assert_guarded(res, where)
            api = res.request.url.path.startswith("/api")
            assert (res.headers.get("cache-control") == "no-store") == api, (where, res.headers)
        assert answers["ui"].headers["content-security-policy"] == CSP
        assert [answers[k].status_code for k in ("body limit", "foreign host", "live")] == [413, 400, 200]


def test_report_html_may_run_no_script_nor_reach_the_network(tmp_path: Path, monitor_dsn: str) -> None:
    from poolscope.auth.passwords import hash_password
    from poolscope.config import UserConfig

    settings = settings_for(
        tmp_path,
        users=[UserConfig(name="op", role="operator", password_hash=hash_password(OPERATOR_PW))],
        targets=[{"name": "db1", "dsn": monitor_dsn}],
    )
    with served(settings, login_as=("op", OPERATOR_PW)) as app:
        created = app.post("/api/targets/db1/snapshots", json={"title": "headers"})
        assert created.status_code == 201, created.text
        report = app.get(f"/api/snapshots/{created.json()['id']}/report.html")
    assert report.status_code == 200
    assert_guarded(report, "report")
    header = report.headers["content-security-policy"]
    assert header.startswith("default-src 'none';") and "script-src" not in header
    assert report.headers["cache-control"] == "no-store"
    # The same policy travels in the file, for when it is opened from disk.
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', report.text)
    assert meta is not None and meta.group(1) in header and "<script" not in report.text


def test_api_docs_are_off_unless_asked_for(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, static_dir=a_build(tmp_path / "ui"))
    with ready_app(settings) as base:
        for path in ("/api/docs", "/api/docs/swagger-ui-bundle.js"):
            assert httpx.get(f"{base}{path}", timeout=10).status_code in (401, 404), path


def test_api_docs_are_poolscopes_own_files_with_no_inline_script(backend: str) -> None:
    page = httpx.get(f"{backend}/api/docs", timeout=10)
    assert page.status_code == 200
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page.text, flags=re.S)
    assert scripts and all(body.strip() == "" for _, body in scripts)
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources and all(s.startswith("/api/docs/") for s in sources), sources
    for source in sources:
        assert httpx.get(f"{backend}{source}", timeout=10).status_code == 200, source
    assert httpx.get(f"{backend}/api/docs/index.html", timeout=10).status_code == 404
    assert httpx.get(f"{backend}/api/docs/..%2Fassets%2Fapp.js", timeout=10).status_code == 404


def test_docs_are_public_but_the_data_they_describe_needs_a_login(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, static_dir=a_build(tmp_path / "ui"), api_docs=True)
    with ready_app(settings) as base, httpx.Client(base_url=base, timeout=10) as c:
        for path in ("/api/docs", "/api/docs/init.js", "/api/openapi.json"):
            assert c.get(path).status_code == 200, path
        assert c.get("/api/targets").status_code == 401
        login(c, "vi", VIEWER_PW)
        assert c.get("/api/targets").status_code == 200
