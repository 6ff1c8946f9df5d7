"""Command line: `poolscope serve`, `poller`, `migrate`, `check` (a config dry run), `hash-password`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from poolscope import __version__
from poolscope.config import DsnError, Settings, load_settings

if TYPE_CHECKING:
    from poolscope.services import ServiceRole


def _settings(path: str | None) -> Settings:
    try:
        return load_settings(path)
    except (ValidationError, DsnError, FileNotFoundError, ValueError) as exc:
        # Pydantic's message names the field; SecretStr keeps the DSN itself out of it.
        print(f"poolscope: invalid configuration: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _ensure_sqlite_dir(url: str) -> None:
    prefix = "sqlite+aiosqlite:///"
    if url.startswith(prefix):
        Path(url[len(prefix) :]).expanduser().parent.mkdir(parents=True, exist_ok=True)


def cmd_serve(args: argparse.Namespace) -> None:
    settings = _http_settings(args)
    workers = settings.worker_count()
    if workers == 0:
        _serve_api(settings, "all")
        return
    _serve_fleet(settings, workers)


def cmd_api(args: argparse.Namespace) -> None:
    """One API process of a fleet: serves the store, polls nothing."""
    _serve_api(_http_settings(args), "api")


def _http_settings(args: argparse.Namespace) -> Settings:
    from poolscope.perimeter.serving import exposure_problem

    settings = _settings(args.config)
    if args.host:
        # The listen address decides the exposure check and the allowed Host names below.
        settings = settings.model_copy(update={"listen_host": args.host})
    if args.port:
        settings = settings.model_copy(update={"listen_port": args.port})
    problem = exposure_problem(settings)
    if problem:
        print(f"poolscope: {problem}", file=sys.stderr)
        raise SystemExit(2)
    _ensure_sqlite_dir(settings.store_url)
    return settings


def _serve_api(settings: Settings, role: ServiceRole) -> None:
    import uvicorn

    from poolscope.main import create_app
    from poolscope.perimeter.serving import uvicorn_options

    uvicorn.run(
        create_app(settings, role=role),
        host=settings.listen_host,
        port=settings.listen_port,
        log_level="info",
        # Open SSE streams would otherwise hold uvicorn's shutdown forever.
        timeout_graceful_shutdown=3,
        **uvicorn_options(settings),
    )


def _serve_fleet(settings: Settings, workers: int) -> None:
    """The supervisor (fleet/supervisor.py): one API process and `workers` pollers, forked."""
    from poolscope.fleet.supervisor import Slot, Supervisor
    from poolscope.fleet.worker import run_poller
    from poolscope.store.migrate import upgrade_when_up

    # Once, before forking, so the children do not race to create the schema.
    upgrade_when_up(settings.store_url)

    def poller(index: int) -> Slot:
        # A configured node_id names each forked poller; the default host:pid is unique already.
        node = f"{settings.node_id}/{index}" if settings.node_id else None
        own = settings.model_copy(update={"node_id": node})
        return Slot(f"poller {index}", lambda: run_poller(own))

    slots = [Slot("api", lambda: _serve_api(settings, "api"))] + [poller(i) for i in range(workers)]
    raise SystemExit(Supervisor(slots).run())


def cmd_poller(args: argparse.Namespace) -> None:
    """One poller process of a fleet: no HTTP, until SIGTERM/SIGINT."""
    from poolscope.fleet.worker import run_poller

    settings = _settings(args.config)
    _ensure_sqlite_dir(settings.store_url)
    run_poller(settings)


def cmd_migrate(args: argparse.Namespace) -> None:
    from poolscope.store.migrate import upgrade_to_head

    settings = _settings(args.config)
    _ensure_sqlite_dir(settings.store_url)
    upgrade_to_head(settings.store_url)
    print("store schema is at the newest revision")


def cmd_check(args: argparse.Namespace) -> None:
    """Connect to each target once and report what Poolscope would see; exit 1 if any is down."""
    from poolscope.poller.target_poller import TargetPoller

    settings = _settings(args.config)

    async def run() -> int:
        failures = 0
        for target in settings.targets:
            poller = TargetPoller(target, settings)
            result = await poller.poll_once()
            await poller.close()
            info = result.info
            if info.status != "up":
                failures += 1
                print(f"{target.name}: DOWN - {info.reason}")
                continue
            server, conn = info.server, info.connection
            assert server is not None and conn is not None
            print(
                f"{target.name}: up - {server.flavor} {server.version}, thread_handling={server.thread_handling},"
                f" polled on {conn.port_kind} {conn.port}{' (' + conn.note + ')' if conn.note else ''}"
            )
            print(
                f"  pool: {server.pool_kind or 'none'}; can report: {', '.join(server.capabilities) or '-'}"
            )
            for note in server.notes:
                print(f"  note: {note}")
            for status in info.collectors:
                word = (
                    "ok"
                    if status.ok
                    else ("skipped: " + status.skipped if status.skipped else f"FAILED: {status.error}")
                )
                print(f"  {status.name:<26} {word}")
        return 1 if failures else 0

    raise SystemExit(asyncio.run(run()))


def cmd_hash_password(args: argparse.Namespace) -> None:
    """Print a password hash for a [[users]] entry; the password comes from stdin or a prompt."""
    import getpass

    from poolscope.auth.passwords import hash_password

    if sys.stdin.isatty():
        password = getpass.getpass("password: ")
        if getpass.getpass("again: ") != password:
            print("poolscope: the passwords differ", file=sys.stderr)
            raise SystemExit(2)
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        print("poolscope: empty password", file=sys.stderr)
        raise SystemExit(2)
    print(hash_password(password))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="poolscope", description=__doc__)
    parser.add_argument("--config", help="TOML settings file (default: $POOLSCOPE_CONFIG)")
    parser.add_argument("--version", action="version", version=f"poolscope {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="poll the targets and serve the dashboard")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.set_defaults(func=cmd_serve)
    poller = sub.add_parser("poller", help="run one poller process of a fleet (no HTTP)")
    poller.set_defaults(func=cmd_poller)
    api = sub.add_parser("api", help="run one API process of a fleet (serves the store, polls nothing)")
    api.add_argument("--host")
    api.add_argument("--port", type=int)
    api.set_defaults(func=cmd_api)
    sub.add_parser("migrate", help="upgrade the store schema").set_defaults(func=cmd_migrate)
    sub.add_parser("check", help="poll each target once and report").set_defaults(func=cmd_check)
    sub.add_parser(
        "hash-password", help="print a password hash for [[users]] (reads the password from stdin)"
    ).set_defaults(func=cmd_hash_password)
    # Accept --config after the sub-command too, the way people type it.
    serve.add_argument("--config", dest="config_late", help=argparse.SUPPRESS)
    poller.add_argument("--config", dest="config_late", help=argparse.SUPPRESS)
    api.add_argument("--config", dest="config_late", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.config = getattr(args, "config_late", None) or args.config
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args.func(args)


if __name__ == "__main__":
    main()
