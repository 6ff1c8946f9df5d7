"""Alembic environment: runs migrations on the store's async engine."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.ext.asyncio import create_async_engine

from poolscope.config import load_settings
from poolscope.store.tables import metadata

config = context.config
target_metadata = metadata


def store_url() -> str:
    url = config.attributes.get("store_url") or config.get_main_option("sqlalchemy.url")
    return url or load_settings().store_url


def run_offline() -> None:
    context.configure(url=store_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


async def run_online() -> None:
    engine = create_async_engine(store_url())
    async with engine.connect() as connection:
        await connection.run_sync(_run)
        await connection.commit()
    await engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    asyncio.run(run_online())
