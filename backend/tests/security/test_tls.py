"""TLS to targets and to the admin connection, against a real MariaDB with certificates the test makes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from pydantic import ValidationError

from poolscope.actions.admin import AdminLimits, open_admin
from poolscope.api.errors import status_of
from poolscope.config import Settings, TargetConfig
from poolscope.errors import DomainError
from poolscope.poller.target_poller import TargetPoller
from poolscope.tls import TlsConfig
from poolscope_dev.sandbox import (
    ADMIN_PASSWORD,
    ADMIN_USER,
    MONITOR_PASSWORD,
    MONITOR_USER,
    MariaDBSandbox,
)
from poolscope_dev.tlscerts import CertificateSet, make_ca, make_test_certificates

pytestmark = pytest.mark.live  # a MariaDB sandbox with TLS (tests/conftest.py lanes)

# Accounts only this module creates; the passwords are distinctive so a leak would be found.
TLS_ONLY_USER, TLS_ONLY_PASSWORD = "tls_only", "Tls/Only?Pw#4@x"
X509_USER, X509_PASSWORD = "x509_only", "X509:Only%Pw"


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertificateSet:
    return make_test_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def wrong_ca(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_ca(tmp_path_factory.mktemp("other-ca"), "other")[0]


@pytest.fixture(scope="module")
def tls_db(tmp_path_factory: pytest.TempPathFactory, certs: CertificateSet) -> Iterator[MariaDBSandbox]:
    sb = MariaDBSandbox(tmp_path_factory.mktemp("mariadb_tls"), tls=certs.server_tls())
    sb.start()
    try:
        conn = sb.admin_connect()
        with conn.cursor() as cur:
            for user, password, require in (
                (TLS_ONLY_USER, TLS_ONLY_PASSWORD, "SSL"),
                (X509_USER, X509_PASSWORD, "X509"),
            ):
                for host in ("127.0.0.1", "localhost"):
                    cur.execute(
                        f"CREATE USER %s@%s IDENTIFIED BY %s REQUIRE {require}", (user, host, password)
                    )
                    cur.execute("GRANT PROCESS ON *.* TO %s@%s", (user, host))
        conn.close()
        yield sb
    finally:
        sb.destroy()


def dsn(sb: MariaDBSandbox, user: str, password: str) -> str:
    return f"mysql://{user}:{quote(password, safe='')}@127.0.0.1:{sb.port}/"


def poller(target_dsn: str, **target: object) -> TargetPoller:
    settings = Settings(poll_interval_s=0.5, targets=[TargetConfig(name="t", dsn=target_dsn, **target)])
    return TargetPoller(settings.targets[0], settings)


async def cipher_of(p: TargetPoller) -> str:
    """Ssl_cipher of the poller's own connection ('' = not encrypted)."""
    [result] = await p.read_between_polls(["SHOW SESSION STATUS LIKE 'Ssl_cipher'"], 5)
    return str(result.rows[0]["value"]) if result.rows else ""


async def test_verified_tls_encrypts_the_poll_connection(tls_db, certs):
    p = poller(dsn(tls_db, MONITOR_USER, MONITOR_PASSWORD), tls=TlsConfig(ca=certs.ca))
    try:
        result = await p.poll_once()
        assert result.info.status == "up", result.info.reason
        assert result.info.connection.port_kind == "extra_port"  # moved there, over TLS again
        assert await cipher_of(p)
    finally:
        await p.close()


async def test_a_server_certificate_from_another_ca_is_refused_clearly(tls_db, wrong_ca):
    p = poller(dsn(tls_db, MONITOR_USER, MONITOR_PASSWORD), tls=TlsConfig(ca=wrong_ca), extra_port=0)
    result = await p.poll_once()
    await p.close()
    assert result.info.status == "down"
    assert "TLS handshake failed: certificate verify failed" in result.info.reason
    assert MONITOR_PASSWORD not in result.info.model_dump_json()


async def test_verify_off_still_encrypts(tls_db):
    p = poller(dsn(tls_db, MONITOR_USER, MONITOR_PASSWORD), tls=TlsConfig(verify=False), extra_port=0)
    try:
        result = await p.poll_once()
        assert result.info.status == "up", result.info.reason
        assert await cipher_of(p)
    finally:
        await p.close()


