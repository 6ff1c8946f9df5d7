"""Holders from one poll's rows: the group rule, row-lock and metadata-lock blockers, the notes."""

from poolscope.analysis.holders import HolderInputs, MetadataLock, derive_holders, mariadb_group
from poolscope.analysis.session_identity import SessionIdentities, SessionIdentity
from poolscope.schemas import ServerInfo, Session, Transaction
from tests.poller.helpers import group_state

MARIADB = ServerInfo(
    flavor="mariadb",
    version="10.11.19",
    thread_handling="pool-of-threads",
    pool_enabled=True,
    pool_kind="mariadb",
)
MARIADB_PS = MARIADB.model_copy(update={"performance_schema": True})
ENTERPRISE = ServerInfo(
    flavor="mysql",
    version="8.0.36",
    thread_handling="loaded-dynamically",
    pool_enabled=True,
    pool_kind="mysql_enterprise",
)
PERCONA = ServerInfo(
    flavor="percona",
    version="8.4.2",
    thread_handling="pool-of-threads",
    pool_enabled=True,
    pool_kind="percona",
)


def _session(id_: int, info: str, state: str | None = None, command: str = "Query") -> Session:
    return Session(
        id=id_,
        user="app",
        host=f"10.0.0.{id_}:5000",
        command=command,
        time_s=float(id_),
        state=state,
        info=info,
    )


def test_the_rule_is_id_modulo_pool_size():
    assert [mariadb_group(i, 4) for i in (8, 9, 10, 15)] == [0, 1, 2, 3]


def test_holders_are_placed_by_the_rule_and_only_wanted_groups_are_listed():
    sessions = [
        _session(4, "SELECT 1"),
        _session(5, "SELECT 2"),
        _session(7, "SELECT SLEEP(3)"),
        _session(9, "x", command="Daemon"),
    ]
    inputs = HolderInputs(sessions=sessions, by_id={s.id: s for s in sessions}, transactions=[])
    groups = [group_state(queue_length=0), group_state(queue_length=3).model_copy(update={"group_id": 1})]
    listed, scope, notes = derive_holders(MARIADB, 2, groups, {1}, inputs, SessionIdentities())
    assert scope == "group" and notes == []
    (one,) = listed
    assert one.group_id == 1 and one.queue_length == 3
    assert [h.connection_id for h in one.holders] == [7, 5]  # longest running first; Daemon is no client
    assert one.holders[0].digest_text == "SELECT SLEEP(?)" and one.holders[0].digest_source == "poolscope"


def test_a_row_lock_waiter_names_the_blocking_transaction_and_its_idle_connection():
    waiter = _session(3, "UPDATE t SET v = 2 WHERE id = 1", state="Updating")
    inputs = HolderInputs(
        sessions=[waiter],
        by_id={3: waiter},
        transactions=[
            Transaction(trx_id="501", state="LOCK WAIT", thread_id=3),
            Transaction(trx_id="500", state="RUNNING", thread_id=8, age_s=40.0, query=None),
        ],
        lock_waits=[("501", "500")],
    )
    identities = SessionIdentities()
    identities.learn({8: SessionIdentity("batch", "10.0.0.8:4000", "shop")})
    (group,), _, _ = derive_holders(MARIADB, 1, [group_state(2)], {0}, inputs, identities)
    (holder,) = group.holders
    assert holder.waits_on == "row lock"
    (blocker,) = holder.blockers
    assert (blocker.kind, blocker.connection_id, blocker.user, blocker.trx_id, blocker.trx_age_s) == (
        "row_lock",
        8,
        "batch",
        "500",
        40.0,
    )
    assert blocker.command == "Sleep"  # idle inside its transaction: not in the active processlist


def test_a_metadata_lock_waiter_names_the_holder_from_performance_schema():
    waiter = _session(3, "SELECT * FROM t", state="Waiting for table metadata lock")
    ddl = _session(6, "ALTER TABLE t ADD COLUMN c INT", state="altering table")
    inputs = HolderInputs(
        sessions=[waiter, ddl],
        by_id={3: waiter, 6: ddl},
        transactions=[],
        metadata_locks=[
            MetadataLock("TABLE shop.t", "SHARED_READ", False, 103),
            MetadataLock("TABLE shop.t", "EXCLUSIVE", True, 106),
            MetadataLock("TABLE shop.other", "SHARED_READ", True, 107),
        ],
        mdl_instrument=True,
        thread_connections={103: 3, 106: 6, 107: 7},
    )
    (group,), _, notes = derive_holders(MARIADB_PS, 1, [group_state(1)], {0}, inputs, SessionIdentities())
    holder = next(h for h in group.holders if h.connection_id == 3)
    assert holder.waits_on == "metadata lock" and notes == []
    (blocker,) = holder.blockers
    assert (blocker.kind, blocker.connection_id, blocker.object, blocker.lock_type) == (
        "metadata_lock",
        6,
        "TABLE shop.t",
        "EXCLUSIVE",
    )
    assert blocker.statement == "ALTER TABLE t ADD COLUMN c INT"


def test_without_the_performance_schema_the_note_says_how_to_turn_it_on():
    waiter = _session(3, "SELECT * FROM t", state="Waiting for table metadata lock")
    inputs = HolderInputs(sessions=[waiter], by_id={3: waiter}, transactions=[])
    _, _, notes = derive_holders(MARIADB, 1, [group_state(1)], {0}, inputs, SessionIdentities())
    assert notes and "performance_schema=ON" in notes[0]
    inputs.metadata_locks, inputs.mdl_instrument = [], False
    _, _, notes = derive_holders(MARIADB_PS, 1, [group_state(1)], {0}, inputs, SessionIdentities())
    assert "setup_instruments SET ENABLED = 'YES'" in notes[0]


def test_mysql_enterprise_places_holders_through_tp_thread_state_and_uses_the_server_digest():
    sessions = [_session(30, "SELECT c FROM t WHERE id = 7"), _session(31, "SELECT 1")]
    inputs = HolderInputs(
        sessions=sessions,
        by_id={s.id: s for s in sessions},
        transactions=[],
        thread_connections={61: 30, 130: 30},
        busy_threads={61: (2, "THD_WAIT_ROW_LOCK")},
        server_digests={130: ("ab" * 32, "SELECT `c` FROM `t` WHERE `id` = ?")},
    )
    groups = [group_state(1).model_copy(update={"group_id": 2})]
    (group,), scope, _ = derive_holders(ENTERPRISE, 4, groups, {2}, inputs, SessionIdentities())
    assert scope == "group" and group.group_id == 2
    (holder,) = group.holders  # 31 runs on no pool thread that tp_thread_state lists
    assert (holder.connection_id, holder.digest_source, holder.waits_on) == (30, "server", "row lock")


def test_percona_lists_holders_for_the_whole_pool():
    sessions = [_session(30, "SELECT 1")]
    inputs = HolderInputs(sessions=sessions, by_id={30: sessions[0]}, transactions=[])
    listed, scope, _ = derive_holders(PERCONA, 4, [], None, inputs, SessionIdentities())
    assert scope == "server" and [g.group_id for g in listed] == [None]
