"""Which poller process polls which target: rendezvous hashing over live members, leases in the store.

Every poller process is a member: a row it heartbeats every renew interval (a third of the TTL).
A target belongs to the live member with the highest hash of (member, target), so when a member
joins or dies only the targets it wins or held move. Belonging is not enough to poll: a process
polls a target only while it holds the target's lease, a row (target, owner, expires_at) taken by
a conditional UPDATE that succeeds only when the row is expired or already its own. So two
processes never poll one target, even while they disagree about who is alive.

Expiry is judged by one clock: the database's on PostgreSQL and MySQL/MariaDB (pollers on several
hosts); SQLite is one host, whose processes share the system clock. A lease expires at the same
instant as its owner's heartbeat (both are written with the cycle's first clock reading). Locally, a
lease counts until a monotonic deadline taken before that reading, less a margin: this process
stops polling before the store lets anyone else take the target.

When the store cannot be reached, a member keeps the targets it holds for `grace_s` more (it goes on
polling them from memory, store/writer.py holds what it makes), and the store lets no other member
take an expired lease until `grace_s` after its expiry: a member cut off from the store but alive
is never polled beside (docs/decisions/0301-store-outage-grace.md). The cost is a dead member's
targets waiting `grace_s` longer for a new owner, unless it is known dead: a member of this host
whose process is gone (a poller that crashed, restarted by `serve`) is taken over at once.

A handoff (a member joins or leaves, and targets move) is the one moment when a target has no
lease for a while: its holder gives it up, then its new owner claims it at its next round. If the
store fails in between, the new owner never learns the target is free, so the member that gave it
up polls it again, from memory, until it has seen the new owner hold it (the pending handoffs of
cut_off). Both sides round again at once while a handoff is under way (HANDOFF_ROUNDS), so it
lasts a fraction of a renew interval: only a store that fails inside that fraction, after the claim
and before its holder saw it, has the target polled by both until the store is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Collection, Iterable

from sqlalchemy import bindparam, delete, insert, or_, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from poolscope.clock import SYSTEM, Clock
from poolscope.fleet.tables import fleet_members, target_leases
from poolscope.store.backlog import pid_alive
from poolscope.store.health import StoreHealth, is_outage

log = logging.getLogger(__name__)

# (gained, lost): told after leases are won, and before a lease given up is freed in the store.
OwnershipListener = Callable[[set[str], set[str]], Awaitable[None]]
# The store's time on a connection, in seconds since the epoch (store_now, or a test clock's).
StoreClock = Callable[[AsyncConnection], Awaitable[float]]
# Members silent this many TTLs are deleted, so the table does not grow with restarts.
FORGET_AFTER_TTLS = 10
# Lease rounds per renew interval while a handoff is under way (targets this member gave up not yet
# seen held by their new owner, or targets it should own still held by another live member).
HANDOFF_ROUNDS = 8


def default_node_id() -> str:
    """host:pid, unique across a fleet while the process lives."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _score(member: str, target: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{member}\0{target}".encode(), digest_size=8).digest(), "big")


def rendezvous_owner(target: str, members: Iterable[str]) -> str | None:
    """The member with the highest (hash, name) for this target; None when there is no member."""
    return max(members, key=lambda m: (_score(m, target), m), default=None)


async def store_now(conn: AsyncConnection) -> float:
    """Seconds since the epoch by the store's clock (SQLite: this host's)."""
    dialect = conn.dialect.name
    if dialect == "postgresql":
        return float((await conn.execute(text("SELECT extract(epoch from clock_timestamp())"))).scalar_one())
    if dialect in ("mysql", "mariadb"):
        return float((await conn.execute(text("SELECT UNIX_TIMESTAMP(NOW(6))"))).scalar_one())
    return time.time()


_LEASE = target_leases.c
# Built once with an expanding list parameter: built each round, the IN of a few hundred literal
# targets (each coerced on its own) was ~10 % of a round's CPU.
_RENEW = (
    update(target_leases)
    .where(
        _LEASE.target.in_(bindparam("targets", expanding=True)),
        or_(
            _LEASE.owner == bindparam("me"),
            _LEASE.expires_at < bindparam("expired_before"),
            _LEASE.owner.in_(bindparam("dead", expanding=True)),
        ),
    )
    .values(owner=bindparam("me"), expires_at=bindparam("until"))
)
_OWNERS = select(_LEASE.target, _LEASE.owner).where(_LEASE.target.in_(bindparam("targets", expanding=True)))


