"""Against `poolscope serve` itself: X-Forwarded-For counts only from trusted_proxies, login limits
hold per user name, and sessions (logout, password changes) survive a restart."""

from __future__ import annotations

import time

import httpx

from poolscope.auth.login_limits import FREE_FAILURES, SLOWDOWN_S
from poolscope.auth.passwords import hash_password
from tests.perimeter.serve_process import poolscope_serve, toml_string
from tests.served import logged_in

OP_PW = "serve-operator-pw"
VI_PW = "serve-viewer-pw"
SECRET = "s" * 40


def users(op_hash: str, vi_hash: str) -> str:
    return (
        f"session_secret = {toml_string(SECRET)}\n"
        f'[[users]]\nname = "op"\nrole = "operator"\npassword_hash = {toml_string(op_hash)}\n'
        f'[[users]]\nname = "vi"\nrole = "viewer"\npassword_hash = {toml_string(vi_hash)}\n'
    )


def wrong_logins(base: str, count: int, *, names: list[str] | None = None) -> list[int]:
    """`count` wrong logins, each with a new X-Forwarded-For (and a new name, if `names`)."""
    out = []
    for i in range(count):
        name = names[i % len(names)] if names else "op"
        response = httpx.post(
            f"{base}/api/auth/login",
            json={"username": name, "password": "wrong"},
            headers={"X-Forwarded-For": f"203.0.113.{i + 1}"},
            timeout=30,
        )
        out.append(response.status_code)
    return out


def test_rotating_x_forwarded_for_does_not_escape_the_login_limit(tmp_path):
    config = users(hash_password(OP_PW), hash_password(VI_PW))
    with poolscope_serve(tmp_path, config) as base:
        codes = wrong_logins(base, 15)
        # Not believed: one address, so its backoff for the name starts after the free tries.
        # (Its waits double: 1 s, 2 s, ... so a slow run may see one more wrong password pass.)
        assert codes[:FREE_FAILURES] == [401] * FREE_FAILURES and codes[FREE_FAILURES] == 429
        assert codes.count(429) >= 8, codes
        # Spraying names: X-Forwarded-For is not believed, so one address hits the per-address cap.
        sprayed = wrong_logins(base, 31, names=[f"user{i}" for i in range(31)])
        assert 429 in sprayed


def test_trusted_proxies_are_believed_and_a_guessed_name_is_slowed_down(tmp_path):
    config = 'trusted_proxies = ["127.0.0.1"]\n' + users(hash_password(OP_PW), hash_password(VI_PW))
    with poolscope_serve(tmp_path, config) as base:
        # Every attempt seems to come from another client now: no per-address cap is met ...
        sprayed = wrong_logins(base, 31, names=[f"user{i}" for i in range(31)])
        assert sprayed == [401] * 31
        # ... and one user name guessed from many addresses is slowed down, never refused (a
        # refusal would lock its real user out too: tests/auth/test_login_limits.py).
        assert wrong_logins(base, 15) == [401] * 15
        started = time.monotonic()
        assert wrong_logins(base, 1) == [401]
        assert time.monotonic() - started >= SLOWDOWN_S * 0.9


def replay(base: str, headers: dict[str, str]) -> int:
    with httpx.Client(base_url=base, timeout=30, headers=headers) as client:
        return client.get("/api/auth/me").status_code


def test_logout_and_password_changes_survive_a_restart(tmp_path):
    op_hash, vi_hash = hash_password(OP_PW), hash_password(VI_PW)
    with poolscope_serve(tmp_path, users(op_hash, vi_hash)) as base:
        logged_out = logged_in(base, "op", OP_PW)
        kept_op = logged_in(base, "op", OP_PW)
        kept_vi = logged_in(base, "vi", VI_PW)
        saved = {
            c: {"Authorization": client.headers["Authorization"]}
            for c, client in (("out", logged_out), ("op", kept_op), ("vi", kept_vi))
        }
        assert logged_out.post("/api/auth/logout").status_code == 204
        assert replay(base, saved["out"]) == 401
    with poolscope_serve(tmp_path, users(op_hash, vi_hash)) as base:
        assert replay(base, saved["out"]) == 401  # the logout was kept in the store
        assert replay(base, saved["op"]) == 200  # a restart alone ends nobody's session
        assert replay(base, saved["vi"]) == 200
    new_op_hash = hash_password("a-new-operator-password")
    with poolscope_serve(tmp_path, users(new_op_hash, vi_hash)) as base:
        assert replay(base, saved["op"]) == 401  # op's password changed: op's sessions ended
        assert replay(base, saved["vi"]) == 200
        logged_in(base, "op", "a-new-operator-password").close()
    for client in (logged_out, kept_op, kept_vi):
        client.close()
