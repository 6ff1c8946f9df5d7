"""Recommendations, apply, revert and guarded apply against a real MariaDB through the real HTTP API.

One sandbox is started with settings that invite trouble (stall limit 5 s, coarse queue times,
one extra_port slot, few max_connections); a blocking load then makes it queue. Every bad
request below must leave the server's variables exactly as they were (read back as root).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import pytest

from poolscope.config import Settings, TargetConfig
from poolscope_dev.sandbox import ADMIN_USER, MONITOR_USER, SBTEST_USER, MariaDBSandbox
from tests.actions.live import (
    OPERATOR_PW,
    VIEWER_PW,
    BlockingLoad,
    global_value,
    running_app,
    set_global,
)
from tests.served import logged_in, wait_for_points
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

WEAK_ADMIN = "poolscope_weak_admin"
# The guard compares this many seconds of polls before and after a change (the least it allows).
GUARD_WINDOW_S = 10
WEAK_PASSWORD = "weak-admin-pw"


@pytest.fixture(scope="module")
def scenario_db(tmp_path_factory) -> Iterator[MariaDBSandbox]:
    sb = MariaDBSandbox(
        tmp_path_factory.mktemp("scenario"),
        thread_pool_size=2,
        stall_limit_ms=5000,
        exact_stats=False,
        extra_max_connections=1,
        max_connections=40,
    )
    sb.start()
    conn = sb.admin_connect()
    with conn.cursor() as cur:
        # An admin that may log in and read, but not SET GLOBAL.
        cur.execute("CREATE USER %s@'127.0.0.1' IDENTIFIED BY %s", (WEAK_ADMIN, WEAK_PASSWORD))
        cur.execute("GRANT PROCESS ON *.* TO %s@'127.0.0.1'", (WEAK_ADMIN,))
    conn.close()
    try:
        yield sb
    finally:
        sb.destroy()


@pytest.fixture(scope="module")
def app(tmp_path_factory, scenario_db, mariadb_pool_off) -> Iterator[str]:
    monitor = scenario_db.dsn(MONITOR_USER)
    settings = Settings(
        poll_interval_s=0.5,
        store_url=f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('live-store') / 'store.db'}",
        recommend_interval_s=1,
        recommend_window_s=30,
        guard_window_s=GUARD_WINDOW_S,
        # 10 s windows of 0.5 s polls: 19 polls a side.
        verdict_min_matched_polls=8,
        mutations_per_minute=1000,
        targets=[
            TargetConfig(name="scen", dsn=monitor, admin_dsn=scenario_db.dsn(ADMIN_USER), cpus=2),
            TargetConfig(
                name="weak",
                dsn=monitor,
                admin_dsn=f"mysql://{WEAK_ADMIN}:{WEAK_PASSWORD}@127.0.0.1:{scenario_db.port}/",
                extra_port=0,  # the single extra_port slot is scen's
            ),
            TargetConfig(name="readonly", dsn=monitor, extra_port=0),
            TargetConfig(name="off", dsn=mariadb_pool_off.dsn(MONITOR_USER)),
        ],
    )
    with running_app(settings) as base:
        yield base


@contextlib.contextmanager
def idle_connections(sandbox: MariaDBSandbox, total: int) -> Iterator[None]:
    """Open idle connections until the server has `total` connected (bounded by `total`)."""
    conns = []
    for _ in range(total):
        if int(status_value(sandbox, "Threads_connected")) >= total:
            break
        conns.append(sandbox.connect(SBTEST_USER))
    try:
        yield
    finally:
        for conn in conns:
            conn.close()


def status_value(sandbox: MariaDBSandbox, name: str) -> str:
    conn = sandbox.admin_connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS LIKE %s", (name,))
            return str(cur.fetchone()[1])
    finally:
        conn.close()


def wait_for_window(client, target: str, since: float) -> None:
    """Until the store holds `target`'s polls from `since` to a guard window after it: the window
    before a change that the guard compares with (polled every 0.5 s)."""

    def last_poll() -> float:
        params = {"metric": "qps", "from": since, "to": since + GUARD_WINDOW_S + 60}
        series = client.get(f"/api/targets/{target}/metrics", params=params).json()["series"]
        return max((point[0] for point in series[0]["points"]), default=since) if series else since

    wait_for(
        last_poll,
        GUARD_WINDOW_S + 30,
        f"no window of polls of {target}",
        until=lambda at: at >= since + GUARD_WINDOW_S,
    )


def recommendations(client, target: str) -> dict[str, dict]:
    out = client.get(f"/api/targets/{target}/recommendations").json()
    return {r["rule"]: r for r in out["active"]}


def test_a_troubled_server_gets_recommendations_with_evidence(app, scenario_db):
    client = logged_in(app, "vi", VIEWER_PW)  # reading needs no role beyond viewer (or none at all)
    set_global(scenario_db, thread_pool_priority="high")
    wanted = {
        "thread_pool_stall_limit",
        "thread_pool_exact_stats",
        "extra_max_connections",
        "max_connections",
        "transaction_priority",
    }
    with BlockingLoad(scenario_db), idle_connections(scenario_db, 37):
        recs = wait_for(
            lambda: recommendations(client, "scen"),
            120,
            lambda got: (
                f"missing {sorted(wanted - got.keys())}; "
                f"rules: {client.get('/api/targets/scen/recommendations').json()['rules']}"
            ),
            every_s=1.0,
            until=lambda got: wanted <= got.keys(),
        )

    stall = recs["thread_pool_stall_limit"]
    assert (stall["variable"], stall["current"]) == ("thread_pool_stall_limit", "5000")
    # Twice the mean statement time (≥ 30 ms): the 0.4 s statements weigh in, but far below 5 s.
    assert 30 <= int(stall["proposed"]) <= 1000
    waits = {e["label"]: e["value"] for e in stall["evidence"]}
    assert int(waits["longest queue wait"].split()[0].replace(",", "")) >= 4000  # the 5 s limit shows
    assert stall["applicable"] and stall["apply"] == "live"
    assert f"[mariadb]\nthread_pool_stall_limit = {stall['proposed']}" in stall["config_snippet"]

    exact = recs["thread_pool_exact_stats"]
    assert (exact["current"], exact["proposed"]) == ("OFF", "ON")
    assert recs["extra_max_connections"]["proposed"] == "3"
    maxc = recs["max_connections"]
    assert maxc["current"] == "40" and int(maxc["proposed"]) > 40
    assert int(next(e["value"] for e in maxc["evidence"] if e["metric"] == "threads_connected")) >= 34
    assert recs["transaction_priority"]["proposed"] == "auto"
    for rec in recs.values():
        # extra_max_connections rests on the configuration and the current connection alone.
        assert rec["window"]["polls"] >= (0 if rec["rule"] == "extra_max_connections" else 10)
        assert rec["window"]["seconds"] == pytest.approx(30, abs=1)
        assert rec["chart_url"].startswith("/targets/scen?from=")
        assert rec["why"] and rec["evidence"] and rec["read_more"].startswith("https://")

    # A recommendation that stops holding goes away, with the reason.
    set_global(scenario_db, thread_pool_exact_stats="ON", thread_pool_priority="auto")

    def gone() -> dict | None:
        body = client.get("/api/targets/scen/recommendations").json()
        return next((v for v in body["vanished"] if v["rule"] == "thread_pool_exact_stats"), None)

    vanished = wait_for(gone, 20, "the exact_stats recommendation did not go away")
    assert "changed from OFF to ON" in vanished["why_gone"]
    set_global(scenario_db, thread_pool_exact_stats="OFF")


def test_thread_cache_recommended_for_one_thread_per_connection_churn(app, mariadb_pool_off):
    client = logged_in(app, "vi", VIEWER_PW)
    old = global_value(mariadb_pool_off, "thread_cache_size")
    set_global(mariadb_pool_off, thread_cache_size=0)
    stop = threading.Event()

    def churn() -> None:
        deadline = time.monotonic() + 90
        while not stop.is_set() and time.monotonic() < deadline:
            mariadb_pool_off.connect(SBTEST_USER).close()
            time.sleep(0.05)  # the churn's pace, not a wait

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        rec = wait_for(
            lambda: recommendations(client, "off").get("thread_cache_size"),
            60,
            lambda _: str(client.get("/api/targets/off/recommendations").json()["rules"]),
            every_s=1.0,
        )
    finally:
        stop.set()
        thread.join(timeout=10)
        set_global(mariadb_pool_off, thread_cache_size=int(old))
    assert rec["current"] == "0" and int(rec["proposed"]) >= 16
    ratio = next(e for e in rec["evidence"] if e["metric"] == "thread_cache_miss_ratio")
    assert ratio["value"].endswith("%") and int(ratio["value"][:-1]) >= 50


def test_apply_then_revert_changes_the_server_and_is_audited(app, scenario_db):
    op = logged_in(app, "op", OPERATOR_PW)
    wait_for_points(op, "scen", 4, "qps")
    before = global_value(scenario_db, "thread_pool_oversubscribe")
    preview = op.get(
        "/api/targets/scen/apply/preview", params={"variable": "thread_pool_oversubscribe", "value": "4"}
    )
    assert preview.status_code == 200, preview.text
    assert preview.json()["current"] == before and preview.json()["proposed"] == "4"
    assert "until the server restarts" in preview.json()["what_happens"]

    res = op.post("/api/targets/scen/apply", json={"variable": "thread_pool_oversubscribe", "value": "4"})
    assert res.status_code == 200, res.text
    change = res.json()
    assert global_value(scenario_db, "thread_pool_oversubscribe") == "4"
    assert (change["old_value"], change["new_value"], change["result"], change["user"]) == (
        before,
        "4",
        "applied",
        "op",
    )
    assert change["config_snippet"] == "[mariadb]\nthread_pool_oversubscribe = 4\n"
    # No recommendation behind it: the operator's own; guarded, as guard_by_default says.
    assert change["manual"] and change["guarded"] and change["guard_status"] == "watching"
    audit = op.get("/api/targets/scen/audit").json()
    assert audit[0]["id"] == change["id"] and audit[0]["action"] == "apply"

    again = op.post("/api/targets/scen/apply", json={"variable": "thread_pool_oversubscribe", "value": "4"})
    assert again.status_code == 409 and "already 4" in again.json()["detail"]

    revert = op.post(f"/api/targets/scen/audit/{change['id']}/revert")
    assert revert.status_code == 200, revert.text
    assert global_value(scenario_db, "thread_pool_oversubscribe") == before
    assert revert.json()["action"] == "revert" and revert.json()["reverts_id"] == change["id"]
    twice = op.post(f"/api/targets/scen/audit/{change['id']}/revert")
    assert twice.status_code == 409 and "already reverted" in twice.json()["detail"]
    listed = {e["id"]: e for e in op.get("/api/targets/scen/audit").json()}
    assert listed[change["id"]]["reverted_by_id"] == revert.json()["id"]

    # The admin credential never leaves the backend.
    from poolscope_dev.sandbox import ADMIN_PASSWORD

    answers = [preview.text, res.text, revert.text, op.get("/api/targets/scen/audit").text]
    answers += [op.get("/api/targets/scen/recommendations").text, op.get("/api/targets").text]
    assert not [a for a in answers if ADMIN_PASSWORD in a]

    comparison = op.get(f"/api/targets/scen/audit/{change['id']}/compare").json()
    assert [m["metric"] for m in comparison["load"]] == ["qps", "threads_connected", "threads_running"]
    assert comparison["load"][0]["before"] is not None
    # The revert is inside the window after: named, and the verdict does not credit anything.
    assert comparison["verdict"] == "inconclusive"
    assert revert.json()["id"] in [o["id"] for o in comparison["overlaps"]]


def test_applying_a_recommendation_records_its_id(app, scenario_db):
    op = logged_in(app, "op", OPERATOR_PW)
    set_global(scenario_db, extra_max_connections=1)
    rec = wait_for(
        lambda: recommendations(op, "scen").get("extra_max_connections"),
        20,
        "no extra_max_connections recommendation",
    )
    res = op.post(
        "/api/targets/scen/apply",
        json={"variable": rec["variable"], "value": rec["proposed"], "recommendation_id": rec["id"]},
    )
    assert res.status_code == 200, res.text
    assert res.json()["recommendation_id"] == rec["id"]
    assert global_value(scenario_db, "extra_max_connections") == "3"

    # Applied: the recommendation no longer holds and says so (once a poll has read the variable).
    def fulfilled() -> dict | None:
        body = op.get("/api/targets/scen/recommendations").json()
        return body if "extra_max_connections" not in {r["rule"] for r in body["active"]} else None

    body = wait_for(fulfilled, 15, "the fulfilled recommendation stayed")
    assert any(
        v["rule"] == "extra_max_connections" and "changed from 1 to 3" in v["why_gone"]
        for v in body["vanished"]
    )
    stale = op.post(
        "/api/targets/scen/apply",
        json={"variable": "extra_max_connections", "value": "4", "recommendation_id": rec["id"]},
    )
    assert stale.status_code == 409 and "no longer holds" in stale.json()["detail"]
    assert op.post(f"/api/targets/scen/audit/{res.json()['id']}/revert").status_code == 200
    assert global_value(scenario_db, "extra_max_connections") == "1"


WATCHED = (
    "thread_pool_stall_limit",
    "thread_pool_size",
    "max_connections",
    "thread_pool_priority",
    "thread_pool_oversubscribe",
)


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"variable": "innodb_buffer_pool_size", "value": "134217728"}, 422, "allow-list"),
        ({"variable": "thread_handling", "value": "pool-of-threads"}, 422, "allow-list"),
        ({"variable": "thread_pool_stall_limit", "value": "0"}, 422, "out of range"),
        ({"variable": "thread_pool_stall_limit", "value": "4294967296"}, 422, "out of range"),
        ({"variable": "thread_pool_size", "value": "100001"}, 422, "out of range"),
        ({"variable": "thread_pool_stall_limit", "value": "30ms"}, 422, "whole number"),
        ({"variable": "thread_pool_stall_limit", "value": ""}, 422, ""),
        ({"variable": "thread_pool_priority", "value": "fastest"}, 422, "one of high, low, auto"),
        (
            {"variable": "thread_pool_stall_limit", "value": "30; SET GLOBAL max_connections=10"},
            422,
            "whole number",
        ),
        ({"variable": "thread_pool_priority", "value": "auto' OR '1'='1"}, 422, "one of"),
        ({"variable": "max_connections=10; --", "value": "10"}, 422, "allow-list"),
        ({"variable": "thread_pool_size", "value": "1 OR 1=1"}, 422, "whole number"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(app, scenario_db, body, status, words):
    op = logged_in(app, "op", OPERATOR_PW)
    before = {v: global_value(scenario_db, v) for v in WATCHED}
    count = len(op.get("/api/targets/scen/audit").json())
    res = op.post("/api/targets/scen/apply", json=body)
    assert res.status_code == status, res.text
    detail = res.json()["detail"]
    assert words in (detail if isinstance(detail, str) else str(detail))
    assert {v: global_value(scenario_db, v) for v in WATCHED} == before
    assert len(op.get("/api/targets/scen/audit").json()) == count  # refused before the server


def test_no_login_viewer_cookie_only_and_unconfigured_target_change_nothing(app, scenario_db):
    body = {"variable": "thread_pool_stall_limit", "value": "40"}
    before = global_value(scenario_db, "thread_pool_stall_limit")
    import httpx

    anonymous = httpx.post(f"{app}/api/targets/scen/apply", json=body)
    assert anonymous.status_code == 401
    viewer = logged_in(app, "vi", VIEWER_PW)
    refused = viewer.post("/api/targets/scen/apply", json=body)
    assert refused.status_code == 403 and "operator" in refused.json()["detail"]
    assert viewer.get("/api/targets/scen/apply/preview", params=body).status_code == 403
    op = logged_in(app, "op", OPERATOR_PW)
    # The token where a browser would send it by itself (a cookie) is not a session.
    token = op.headers["Authorization"].removeprefix("Bearer ")
    cookie_only = httpx.post(f"{app}/api/targets/scen/apply", json=body, cookies={"poolscope_session": token})
    assert cookie_only.status_code == 401
    off = op.post("/api/targets/readonly/apply", json=body)
    assert off.status_code == 403 and "not configured" in off.json()["detail"]
    assert global_value(scenario_db, "thread_pool_stall_limit") == before


def test_admin_without_privilege_is_reported_and_changes_nothing(app, scenario_db):
    op = logged_in(app, "op", OPERATOR_PW)
    before = global_value(scenario_db, "thread_pool_stall_limit")
    res = op.post("/api/targets/weak/apply", json={"variable": "thread_pool_stall_limit", "value": "40"})
    assert res.status_code == 502
    assert "1227" in res.json()["detail"] and "privilege" in res.json()["detail"].lower()
    assert WEAK_PASSWORD not in res.text
    assert global_value(scenario_db, "thread_pool_stall_limit") == before
    entry = op.get("/api/targets/weak/audit").json()[0]
    assert entry["result"] == "failed" and "1227" in entry["detail"]
    assert entry["id"] == int(res.headers["X-Poolscope-Audit-Id"])


def test_guarded_apply_that_makes_things_worse_reverts_itself(app, scenario_db):
    op = logged_in(app, "op", OPERATOR_PW)
    # Whether the large stall limit hurts within the guard's window is the server's doing, not the
    # guard's: the workers the small limit created can go on serving the short statements for the
    # whole window while they never idle (seen once in CI: qps -18 %, limit 20 %). Such a round is
    # judged "kept" rightly; the scenario is set up again, a bounded number of times.
    entry: dict | None = None
    for _ in range(3):
        set_global(scenario_db, thread_pool_stall_limit=20)
        with BlockingLoad(scenario_db, light=8, trx=0):
            wait_for_window(op, "scen", time.time())  # a before-window with the small stall limit
            res = op.post(
                "/api/targets/scen/apply",
                json={"variable": "thread_pool_stall_limit", "value": "5000", "guard": True},
            )
            assert res.status_code == 200, res.text
            change = res.json()
            assert change["guard_status"] == "watching" and change["guarded"]

            def judged(change_id: int = change["id"]) -> dict | None:
                entry = next(e for e in op.get("/api/targets/scen/audit").json() if e["id"] == change_id)
                return entry if entry["guard_status"] != "watching" else None

            entry = wait_for(judged, 40, "the guard never judged the change", every_s=0.5)
        if entry["guard_status"] != "kept":
            break
        assert not entry["guard_note"].startswith("worse"), entry["guard_note"]
    assert entry is not None
    assert entry["guard_status"] == "reverted", entry["guard_note"]
    assert "worse: " in entry["guard_note"] and "queue wait" in entry["guard_note"], entry["guard_note"]
    assert global_value(scenario_db, "thread_pool_stall_limit") == "20"
    auto = next(e for e in op.get("/api/targets/scen/audit").json() if e["id"] == entry["reverted_by_id"])
    assert auto["action"] == "auto_revert" and auto["user"] == "poolscope-guard"
    assert auto["detail"].startswith(f"guard of #{entry['id']}")
    set_global(scenario_db, thread_pool_stall_limit=5000)


def test_guarded_apply_without_regression_is_kept(app, scenario_db):
    op = logged_in(app, "op", OPERATOR_PW)
    before = global_value(scenario_db, "thread_pool_oversubscribe")
    wait_for_points(op, "scen", 4, "qps")
    # A quiet before-window: the guard would rightly call the end of an earlier test's load
    # a throughput drop.
    wait_for_window(op, "scen", time.time())
    res = op.post(
        "/api/targets/scen/apply", json={"variable": "thread_pool_oversubscribe", "value": "5", "guard": True}
    )
    assert res.status_code == 200, res.text
    change = res.json()

    def judged() -> dict | None:
        entry = next(e for e in op.get("/api/targets/scen/audit").json() if e["id"] == change["id"])
        return entry if entry["guard_status"] != "watching" else None

    entry = wait_for(judged, 40, "the guard never judged the change", every_s=0.5)
    assert entry["guard_status"] == "kept", entry["guard_note"]
    assert entry["guard_note"].startswith(("no detectable change", "better", "inconclusive")), entry[
        "guard_note"
    ]
    assert global_value(scenario_db, "thread_pool_oversubscribe") == "5"
    assert op.post(f"/api/targets/scen/audit/{change['id']}/revert").status_code == 200
    assert global_value(scenario_db, "thread_pool_oversubscribe") == before
