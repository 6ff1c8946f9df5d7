"""DSN fuzz on a running backend: no password, in whatever DSN shape, reaches any answer, event, alert or log.

A real uvicorn with users, a real MariaDB with accounts whose passwords hold `/ ? # @ % :` and
non-latin-1 characters, targets with those DSNs well formed and mistyped, a good and a bad
admin_dsn, DSNs whose ':' was typed as '@' (the password becomes part of the user name, which the
server's "Access denied for user ..." quotes), a webhook receiver and an Alertmanager on loopback,
a snapshot, the CLI's `check`. Every GET route of the
OpenAPI document (as operator, viewer and anonymous), the live channel, /metrics, the webhook
bodies, the snapshot exports, every log line (DEBUG) and the CLI output are searched for the
passwords' markers (echo_support.Secret).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, TargetConfig, UserConfig
from poolscope_dev.sandbox import MariaDBSandbox, free_port
from tests.alerts.support import Receiver
from tests.served import login, uvicorn_app
from tests.waiting import wait_for

from .echo_support import Answer, LiveReader, LogRecorder, Secret, Walker, leaks, readable

MON, ADM, FLAKY = Secret("Mon"), Secret("Adm"), Secret("Flk")  # real accounts
OTHERS = [
    Secret(t) for t in ("Wrg", "Ms1", "Ms2", "Ms3", "Ms4", "Ms5", "Esc", "Opt", "Cls", "Bad", "Ats", "Ata")
]
SECRETS = [MON, ADM, FLAKY, *OTHERS]
WEBHOOK_TOKEN, WEBHOOK_QUERY_TOKEN = "QzHookPathTok", "QzHookQueryTok"
MARKERS = [m for s in SECRETS for m in s.markers] + [WEBHOOK_TOKEN, WEBHOOK_QUERY_TOKEN]
OPERATOR_PW, VIEWER_PW = "op-echo-pw", "vi-echo-pw"
ACCOUNTS = {
    "fz_mon": (MON, "PROCESS"),
    "fz_flaky": (FLAKY, "PROCESS"),
    "fz_adm": (ADM, "SUPER, CONNECTION ADMIN"),
}


def targets(port: int) -> dict[str, dict[str, str]]:
    """Target name -> its settings; 'good' and 'flaky' connect, every other one fails its own way."""
    at = f"127.0.0.1:{port}/"
    o = {s.tag: s.password for s in OTHERS}
    return {
        "good": {
            "dsn": f"mysql://fz_mon:{MON.password}@{at}",
            "admin_dsn": f"mariadb://fz_adm:{ADM.password}@{at}",
        },
        "flaky": {"dsn": f"mysql://fz_flaky:{FLAKY.password}@{at}", "extra_port": "0"},
        "envpw": {"dsn": f"mysql://fz_mon@{at}", "password_env": "FZ_ECHO_PW"},
        "wrongpw": {"dsn": f"mysql://fz_mon:{o['Wrg']}@{at}"},
        "ms1": {"dsn": f"mysql//fz_mon:{o['Ms1']}@{at}"},
        "ms2": {"dsn": f"mysql:/fz_mon:{o['Ms2']}@{at}"},
        "ms3": {"dsn": f"fz_mon:{o['Ms3']}@{at}"},
        "ms4": {"dsn": f"mysql://fz_mon:{o['Ms4']}"},
        "ms5": {"dsn": f"mysq1://fz_mon:{o['Ms5']}@{at}"},
        "esc": {"dsn": f"mysql://fz_mon:{o['Esc']}%FF@{at}"},
        "opt": {"dsn": f"mysql://fz_mon:{o['Opt']}@{at}?ssl-mode=REQUIRED"},
        "closed": {"dsn": f"mysql://fz_mon:{o['Cls']}@127.0.0.1:{free_port()}/"},
        "badadmin": {
            "dsn": f"mysql://fz_mon:{MON.password}@{at}",
            "admin_dsn": f"mysql//fz_adm:{o['Bad']}@{at}",
        },
        # '@' typed for ':': the DSN parses, and the server is sent the user "fz_mon@<password>".
        "atsep": {"dsn": f"mysql://fz_mon@{o['Ats']}@{at}"},
        "atadmin": {
            "dsn": f"mysql://fz_mon:{MON.password}@{at}",
            "admin_dsn": f"mysql://fz_adm@{o['Ata']}@{at}",
        },
    }


@dataclass
class Transcript:
    """Everything the backend said during the scenario, by where it said it."""

    answers: list[Answer] = field(default_factory=list)
    live: list[str] = field(default_factory=list)
    webhooks: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    cli: str = ""
    reasons: dict[str, str] = field(default_factory=dict)
    missed: list[str] = field(default_factory=list)  # steps of the scenario that did not happen

    def settle(self, condition: Callable[[], object], timeout_s: float, step: str) -> bool:
        """Wait (bounded) for a step; a step that never happens is noted, the leak checks still run."""
        try:
            wait_for(condition, timeout_s, step)
            return True
        except AssertionError:
            self.missed.append(step)
            return False


def _sql(sandbox: MariaDBSandbox, *statements: tuple[str, tuple[object, ...]]) -> None:
    conn = sandbox.admin_connect()
    try:
        with conn.cursor() as cur:
            for sql, args in statements:
                cur.execute(sql, args)
    finally:
        conn.close()


@pytest.fixture(scope="module")
def accounts(mariadb: MariaDBSandbox) -> Iterator[None]:
    for user, (secret, grants) in ACCOUNTS.items():
        for host in ("127.0.0.1", "localhost"):
            _sql(
                mariadb,
                ("DROP USER IF EXISTS %s@%s", (user, host)),
                ("CREATE USER %s@%s IDENTIFIED BY %s", (user, host, secret.password)),
                (f"GRANT {grants} ON *.* TO %s@%s", (user, host)),
            )
    yield
    for user in ACCOUNTS:
        for host in ("127.0.0.1", "localhost"):
            _sql(mariadb, ("DROP USER IF EXISTS %s@%s", (user, host)))


def settings_for(mariadb: MariaDBSandbox, tmp: Path, hook_url: str) -> Settings:
    return Settings(
        poll_interval_s=0.5,
        store_url=f"sqlite+aiosqlite:///{tmp / 'store.db'}",
        targets=[TargetConfig(name=name, **values) for name, values in targets(mariadb.port).items()],
        users=[
            UserConfig(name="op", role="operator", password_hash=hash_password(OPERATOR_PW)),
            UserConfig(name="vi", role="viewer", password_hash=hash_password(VIEWER_PW)),
        ],
        alerts={
            "thresholds": {"target_down_for_s": 0},
            "webhooks": [{"name": "hook", "url": hook_url, "backoff_initial_s": 0.2, "max_attempts": 2}],
            "alertmanager": {"urls": [hook_url.split("/Qz")[0]], "resend_interval_s": 1},
        },
        snapshots={"window_after_s": 60, "auto_on_stall": False},
    )


def _break_flaky(mariadb: MariaDBSandbox) -> None:
    """The flaky account's password changes and its connection dies: reconnects are refused."""
    conn = mariadb.admin_connect()
    try:
        with conn.cursor() as cur:
            for host in ("127.0.0.1", "localhost"):
                cur.execute("ALTER USER %s@%s IDENTIFIED BY %s", ("fz_flaky", host, "changed-by-the-test"))
            cur.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'fz_flaky'")
            for (thread_id,) in cur.fetchall():
                cur.execute(f"KILL {int(thread_id)}")
    finally:
        conn.close()


