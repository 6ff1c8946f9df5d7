"""Chart statements compiled once per shape and run on the driver.

Building a SQLAlchemy statement and compiling it cost more than a short read itself: the
recommender reads 300 s of history per target every recommend_interval_s.
A statement is built from named bind parameters plus one expanding list (series ids, metric
names), compiled once per dialect, shape and padded list length, and its SQL text is reused.
The list is padded to a power of two by repeating its last item (an IN list does not mind), so
few texts exist per shape and the database's own statement cache (asyncpg's) hits too.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BindParameter, CompoundSelect, Integer, Select, bindparam
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.types import TypeEngine

ITEMS = "items"
# Shapes x dialects x list lengths stay far below this; a bound keeps memory bounded regardless.
MAX_CACHED = 512


@dataclass(frozen=True, slots=True)
class Prepared:
    sql: str
    # Each positional parameter in order: a named value, or an index into the padded list.
    order: tuple[str | int, ...]
    size: int  # the padded list length

    def params(self, values: Mapping[str, Any], items: Sequence[Any]) -> list[Any]:
        last = len(items) - 1
        return [values[p] if isinstance(p, str) else items[min(p, last)] for p in self.order]


_cache: dict[tuple[Hashable, ...], Prepared] = {}


def param(name: str, example: float | str = 0.0) -> BindParameter[Any]:
    """A named value of a prepared statement; the example gives its type (compiling needs one)."""
    return bindparam(name, value=example)


def padded(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def prepare(
    dialect: Dialect,
    shape: tuple[Hashable, ...],
    n_items: int,
    build: Callable[[BindParameter[Any]], Select[Any] | CompoundSelect[Any]],
    item_type: TypeEngine[Any] | None = None,
) -> Prepared:
    """The compiled text of `build(list parameter)` for this shape and list length.

    `build` names every other value with param(); the shape must say everything that changes the
    statement besides those values (table, aggregate, grouping). `item_type` is the list items'
    column type (PostgreSQL casts each parameter to it); integers by default.
    """
    size = padded(n_items)
    key = (dialect.name, dialect.driver, dialect.paramstyle, size, *shape)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    # The list's values are their own indexes, so each expanded parameter says where it reads.
    stmt = build(bindparam(ITEMS, value=list(range(size)), expanding=True, type_=item_type or Integer()))
    compiled = stmt.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    order: list[str | int] = []
    for name in compiled.positiontup or ():
        bound = compiled.binds.get(name)
        if bound is not None and not bound.unique and not bound.expanding:
            order.append(name)
        elif bound is None and name.startswith(ITEMS + "_"):
            order.append(int(compiled.params[name]))
        else:  # an anonymous literal would be frozen into the cached text
            raise ValueError(f"statement {shape!r} has an unnamed parameter {name!r}")
    if len(_cache) >= MAX_CACHED:
        _cache.clear()
    prepared = _cache[key] = Prepared(str(compiled), tuple(order), size)
    return prepared


async def fetch_all(
    conn: AsyncConnection, prepared: Prepared, values: Mapping[str, Any], items: Sequence[Any]
) -> Sequence[Sequence[Any]]:
    """All rows as plain tuples: straight from the driver on SQLite and PostgreSQL (SQLAlchemy's
    per-row result processing cost more than the query on a day-long page)."""
    params = prepared.params(values, items)
    name = conn.dialect.name
    if name == "sqlite":
        driver: Any = (await conn.get_raw_connection()).driver_connection
        # One trip to aiosqlite's thread, not three (execute, fetchall, close): each trip cost about
        # as much CPU as a short read itself.
        return list(await driver.execute_fetchall(prepared.sql, params))
    if name == "postgresql":
        driver = (await conn.get_raw_connection()).driver_connection
        return list(await driver.fetch(prepared.sql, *params))
    return (await conn.exec_driver_sql(prepared.sql, tuple(params))).all()


@contextlib.asynccontextmanager
async def given_or_own(engine: AsyncEngine, conn: AsyncConnection | None) -> AsyncIterator[AsyncConnection]:
    """`conn` when a caller reads several things on one (recommend/reads.py), else a connection
    of its own for this read."""
    if conn is not None:
        yield conn
        return
    async with engine.connect() as own:
        yield own
