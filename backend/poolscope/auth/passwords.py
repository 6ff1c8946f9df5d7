"""Password hashing with the standard library's scrypt; the stored form names its parameters.

Format: ``scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>`` so parameters can be raised later
without invalidating existing hashes. `poolscope hash-password` prints one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SCHEME = "scrypt"
# 2^14 x 8 x 128 bytes = 16 MiB per hash: tens of milliseconds, inside OpenSSL's default maxmem.
LOG2_N = 14
R = 8
P = 1
DKLEN = 32
SALT_BYTES = 16
MAXMEM = 64 * 1024 * 1024


class PasswordHashError(ValueError):
    """A stored hash that is not in the expected format (the message never repeats it)."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _scrypt(password: str, salt: bytes, log2_n: int, r: int, p: int, dklen: int) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=2**log2_n, r=r, p=p, dklen=dklen, maxmem=MAXMEM
    )


def hash_password(password: str) -> str:
    """A new salted hash of `password` in the stored format."""
    if not password:
        raise ValueError("the password must not be empty")
    salt = secrets.token_bytes(SALT_BYTES)
    digest = _scrypt(password, salt, LOG2_N, R, P, DKLEN)
    return f"{SCHEME}${LOG2_N}${R}${P}${_b64(salt)}${_b64(digest)}"


def check_hash_format(stored: str) -> None:
    """Raise PasswordHashError unless `stored` parses (used at start-up: fail fast on typos)."""
    _parse(stored)


def _parse(stored: str) -> tuple[int, int, int, bytes, bytes]:
    parts = stored.split("$")
    if len(parts) != 6 or parts[0] != SCHEME:
        raise PasswordHashError(
            "password_hash must look like scrypt$14$8$1$<salt>$<hash> (poolscope hash-password)"
        )
    try:
        log2_n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt = base64.b64decode(parts[4], validate=True)
        digest = base64.b64decode(parts[5], validate=True)
    except ValueError:
        raise PasswordHashError("password_hash has a malformed number or base64 field") from None
    if not (10 <= log2_n <= 20 and 1 <= r <= 32 and 1 <= p <= 16 and salt and len(digest) >= 16):
        raise PasswordHashError("password_hash parameters are out of the accepted range")
    return log2_n, r, p, salt, digest


def verify_password(password: str, stored: str) -> bool:
    """True when `password` matches; constant-time comparison of the derived keys."""
    log2_n, r, p, salt, digest = _parse(stored)
    candidate = _scrypt(password, salt, log2_n, r, p, len(digest))
    return hmac.compare_digest(candidate, digest)


#: Verified against when the user name is unknown, so a wrong name costs the same time as a
#: wrong password and response times do not reveal which names exist.
DUMMY_HASH = hash_password(secrets.token_urlsafe(16))