def _statuses(client: httpx.Client) -> dict[str, tuple[str, str]]:
    return {t["name"]: (t["status"], t.get("reason") or "") for t in client.get("/api/targets").json()}


@pytest.fixture(scope="module")
def transcript(mariadb, accounts, tmp_path_factory) -> Iterator[Transcript]:
    out = Transcript()
    receiver = Receiver()
    os.environ["FZ_ECHO_PW"] = MON.password
    settings = settings_for(
        mariadb, tmp_path_factory.mktemp("echo"), f"{receiver.url}/{WEBHOOK_TOKEN}?t={WEBHOOK_QUERY_TOKEN}"
    )
    try:
        with LogRecorder() as recorder, uvicorn_app(settings) as base:
            op = httpx.Client(base_url=base, timeout=30)
            wait_for(lambda: _health(op), 30, "the app never answered")
            headers = login(op, "op", OPERATOR_PW)
            live = LiveReader(base, headers)
            try:
                out.answers += _scenario(mariadb, op, headers, out)
                out.settle(lambda: live.events("alert") and live.events("poll") > 20, 30, "live events")
                out.settle(lambda: len(receiver.bodies) >= 3, 30, "webhook deliveries")
                out.answers += _walk_everything(base, op)
            finally:
                live.close()
                op.close()
            out.live = live.lines
            out.webhooks = [str(body) for body in receiver.bodies]
        out.logs = recorder.lines
        out.cli = _cli_check(settings, tmp_path_factory.mktemp("cli"))
        yield out
    finally:
        receiver.close()
        os.environ.pop("FZ_ECHO_PW", None)


