"""A logout reaches every API process of a fleet within 5 s: two `poolscope api` processes share one
store (the private PostgreSQL: LISTEN/NOTIFY; SQLite: a short poll); a session logged out on one is
refused by the other, which loaded revocations only at start before."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from poolscope.auth.passwords import hash_password
from poolscope_dev.sandbox import free_port
from tests.fleet.processes import Proc, answers, processes
from tests.waiting import wait_for

OPERATOR_PW = "revoke-operator-pw"
REACH_WITHIN_S = 5.0


def write_config(path: Path, store_url: str, port: int, password_hash: str) -> None:
    path.write_text(
        "\n".join(
            [
                f'store_url = "{store_url}"',
                f"listen_port = {port}",
                'session_secret = "one secret shared by every API process of this fleet"',
                "[[users]]",
                'name = "op"',
                'role = "operator"',
                f'password_hash = "{password_hash}"',
                "[[targets]]",
                'name = "db1"',
                f'dsn = "mysql://mon:unused@127.0.0.1:{free_port()}/"',
            ]
        )
        + "\n"
    )


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_logout_on_one_api_process_is_refused_by_the_other_within_5_s(tmp_path, backend, request):
    if backend == "postgresql":
        store_url = request.getfixturevalue("postgres").create_database("poolscope_revocations")
    else:
        store_url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    ports = {"a": free_port(), "b": free_port()}
    configs, password_hash = {}, hash_password(OPERATOR_PW)  # one config but the port
    for name, port in ports.items():
        configs[name] = tmp_path / f"poolscope-{name}.toml"
        write_config(configs[name], store_url, port, password_hash)
    subprocess.run(
        [sys.executable, "-m", "poolscope.cli", "--config", str(configs["a"]), "migrate"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    with processes() as started:
        for name in ports:
            started.append(Proc(f"api-{name}", ["--config", str(configs[name]), "api"], tmp_path))
        try:
            for port in ports.values():
                wait_for(
                    lambda port=port: answers(f"http://127.0.0.1:{port}/api/health"), 60, "an API process"
                )
            a = httpx.Client(base_url=f"http://127.0.0.1:{ports['a']}", timeout=10)
            b = httpx.Client(base_url=f"http://127.0.0.1:{ports['b']}", timeout=10)
            token = a.post("/api/auth/login", json={"username": "op", "password": OPERATOR_PW}).json()[
                "token"
            ]
            session = {"Authorization": f"Bearer {token}"}
            assert b.get("/api/auth/me", headers=session).status_code == 200  # one fleet, one session
            assert a.post("/api/auth/logout", headers=session).status_code == 204
            logged_out = time.monotonic()
            wait_for(
                lambda: b.get("/api/auth/me", headers=session).status_code == 401,
                REACH_WITHIN_S,
                "the other API process to refuse the logged-out session",
            )
            reached_s = time.monotonic() - logged_out
            silence = {"target": "db1", "duration_s": 60}
            assert b.post("/api/alerts/silences", json=silence, headers=session).status_code == 401
            print(f"[revocations] {backend}: refused by the other process {reached_s:.2f} s after the logout")
        except BaseException:
            for proc in started:
                print(proc.tail())
            raise