class DuplicateNodeId(RuntimeError):
    """Another live process heartbeats under this poller's node_id."""


class LeaseKeeper:
    def __init__(
        self,
        engine: AsyncEngine,
        node_id: str,
        targets: Callable[[], Collection[str]],
        *,
        ttl_s: float = 6.0,
        grace_s: float = 0.0,
        clock: Clock = SYSTEM,
        store_clock: StoreClock = store_now,
        health: StoreHealth | None = None,
    ) -> None:
        self.engine = engine
        self.node_id = node_id
        self.targets = targets
        self.ttl_s = ttl_s
        # Local deadlines and the rounds' pace; expiry is judged by store_clock (the module's docstring).
        self.clock = clock
        self.store_clock = store_clock
        self.renew_s = ttl_s / 3
        # Poll only with this much of the lease left: a poll started just before the deadline
        # then still ends well before anyone else may start one.
        self.margin_s = ttl_s / 6
        self.grace_s = grace_s
        self.health = health
        # Silent members are deleted after this: never while their leases are still protected.
        self.forget_after_s = max(FORGET_AFTER_TTLS * ttl_s, grace_s + 2 * ttl_s)
        self._renewed_at: float | None = None  # monotonic start of the last round that went through
        self.members: list[str] = []
        self._deadline: dict[str, float] = {}
        self._listeners: list[OwnershipListener] = []
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._started_at = clock.time()
        self._host, self._pid = socket.gethostname(), os.getpid()
        self._joined = False  # a heartbeat stored as this process: only then are the name's rows ours
        # (live members, targets) -> ours: hashing every target each round cost ~5 ms at 1,000.
        self._shares: tuple[frozenset[str], frozenset[str], set[str]] | None = None
        # Targets given up, by when (monotonic), that no other member was yet seen to hold: polled
        # again if the store fails before their new owner could claim them (the module's docstring).
        self._released: dict[str, float] = {}
        # A handoff is under way (released targets, or ours still held by a live member): the
        # running keeper rounds HANDOFF_ROUNDS times faster until it is over.
        self.handing_over = False
        self._waiting_since: float | None = None  # since when ours are held by a live member

    def add_listener(self, listener: OwnershipListener) -> None:
        self._listeners.append(listener)

    def holds(self, target: str) -> bool:
        deadline = self._deadline.get(target)
        return deadline is not None and self.clock.monotonic() < deadline

    def held(self) -> set[str]:
        now = self.clock.monotonic()
        return {t for t, deadline in self._deadline.items() if now < deadline}

    # --- one round: heartbeat, give up, renew and claim --------------------------------------

    async def cycle(self) -> None:
        before = self.held()
        started = self.clock.monotonic()
        names = set(self.targets())
        async with self.engine.begin() as conn:
            now = await self.store_clock(conn)
            await self._heartbeat(conn, now)
            live = await self._live_members(conn, now)
            dead = await self._dead_here(conn, now) if self.grace_s else []
        self.members = sorted(live)
        mine = self._share(frozenset(live), frozenset(names))
        letting_go = set(self._deadline) - mine
        if letting_go:
            # Stop polling first, then free the rows so their new owner can claim them at once.
            for target in letting_go:
                self._deadline.pop(target, None)
                self._released[target] = started
            await self._notify(set(), letting_go & before)
            async with self.engine.begin() as conn:
                await conn.execute(
                    delete(target_leases).where(
                        target_leases.c.owner == self.node_id, target_leases.c.target.in_(letting_go)
                    )
                )
        won, owners = await self._claim(mine, now + self.ttl_s, dead)
        self._follow_handoffs(mine, names, owners, live, started)
        self._renewed_at = started
        deadline = started + self.ttl_s - self.margin_s
        for target in list(self._deadline):
            if target not in won:
                del self._deadline[target]
        for target in won:
            self._deadline[target] = deadline
        # Told every round, changed or not: a poll loop that ended because its lease lapsed while
        # this round ran (a slow store) is started again now that the lease is renewed.
        await self._notify(won - before, (before - won) - letting_go)

    def _share(self, live: frozenset[str], names: frozenset[str]) -> set[str]:
        """The targets the hash gives us among `live` members (the same as last round's if neither changed)."""
        if self._shares is None or self._shares[:2] != (live, names):
            mine = {t for t in names if rendezvous_owner(t, live) == self.node_id}
            self._shares = (live, names, mine)
        return set(self._shares[2])

    async def _heartbeat(self, conn: AsyncConnection, now: float) -> None:
        member = fleet_members.c
        me = (member.node_id == self.node_id, member.host == self._host, member.pid == self._pid)
        beat = await conn.execute(
            update(fleet_members).where(*me, member.started_at == self._started_at).values(heartbeat_at=now)
        )
        if beat.rowcount == 0:
            other = (
                await conn.execute(
                    select(member.host, member.pid, member.heartbeat_at).where(member.node_id == self.node_id)
                )
            ).first()
            gone = other is not None and other.host == self._host and not pid_alive(other.pid)
            if other is not None and other.heartbeat_at >= now - self.ttl_s and not gone:
                # Two processes under one name would both think the name's leases are theirs and
                # poll the same targets: this one stays out until the other's heartbeat is a TTL old.
                raise DuplicateNodeId(
                    f"node_id {self.node_id!r} is in use by {other.host} pid {other.pid}: every poller"
                    " needs its own (set POOLSCOPE_NODE_ID per host, or leave node_id unset for host:pid)"
                )
            identity = {"host": self._host, "pid": self._pid, "started_at": self._started_at}
            if other is not None:  # a dead process's row under our name: ours now
                await conn.execute(
                    update(fleet_members)
                    .where(member.node_id == self.node_id)
                    .values(**identity, heartbeat_at=now)
                )
            else:
                await conn.execute(
                    insert(fleet_members).values(node_id=self.node_id, **identity, heartbeat_at=now)
                )
        self._joined = True
        await conn.execute(
            delete(fleet_members).where(fleet_members.c.heartbeat_at < now - self.forget_after_s)
        )

    async def _dead_here(self, conn: AsyncConnection, now: float) -> list[str]:
        """Silent members of this host whose process is gone: their leases need no grace."""
        member = fleet_members.c
        rows = await conn.execute(
            select(member.node_id, member.pid).where(
                member.host == self._host,
                member.node_id != self.node_id,
                member.heartbeat_at < now - self.ttl_s,
            )
        )
        return sorted(row.node_id for row in rows if not pid_alive(row.pid))

    async def _live_members(self, conn: AsyncConnection, now: float) -> set[str]:
        rows = await conn.execute(
            select(fleet_members.c.node_id).where(fleet_members.c.heartbeat_at >= now - self.ttl_s)
        )
        return {row.node_id for row in rows} | {self.node_id}

    def _follow_handoffs(
        self, mine: set[str], names: set[str], owners: dict[str, str], live: set[str], started: float
    ) -> None:
        """After a round: which targets given up are still not held by anyone else, and whether a
        handoff is under way (to round again soon)."""
        # Normally over within a round of the new owner; one that never claims (it is not given
        # this target, or died) is not waited for past a TTL.
        oldest = started - self.ttl_s
        self._released = {
            target: since
            for target, since in self._released.items()
            if target not in mine
            and target in names
            and owners.get(target, self.node_id) == self.node_id
            and since >= oldest
        }
        waiting = any(owner != self.node_id and owner in live for t, owner in owners.items() if t in mine)
        # A holder that never gives a target up (one that is not given it the same way) is not
        # waited for at this pace past a TTL either.
        if not waiting:
            self._waiting_since = None
        elif self._waiting_since is None:
            self._waiting_since = started
        waited = 0.0 if self._waiting_since is None else started - self._waiting_since
        self.handing_over = bool(self._released) or (waiting and waited < self.ttl_s)

    async def _claim(
        self, mine: set[str], expires_at: float, dead: list[str]
    ) -> tuple[set[str], dict[str, str]]:
        """Renew our leases among `mine`, take the expired ones and create the missing rows; returns
        the targets whose lease we now hold, and the owners of `mine` and of the targets we gave up
        (as read before the missing rows were created). One UPDATE renews them all (not one per lease)."""
        targets = sorted(mine)
        released = sorted(self._released)
        if not targets and not released:
            return set(), {}
        async with self.engine.begin() as conn:
            now = await self.store_clock(conn)
            if released:
                # Rows we gave up whose delete failed (the store went away mid-round) are freed now.
                await conn.execute(
                    delete(target_leases).where(
                        target_leases.c.owner == self.node_id, target_leases.c.target.in_(released)
                    )
                )
            if targets:
                await conn.execute(
                    _RENEW,
                    {
                        "targets": targets,
                        "me": self.node_id,
                        "expired_before": now - self.grace_s,
                        "dead": dead,
                        "until": expires_at,
                    },
                )
            read = sorted(mine | self._released.keys())
            owners = {row.target: row.owner for row in await conn.execute(_OWNERS, {"targets": read})}
        won = {target for target, owner in owners.items() if owner == self.node_id and target in mine}
        missing = sorted(mine - owners.keys())
        if missing:
            won |= await self._insert(missing, expires_at)
        return won, owners

    async def _insert(self, targets: list[str], expires_at: float) -> set[str]:
        """Create these lease rows as ours; returns the ones created."""
        rows = [{"target": t, "owner": self.node_id, "expires_at": expires_at} for t in targets]
        try:
            async with self.engine.begin() as conn:
                await conn.execute(insert(target_leases), rows)
            return set(targets)
        except IntegrityError:
            pass
        # Another member created some of them in between (it thought it owned them): take the
        # rest one by one; the ones it created stay its own until they expire.
        created: set[str] = set()
        for row in rows:
            with contextlib.suppress(IntegrityError):
                async with self.engine.begin() as conn:
                    await conn.execute(insert(target_leases).values(**row))
                created.add(str(row["target"]))
        return created

    async def _notify(self, gained: set[str], lost: set[str]) -> None:
        for listener in self._listeners:
            try:
                await listener(gained, lost)
            except Exception:
                log.exception("fleet: an ownership listener failed")

    # --- running -------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="fleet-leases")

    async def _run(self) -> None:
        while not self._stopping.is_set():
            started = self.clock.monotonic()
            if await self.round():
                every = self.renew_s / HANDOFF_ROUNDS if self.handing_over else self.renew_s
            else:
                every = self.renew_s / 4  # soon: the deadline runs
            # Rounds start every renew_s, however long one waited for the store: counted from the
            # end, a round that waited seconds for SQLite's write lock (a busy poller's batch)
            # left the next one past the deadline, and every target's loop stopped until then.
            await self.clock.sleep(every - (self.clock.monotonic() - started))  # stop() cancels it

    async def round(self) -> bool:
        """One lease round as the running keeper does it, failures included; True when it went
        through. The store unreachable: the grace starts (cut_off)."""
        try:
            # Bounded: a store that hangs (a partitioned network) must not keep the round from
            # failing, and the grace from starting, until the leases lapse.
            async with asyncio.timeout(self.ttl_s / 2):
                await self.cycle()
        except DuplicateNodeId as exc:
            log.error("fleet: %s", exc)  # polls nothing meanwhile: it holds no lease
            return False
        except Exception as exc:
            if not is_outage(exc):
                log.exception("fleet: lease round of %s failed", self.node_id)
                return False
            self.cut_off(exc)
            await self._notify(set(), set())  # loops that ended on a lapsed lease start again
            return False
        if self.health is not None:
            self.health.ok()
        return True

    def cut_off(self, error: BaseException) -> None:
        """The store cannot be reached: the targets held keep their lease until grace_s after it
        would have lapsed (the store lets no one else take them before), then polling stops. The
        targets given up that no one was seen to hold yet are polled again as long: their new
        owner cannot learn they are free (the module's docstring)."""
        if self.health is not None:
            self.health.failed(error, "renewing leases")
        if self._renewed_at is None or not self.grace_s:
            return
        until = self._renewed_at + self.ttl_s + self.grace_s - self.margin_s
        for target in self._released:
            self._deadline.setdefault(target, until)
        for target in self._deadline:
            self._deadline[target] = max(self._deadline[target], until)

    async def stop(self) -> None:
        """Stop renewing, stop polling, then free our leases and leave, so others take over at once."""
        self._stopping.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        held = self.held()
        self._deadline.clear()
        if held:
            await self._notify(set(), held)
        if not self._joined:
            return  # the name's rows, if any, are another process's
        with contextlib.suppress(Exception):
            async with self.engine.begin() as conn:
                await conn.execute(delete(target_leases).where(target_leases.c.owner == self.node_id))
                await conn.execute(delete(fleet_members).where(fleet_members.c.node_id == self.node_id))