def _health(client: httpx.Client) -> bool:
    try:
        return client.get("/api/health").is_success
    except httpx.TransportError:
        return False


def _scenario(
    mariadb: MariaDBSandbox, op: httpx.Client, headers: dict[str, str], out: Transcript
) -> list[Answer]:
    answers = []
    every = set(targets(mariadb.port))
    out.settle(
        lambda: {n for n, (s, _) in _statuses(op).items() if s != "starting"} == every, 30, "first polls"
    )
    out.settle(lambda: _statuses(op)["flaky"][0] == "up", 30, "flaky up")
    out.reasons = {name: reason for name, (_, reason) in _statuses(op).items()}
    walker = Walker(op, {}, {})
    preview = "/api/targets/{}/apply/preview?variable=thread_pool_stall_limit&value=500"
    answers += [walker.get(preview.format(name)) for name in ("good", "badadmin", "atadmin")]
    body = {"variable": "thread_pool_stall_limit", "value": "500"}
    apply = op.post("/api/targets/badadmin/apply", json=body, headers=headers)
    answers.append(Answer("POST /api/targets/badadmin/apply", apply.status_code, readable(apply)))
    _break_flaky(mariadb)
    out.settle(lambda: _statuses(op)["flaky"][0] == "down", 30, "flaky down")
    active = lambda: op.get("/api/alerts").json()["active"]  # noqa: E731
    out.settle(lambda: any(a["target"] == "flaky" for a in active()), 30, "flaky alert")
    captured = op.post("/api/targets/flaky/snapshots", json={}, headers=headers)
    answers.append(Answer("POST /api/targets/flaky/snapshots", captured.status_code, readable(captured)))
    return answers


def _walk_everything(base: str, op: httpx.Client) -> list[Answer]:
    names = [t["name"] for t in op.get("/api/targets").json()]
    snapshots = [str(s["id"]) for s in op.get("/api/snapshots").json()]
    answers: list[Answer] = []
    query = {"metric": "target_up", "variable": "thread_pool_stall_limit", "value": "500", "fresh": "true"}
    path_values = {"name": names, "snapshot_id": snapshots, "change_id": ["1"]}
    skip = {"/api/live"}  # read by LiveReader the whole time
    doc = op.get("/api/openapi.json").json()
    with (
        httpx.Client(base_url=base, timeout=30) as viewer,
        httpx.Client(base_url=base, timeout=30) as anonymous,
    ):
        login(viewer, "vi", VIEWER_PW)
        for client in (op, viewer, anonymous):
            answers += Walker(client, path_values, query).walk(doc, skip)
            answers.append(Walker(client, {}, {}).get("/metrics"))
    return answers


