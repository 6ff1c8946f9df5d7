"""A throw-away CA with a server and a client certificate, for TLS tests against the sandbox.

Made with the `openssl` command (Debian's openssl package, scripts/install-system.sh). The server
certificate names 127.0.0.1 and localhost, so host name verification passes against the
sandbox; the keys are unencrypted and valid for two days.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from poolscope_dev.sandbox import ServerTls

CA_EXTENSIONS = """\
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
"""

LEAF_EXTENSIONS = """\
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = {usage}
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


@dataclass(frozen=True)
class CertificateSet:
    ca: Path  # the CA certificate: what a client verifies the server with
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    def server_tls(self) -> ServerTls:
        """What the sandbox server is started with (MariaDBSandbox(tls=...))."""
        return ServerTls(ca=self.ca, cert=self.server_cert, key=self.server_key)


def _openssl(*args: str | Path) -> None:
    result = subprocess.run(
        ["openssl", *map(str, args)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    if result.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {result.stderr.strip()}")


def make_ca(directory: Path, name: str) -> tuple[Path, Path]:
    """A self-signed CA in `directory`: (certificate, key)."""
    directory.mkdir(parents=True, exist_ok=True)
    cert, key, ext = directory / f"{name}.pem", directory / f"{name}.key", directory / f"{name}.ext"
    ext.write_text(CA_EXTENSIONS)
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", key, "-out", cert, "-days", "2", "-subj", f"/CN=Poolscope test {name}",
        "-extensions", "v3_ca", "-config", _req_config(directory, ext),
    )  # fmt: skip
    return cert, key


def _req_config(directory: Path, ext: Path) -> Path:
    config = directory / "req.cnf"
    config.write_text(f"[req]\ndistinguished_name = dn\n[dn]\n[v3_ca]\n{ext.read_text()}")
    return config


def _leaf(directory: Path, name: str, ca: tuple[Path, Path], usage: str) -> tuple[Path, Path]:
    cert, key, csr = directory / f"{name}.pem", directory / f"{name}.key", directory / f"{name}.csr"
    ext = directory / f"{name}.ext"
    ext.write_text(LEAF_EXTENSIONS.format(usage=usage))
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", key, "-out", csr, "-subj", f"/CN={name}",
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial",
        "-out", cert, "-days", "2", "-extfile", ext,
    )  # fmt: skip
    key.chmod(0o600)
    return cert, key


def make_test_certificates(directory: Path) -> CertificateSet:
    """CA, server certificate (127.0.0.1, localhost) and client certificate, all in `directory`."""
    ca = make_ca(directory, "ca")
    server = _leaf(directory, "server", ca, "serverAuth")
    client = _leaf(directory, "client", ca, "clientAuth")
    return CertificateSet(ca[0], server[0], server[1], client[0], client[1])