async def test_plain_connections_stay_plain_and_require_ssl_accounts_refuse_them(tls_db, certs):
    plain = poller(dsn(tls_db, MONITOR_USER, MONITOR_PASSWORD), extra_port=0)
    refused = poller(dsn(tls_db, TLS_ONLY_USER, TLS_ONLY_PASSWORD), extra_port=0)
    admitted = poller(dsn(tls_db, TLS_ONLY_USER, TLS_ONLY_PASSWORD), extra_port=0, tls=TlsConfig(ca=certs.ca))
    try:
        assert (await plain.poll_once()).info.status == "up"
        assert await cipher_of(plain) == ""
        down = (await refused.poll_once()).info
        assert down.status == "down" and "1045" in (down.reason or "")
        assert TLS_ONLY_PASSWORD not in down.model_dump_json()
        up = (await admitted.poll_once()).info
        assert up.status == "up", up.reason
    finally:
        for p in (plain, refused, admitted):
            await p.close()


async def test_client_certificate_for_require_x509_accounts(tls_db, certs):
    with_cert = TlsConfig(ca=certs.ca, cert=certs.client_cert, key=certs.client_key)
    without = poller(dsn(tls_db, X509_USER, X509_PASSWORD), extra_port=0, tls=TlsConfig(ca=certs.ca))
    admitted = poller(dsn(tls_db, X509_USER, X509_PASSWORD), extra_port=0, tls=with_cert)
    try:
        assert (await without.poll_once()).info.status == "down"
        up = (await admitted.poll_once()).info
        assert up.status == "up", up.reason
    finally:
        await without.close()
        await admitted.close()


async def test_a_server_without_tls_is_refused_before_the_login_is_sent(mariadb, monitor_dsn, certs):
    def denied() -> int:
        conn = mariadb.admin_connect()
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS LIKE 'Access_denied_errors'")
            value = int(cur.fetchone()[1])
        conn.close()
        return value

    before = denied()
    wrong = f"mysql://{MONITOR_USER}:Not-The-Pw@127.0.0.1:{mariadb.port}/"
    result = await poller(wrong, extra_port=0, tls=TlsConfig(ca=certs.ca)).poll_once()
    assert result.info.status == "down"
    assert "does not offer TLS" in (result.info.reason or "")
    # A wrong password that reached the server would count as a denied login.
    assert denied() == before


async def test_the_admin_connection_uses_tls_and_admin_tls_overrides_it(tls_db, certs, wrong_ca):
    target = TargetConfig(
        name="t",
        dsn=dsn(tls_db, MONITOR_USER, MONITOR_PASSWORD),
        admin_dsn=dsn(tls_db, ADMIN_USER, ADMIN_PASSWORD),
        extra_port=0,
        tls=TlsConfig(ca=certs.ca),
    )
    limits = AdminLimits(connect_timeout_s=5, statement_timeout_s=5, lock_wait_timeout_s=5)
    session = await open_admin(target, None, limits)
    try:
        [(_name, cipher)] = await session.fetch("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        assert cipher
    finally:
        session.close()
    with pytest.raises(DomainError) as err:
        await open_admin(target.model_copy(update={"admin_tls": TlsConfig(ca=wrong_ca)}), None, limits)
    assert status_of(err.value) == 502 and "certificate verify failed" in err.value.detail
    assert ADMIN_PASSWORD not in err.value.detail


async def test_unreadable_tls_files_are_that_target_down_with_the_setting_named(tls_db, tmp_path):
    p = poller(dsn(tls_db, MONITOR_USER, MONITOR_PASSWORD), tls=TlsConfig(ca=tmp_path / "missing.pem"))
    info = (await p.poll_once()).info
    assert info.status == "down"
    assert "tls of target t: cannot read the ca file " in (info.reason or "")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate")
    info = (
        await poller(dsn(tls_db, MONITOR_USER, MONITOR_PASSWORD), tls=TlsConfig(ca=garbage)).poll_once()
    ).info
    assert info.status == "down" and "is not usable PEM" in (info.reason or "")


def test_inconsistent_tls_settings_fail_at_load(tmp_path):
    with pytest.raises(ValidationError, match="tls.key is set without tls.cert"):
        TlsConfig(key=tmp_path / "k.pem")
    with pytest.raises(ValidationError, match="verify = false would ignore it"):
        TlsConfig(ca=tmp_path / "ca.pem", verify=False)
    with pytest.raises(ValidationError):
        TargetConfig(name="t", dsn="mysql://u@h/", tls={"ca": "x", "ssl_mode": "REQUIRED"})