def _cli_check(settings: Settings, tmp: Path) -> str:
    lines = []
    for target in settings.targets:
        lines.append(f"[[targets]]\nname = '{target.name}'\ndsn = '{target.dsn.get_secret_value()}'")
        if target.password_env:
            lines.append(f"password_env = '{target.password_env}'")
        if target.extra_port is not None:
            lines.append(f"extra_port = {target.extra_port}")
    config = tmp / "poolscope.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {**os.environ, "FZ_ECHO_PW": MON.password}
    done = subprocess.run(
        [sys.executable, "-m", "poolscope.cli", "--config", str(config), "check"],
        capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return done.stdout + done.stderr


# --------------------------------------------------------------------------- the scenario worked


def test_the_fuzzed_dsns_did_what_they_should(transcript):
    assert transcript.missed == []
    reasons = transcript.reasons
    assert reasons["good"] == "" and reasons["envpw"] == ""  # parsed and logged in, specials and all
    # The server quotes the user name: told as *** (it holds the password when the ':' was an '@').
    for name in ("wrongpw", "atsep"):
        assert "1045" in reasons[name] and "user '***'@" in reasons[name], reasons[name]
    for name in ("ms1", "ms2", "ms3", "ms5"):
        assert reasons[name] == f"dsn of target {name}: must start with mysql:// or mariadb://"
    assert reasons["ms4"].startswith("dsn of target ms4: ")
    assert reasons["esc"] == "dsn of target esc: the password's %-escapes are not UTF-8"
    assert reasons["opt"].startswith("dsn of target opt: options after ? or #")
    assert "cannot connect" in reasons["closed"]
    by_what = {a.what: a for a in transcript.answers}
    good = by_what["GET /api/targets/good/apply/preview?variable=thread_pool_stall_limit&value=500"]
    assert good.status == 200, good.text
    for what in (
        "GET /api/targets/badadmin/apply/preview?variable=thread_pool_stall_limit&value=500",
        "POST /api/targets/badadmin/apply",
    ):
        assert (
            by_what[what].status == 409
            and "admin_dsn of target badadmin: must start with" in by_what[what].text
        )
    atadmin = by_what["GET /api/targets/atadmin/apply/preview?variable=thread_pool_stall_limit&value=500"]
    assert atadmin.status == 502 and "1045" in atadmin.text and "user '***'@" in atadmin.text
    assert by_what["POST /api/targets/flaky/snapshots"].status == 201
    assert any("/archive" in a.what and a.status == 200 for a in transcript.answers)
    assert "HTTP Request: POST" in "\n".join(transcript.logs)  # httpx's request lines were recorded
    assert "DOWN" in transcript.cli and "good: up" in transcript.cli


# --------------------------------------------------------------------------- and echoed nothing


def test_no_api_answer_carries_a_password(transcript):
    found = {a.what: leaks(a.text, MARKERS) for a in transcript.answers}
    assert {what: m for what, m in found.items() if m} == {}
    assert len(transcript.answers) > 100


def test_no_live_event_carries_a_password(transcript):
    assert leaks("\n".join(transcript.live), MARKERS) == []


def test_no_webhook_or_alertmanager_body_carries_a_password(transcript):
    assert any("target_down" in body and body.startswith("{") for body in transcript.webhooks)
    alertmanager = [body for body in transcript.webhooks if body.startswith("[")]
    assert any("atsep" in body for body in alertmanager)
    assert leaks("\n".join(transcript.webhooks), MARKERS) == []


def test_no_log_line_carries_a_password(transcript):
    assert [line for line in transcript.logs if leaks(line, MARKERS)] == []


def test_cli_check_shows_no_password(transcript):
    assert leaks(transcript.cli, MARKERS) == []


def test_the_markers_would_be_found():
    # The search itself: a password, however escaped, still shows its markers.
    import json
    from urllib.parse import quote

    for encoded in (MON.password, json.dumps(MON.password), quote(MON.password, safe=""), repr(MON.password)):
        assert leaks(encoded, MON.markers) == MON.markers
