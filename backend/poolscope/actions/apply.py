"""Apply and revert variable changes through the target's separate admin credential.

validate (allow-list, then the server's SYSTEM_VARIABLES) → SET GLOBAL with the value bound as
a parameter → read back + SHOW WARNINGS → audit. If the server stored anything other than the
validated value, the old value is put back and the change reported as failed: nothing is left
half-applied. Everything that reads or sets a target's variables runs under that target's lock,
revert's "is it still the value we set?" check included, so an apply and a revert (or the
guard's automatic one) cannot interleave; every statement is bounded (actions/admin.py). When
the SET's answer or the read-back is lost, the value is read again on a new connection; if that
fails too, the change is audited as "unverified": probably in effect, and revertible.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from poolscope.actions.admin import (
    AdminLimits,
    AdminSession,
    StatementTimeout,
    current_value,
    describe,
    open_admin,
    read_global,
    read_meta,
)
from poolscope.actions.allowlist import refused
from poolscope.actions.audit import AuditLog
from poolscope.actions.fleet import TargetLocks, process_owner
from poolscope.actions.models import TOOK_EFFECT, ApplyPreview, AuditEntry, VariableMeta
from poolscope.actions.validate import InvalidValue, validate
from poolscope.clock import SYSTEM, Clock
from poolscope.config import Settings, TargetConfig
from poolscope.errors import Conflict, DomainError, InvalidInput, NotFound, ServerFailed, ServerTimeout
from poolscope.poller.connection import MySQLError
from poolscope.recommend.flavors import config_snippet, supports_set_persist
from poolscope.schemas import ServerInfo
from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)


@dataclass
class Actor:
    user: str
    address: str | None


@dataclass
class _Change:
    """What a SET is for: the audit fields that do not come from the server."""

    action: str
    actor: Actor
    recommendation_id: str | None = None
    reverts_id: int | None = None
    guard: bool = False
    note: str | None = None  # leads the audit detail


class Applier:
    def __init__(self, settings: Settings, store: SqlStore, audit: AuditLog, clock: Clock = SYSTEM) -> None:
        self.settings = settings
        self.store = store
        self.audit = audit
        self.clock = clock  # a change's time, from which the guard's windows count
        self.targets = {t.name: t for t in settings.targets}
        # One apply or revert per target at a time, across every process of a fleet.
        self.locks = TargetLocks(store.engine)
        self.owner = process_owner()  # a guarded change's watcher (actions/fleet.py Presence)

    async def _server(self, name: str) -> ServerInfo | None:
        latest = await self.store.latest(name)
        return latest[0].server if latest else None

    def _check_allowed(self, target: TargetConfig, variable: str) -> None:
        error = refused(target, variable)
        if error is not None:
            raise error

    async def _open(self, target: TargetConfig, server: ServerInfo | None) -> AdminSession:
        return await open_admin(target, server, AdminLimits.of(self.settings, target))

    async def preview(self, name: str, variable: str, value: str) -> ApplyPreview:
        target = self.targets[name]
        self._check_allowed(target, variable)
        server = await self._server(name)
        session = await self._open(target, server)
        try:
            meta = await read_meta(session, variable)
            typed = _validated(meta, value)
            current = await current_value(session, meta)
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
            guard_default=self.settings.guard_by_default,
            guard_window_s=self.settings.guard_window_s,
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
    ) -> AuditEntry:
        target = self.targets[name]
        self._check_allowed(target, variable)
        server = await self._server(name)
        change = _Change("apply", actor, recommendation_id=recommendation_id, guard=guard)
        async with self.locks.hold(name):
            session = await self._open(target, server)
            try:
                meta = await read_meta(session, variable)
                typed = _validated(meta, value)
                old = await current_value(session, meta)
                if old == str(typed):
                    raise Conflict(f"{variable} is already {typed}")
                entry = await self._set(session, target, meta, old, typed, change)
            finally:
                session.close()
        flavor = server.flavor if server else "mariadb"
        return entry.model_copy(update={"config_snippet": config_snippet(flavor, variable, entry.new_value)})

    async def revert(
        self, name: str, change_id: int, actor: Actor, *, guard_reason: str | None = None
    ) -> AuditEntry:
        """Put back the value a change replaced; refused when the variable was changed since.

        With `guard_reason` it is the guard's automatic revert: refused unless the change is
        still watched (a newer change of the variable, or a person, may have ended the watch).
        """
        target = self.targets[name]
        server = await self._server(name)
        auto = guard_reason is not None
        async with self.locks.hold(name):
            original = await self._revertible(name, change_id, auto)
            assert original.old_value is not None  # _revertible checked
            self._check_allowed(target, original.variable)
            session = await self._open(target, server)
            try:
                meta = await read_meta(session, original.variable)
                now = await current_value(session, meta)
                if now != original.new_value:
                    raise Conflict(
                        f"{original.variable} is {now} now, not the {original.new_value} change #{change_id}"
                        " set: it was changed since (or never took effect); apply the value you want instead",
                    )
                change = _Change(
                    "auto_revert" if auto else "revert",
                    actor,
                    reverts_id=change_id,
                    note=f"guard of #{change_id}: {guard_reason}" if auto else None,
                )
                typed = _validated(meta, original.old_value)
                entry = await self._set(session, target, meta, now, typed, change)
            finally:
                session.close()
            await self.audit.update(change_id, reverted_by_id=entry.id)
            if auto:
                await self.audit.end_watch(
                    change_id, "reverted", f"reverted automatically (#{entry.id}): {guard_reason}"
                )
            else:
                await self.audit.end_watch(change_id, "superseded", f"reverted by {actor.user} (#{entry.id})")
        return entry

    async def _revertible(self, name: str, change_id: int, auto: bool) -> AuditEntry:
        # Read under the lock: a revert that finished a moment ago is seen.
        original = await self.audit.get(change_id)
        if original is None or original.target != name:
            raise NotFound(f"no change #{change_id} on {name}")
        if original.result not in TOOK_EFFECT or original.old_value is None:
            raise Conflict(f"change #{change_id} was not applied; nothing to revert")
        if original.reverted_by_id is not None:
            raise Conflict(f"change #{change_id} was already reverted by #{original.reverted_by_id}")
        if auto and original.guard_status != "watching":
            raise Conflict(f"change #{change_id} is no longer guarded ({original.guard_status})")
        return original

    async def _set(
        self,
        session: AdminSession,
        target: TargetConfig,
        meta: VariableMeta,
        old: str,
        typed: int | str,
        change: _Change,
    ) -> AuditEntry:
        variable, wanted = meta.name, str(typed)
        record: dict[str, Any] = {
            "ts": self.clock.time(),
            "target": target.name,
            "action": change.action,
            "variable": variable,
            "old_value": old,
            "new_value": wanted,
            "user": change.actor.user,
            "address": change.actor.address,
            "recommendation_id": change.recommendation_id,
            "reverts_id": change.reverts_id,
            "port_kind": session.port_kind,
            "guarded": change.guard,
        }
        lost: str | None = None  # why the value is read on a new connection
        try:
            # Identifier: allow-listed and [a-z0-9_] only; value: bound by the driver, typed.
            await session.fetch(f"SET GLOBAL {variable} = %s", (typed,))
        except StatementTimeout as exc:
            lost = f"the server did not answer SET GLOBAL ({exc}); that connection was killed"
        except MySQLError as exc:
            detail = f"the server refused: {describe(exc)}"
            entry = await self.audit.add(**record, result="failed", detail=detail)
            log.warning("target %s: SET GLOBAL %s failed: %s", target.name, variable, detail)
            raise ServerFailed(detail, audit_id=entry.id) from None
        answered = lost is None
        warnings: list[tuple[Any, ...]] = []
        stored: str | None = None
        if answered:
            try:
                warnings = await session.fetch("SHOW WARNINGS")
                stored = await read_global(session, meta)
            except (MySQLError, StatementTimeout) as exc:
                lost = f"SET GLOBAL was accepted but reading the value back failed ({describe(exc)})"
        if stored is None:
            try:
                await session.reopen()
                stored = await read_global(session, meta)
            except (DomainError, MySQLError, StatementTimeout) as exc:
                maybe = f"probably {wanted}" if answered else f"{wanted} or still {old}"
                detail = (
                    f"{lost}; reading it on a new connection failed too ({describe(exc)}):"
                    f" {variable} is {maybe}; a revert puts back {old}"
                )
                return await self._took_effect(record, "unverified", _joined(change.note, detail), change)
            lost = f"{lost}; read back on a new connection: {stored}"
        warning_text = "; ".join(f"{w[0]} {w[1]}: {w[2]}" for w in warnings) or None
        if stored == wanted:
            return await self._took_effect(
                record, "applied", _joined(change.note, lost, warning_text), change
            )
        if not answered and stored == old:
            detail = f"{lost}; {variable} is still {old}"
            entry = await self.audit.add(**record, result="failed", detail=detail)
            log.warning("target %s: SET GLOBAL %s timed out: %s", target.name, variable, detail)
            raise ServerTimeout(detail, audit_id=entry.id)
        # Clamped or rounded despite validation: put the old value back, report the failure. The
        # audit row is written whatever the undo meets (a lost connection, an old value the range
        # read refuses): it is the only record of the server's state.
        try:
            await session.fetch(f"SET GLOBAL {variable} = %s", (_restorable(meta, old),))
            undone = "the old value was restored"
        except Exception as exc:
            undone = f"restoring the old value FAILED: {describe(exc)}"
        detail = f"the server stored {stored} instead of {wanted} ({warning_text or 'no warning'}); {undone}"
        entry = await self.audit.add(**record, result="failed", detail=_joined(lost, detail))
        raise ServerFailed(detail, audit_id=entry.id)

    async def _took_effect(
        self, record: dict[str, Any], result: str, detail: str | None, change: _Change
    ) -> AuditEntry:
        if change.guard:
            record["guard_status"] = "watching"
            record["guard_owner"] = self.owner
            record["guard_until"] = record["ts"] + self.settings.guard_window_s
        entry = await self.audit.add(**record, result=result, detail=detail)
        await self.audit.supersede_watches(entry, keep=change.reverts_id)
        log.log(
            logging.INFO if result == "applied" else logging.WARNING,
            "target %s: %s set %s %s -> %s (%s, %s, audit #%d)",
            entry.target,
            entry.user,
            entry.variable,
            entry.old_value,
            entry.new_value,
            entry.action,
            result,
            entry.id,
        )
        return entry


def _joined(*parts: str | None) -> str | None:
    return "; ".join(p for p in parts if p) or None


def _restorable(meta: VariableMeta, old: str) -> int | str:
    """The old value as SET GLOBAL takes it, even where the range read refuses it: the server held it."""
    try:
        return validate(meta, old)
    except InvalidValue:
        return int(old) if old.lstrip("-").isdigit() else old


def _validated(meta: VariableMeta, value: str) -> int | str:
    try:
        return validate(meta, value)
    except InvalidValue as exc:
        raise InvalidInput(str(exc)) from None
