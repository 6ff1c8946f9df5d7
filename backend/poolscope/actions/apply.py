"""Apply and revert variable changes through the target's separate admin credential.

validate (allow-list, then the server's SYSTEM_VARIABLES) → SET GLOBAL with the value bound as
a parameter → read back + SHOW WARNINGS → audit. If the server stored anything other than the
validated value, the old value is put back and the change reported as failed: nothing is left
half-applied. The admin credential is used only here and never appears in an answer or a log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import aiomysql

from poolscope.actions.allowlist import refusal
from poolscope.actions.audit import AuditLog
from poolscope.actions.models import ApplyPreview, AuditEntry, VariableMeta
from poolscope.actions.validate import InvalidValue, normalise, validate
from poolscope.config import DsnError, Settings, TargetConfig
from poolscope.poller.connection import describe_mysql_error, error_code, open_mysql
from poolscope.recommend.flavors import config_snippet, supports_set_persist
from poolscope.schemas import ServerInfo
from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)

UNKNOWN_TABLE = 1109


class ApplyError(Exception):
    """A refused or failed change: `status` is the HTTP status, `detail` the clear message."""

    def __init__(self, status: int, detail: str, entry: AuditEntry | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.entry = entry


@dataclass
class Actor:
    user: str
    address: str | None


class AdminSession:
    """One short-lived admin connection, preferring extra_port (it does not queue behind load)."""

    def __init__(self, conn: aiomysql.Connection, port_kind: str) -> None:
        self.conn = conn
        self.port_kind = port_kind

    async def fetch(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        async with self.conn.cursor() as cur:
            await cur.execute(sql, args)
            return list(await cur.fetchall())

    def close(self) -> None:
        self.conn.close()


async def open_admin(target: TargetConfig, server: ServerInfo | None) -> AdminSession:
    try:
        params = target.admin_connection_params()
    except DsnError as exc:
        raise ApplyError(409, str(exc)) from None
    # The port outside the pool: MariaDB / Percona 5.7 extra_port, MySQL / Percona 8.0.14+ admin_port.
    outside = (server.extra_port or server.admin_port) if server else 0
    extra = target.extra_port if target.extra_port is not None else outside
    candidates = ([(extra, "extra_port")] if extra else []) + [(params.port, "port")]
    last = ""
    for port, kind in candidates:
        try:
            conn = await open_mysql(params, port, *target.admin_tls_setting(), target.connect_timeout_s)
            return AdminSession(conn, kind)
        except Exception as exc:
            last = describe_mysql_error(exc)
            log.info("target %s: admin login on %s %s failed: %s", target.name, kind, port, last)
    raise ApplyError(502, f"cannot connect with the admin credential of {target.name}: {last}")


async def read_meta(session: AdminSession, variable: str) -> VariableMeta:
    try:
        rows = await session.fetch(
            "SELECT VARIABLE_NAME, VARIABLE_TYPE, NUMERIC_MIN_VALUE, NUMERIC_MAX_VALUE, NUMERIC_BLOCK_SIZE,"
            " ENUM_VALUE_LIST, READ_ONLY, VARIABLE_SCOPE"
            " FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME = %s",
            (variable.upper(),),
        )
    except aiomysql.Error as exc:
        if error_code(exc) == UNKNOWN_TABLE:
            raise ApplyError(
                422, "this server has no information_schema.SYSTEM_VARIABLES to validate against"
            ) from None
        raise ApplyError(502, f"cannot read the variable's limits: {describe_mysql_error(exc)}") from None
    if not rows:
        raise ApplyError(422, f"the server has no variable {variable}")
    name, vtype, low, high, block, enum, read_only, scope = rows[0]
    return VariableMeta(
        name=str(name).lower(),
        type=str(vtype or ""),
        min=None if low is None else str(low),
        max=None if high is None else str(high),
        block_size=None if block is None else str(block),
        enum_values=[v for v in str(enum or "").split(",") if v],
        read_only=str(read_only).upper() == "YES",
        scope=None if scope is None else str(scope),
    )


async def read_global(session: AdminSession, variable: str) -> object:
    # The identifier comes from the allow-list and matched [a-z][a-z0-9_]* (allowlist.refusal).
    rows = await session.fetch(f"SELECT @@GLOBAL.{variable}")
    return rows[0][0]


class Applier:
    def __init__(self, settings: Settings, store: SqlStore, audit: AuditLog) -> None:
        self.settings = settings
        self.store = store
        self.audit = audit
        self.targets = {t.name: t for t in settings.targets}
        self._locks = {name: asyncio.Lock() for name in self.targets}

    async def _server(self, name: str) -> ServerInfo | None:
        latest = await self.store.latest(name)
        return latest[0].server if latest else None

    def _check_allowed(self, target: TargetConfig, variable: str) -> None:
        why = refusal(target, variable)
        if why is not None:
            raise ApplyError(403 if "not configured" in why else 422, why)

    async def preview(self, name: str, variable: str, value: str) -> ApplyPreview:
        target = self.targets[name]
        self._check_allowed(target, variable)
        server = await self._server(name)
        session = await open_admin(target, server)
        try:
            meta = await read_meta(session, variable)
            typed = _validated(meta, value)
            current = normalise(meta, await read_global(session, variable))
        finally:
            session.close()
        flavor = server.flavor if server else "mariadb"
        persist = supports_set_persist(flavor, server.version_tuple if server else (0, 0, 0))
        return ApplyPreview(
            target=name,
            variable=variable,
            current=current,
            proposed=str(typed),
            meta=meta,
            what_happens=(
                f"SET GLOBAL {variable} = {typed} through the admin credential on the {session.port_kind}:"
                " takes effect at once for the whole server and lasts until the server restarts"
                + (
                    "; existing connections keep their session value, new ones get this"
                    if (meta.scope or "").upper() == "SESSION"
                    else ""
                )
                + ("; SET PERSIST would keep it" if persist else "; add the config snippet to keep it")
                + "."
            ),
            config_snippet=config_snippet(flavor, variable, str(typed)),
            persist_sql=f"SET PERSIST {variable} = {typed}" if persist else None,
            port_kind=session.port_kind,
        )

    async def apply(
        self,
        name: str,
        variable: str,
        value: str,
        actor: Actor,
        *,
        recommendation_id: str | None = None,
        guard: bool = False,
        action: str = "apply",
        reverts_id: int | None = None,
    ) -> AuditEntry:
        target = self.targets[name]
        self._check_allowed(target, variable)
        server = await self._server(name)
        async with self._locks[name]:
            session = await open_admin(target, server)
            try:
                return await self._apply_locked(
                    session,
                    target,
                    server,
                    variable,
                    value,
                    actor,
                    recommendation_id,
                    guard,
                    action,
                    reverts_id,
                )
            finally:
                session.close()

    async def _apply_locked(
        self,
        session: AdminSession,
        target: TargetConfig,
        server: ServerInfo | None,
        variable: str,
        value: str,
        actor: Actor,
        recommendation_id: str | None,
        guard: bool,
        action: str,
        reverts_id: int | None,
    ) -> AuditEntry:
        meta = await read_meta(session, variable)
        typed = _validated(meta, value)
        old = normalise(meta, await read_global(session, variable))
        wanted = str(typed)
        if old == wanted:
            raise ApplyError(409, f"{variable} is already {wanted}")
        record: dict[str, Any] = {
            "ts": time.time(),
            "target": target.name,
            "action": action,
            "variable": variable,
            "old_value": old,
            "new_value": wanted,
            "user": actor.user,
            "address": actor.address,
            "recommendation_id": recommendation_id,
            "reverts_id": reverts_id,
            "port_kind": session.port_kind,
            "guarded": guard,
        }
        try:
            # Identifier: allow-listed and [a-z0-9_] only; value: bound by the driver, typed.
            await session.fetch(f"SET GLOBAL {variable} = %s", (typed,))
            warnings = await session.fetch("SHOW WARNINGS")
            stored = normalise(meta, await read_global(session, variable))
        except aiomysql.Error as exc:
            detail = f"the server refused: {describe_mysql_error(exc)}"
            entry = await self.audit.add(**record, result="failed", detail=detail)
            log.warning("target %s: SET GLOBAL %s failed: %s", target.name, variable, detail)
            raise ApplyError(502, detail, entry) from None
        warning_text = "; ".join(f"{w[0]} {w[1]}: {w[2]}" for w in warnings) or None
        if stored != wanted:
            # Clamped or rounded despite validation: put the old value back, report the failure.
            undo = _validated(meta, old)
            try:
                await session.fetch(f"SET GLOBAL {variable} = %s", (undo,))
                undone = "the old value was restored"
            except aiomysql.Error as exc:
                undone = f"restoring the old value FAILED: {describe_mysql_error(exc)}"
            detail = (
                f"the server stored {stored} instead of {wanted} ({warning_text or 'no warning'}); {undone}"
            )
            entry = await self.audit.add(**record, result="failed", detail=detail)
            raise ApplyError(502, detail, entry)
        if guard:
            record["guard_status"] = "watching"
            record["guard_until"] = record["ts"] + self.settings.guard_window_s
        entry = await self.audit.add(**record, result="applied", detail=warning_text)
        log.info(
            "target %s: %s set %s %s -> %s (%s, audit #%d)",
            target.name,
            actor.user,
            variable,
            old,
            wanted,
            action,
            entry.id,
        )
        flavor = server.flavor if server else "mariadb"
        return entry.model_copy(update={"config_snippet": config_snippet(flavor, variable, wanted)})

    async def revert(self, name: str, change_id: int, actor: Actor, *, action: str = "revert") -> AuditEntry:
        """Put back the value a change replaced; refuses when the variable was changed since."""
        original = await self.audit.get(change_id)
        if original is None or original.target != name:
            raise ApplyError(404, f"no change #{change_id} on {name}")
        if original.result != "applied" or original.old_value is None:
            raise ApplyError(409, f"change #{change_id} was not applied; nothing to revert")
        if original.reverted_by_id is not None:
            raise ApplyError(409, f"change #{change_id} was already reverted by #{original.reverted_by_id}")
        server_now = await self._current(name, original.variable)
        if server_now is not None and server_now != original.new_value:
            raise ApplyError(
                409,
                f"{original.variable} is {server_now} now, not the {original.new_value} change #{change_id} set:"
                " it was changed since; apply the value you want instead",
            )
        entry = await self.apply(
            name, original.variable, original.old_value, actor, action=action, reverts_id=change_id
        )
        await self.audit.update(change_id, reverted_by_id=entry.id)
        if original.guard_status == "watching" and action == "revert":
            await self.audit.update(
                change_id, guard_status="superseded", guard_note=f"reverted by {actor.user} (#{entry.id})"
            )
        return entry

    async def _current(self, name: str, variable: str) -> str | None:
        target = self.targets[name]
        session = await open_admin(target, await self._server(name))
        try:
            meta = await read_meta(session, variable)
            return normalise(meta, await read_global(session, variable))
        finally:
            session.close()


def _validated(meta: VariableMeta, value: str) -> int | str:
    try:
        return validate(meta, value)
    except InvalidValue as exc:
        raise ApplyError(422, str(exc)) from None
