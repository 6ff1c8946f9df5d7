"""``python -m poolscope_dev``: the development entry points.

python -m poolscope_dev stack --spec SPEC.json [--ready-file F]   the dev stack (stack.py)
python -m poolscope_dev poolscope --fixtures DIR -- ARGS...        the product's CLI, with
    fixture:// targets replayed from DIR (replay.py), e.g. `-- --config F serve`
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m poolscope_dev", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    stack = sub.add_parser("stack", help="sandboxes, config files and processes from one spec")
    stack.add_argument("--spec", type=Path, required=True)
    stack.add_argument("--ready-file", type=Path, help="the ready line is also written here (0600)")
    product = sub.add_parser("poolscope", help="the poolscope CLI with fixture:// targets replayed")
    product.add_argument("--fixtures", type=Path, required=True, help="e.g. backend/tests/fixtures")
    product.add_argument("args", nargs=argparse.REMAINDER, help="-- then poolscope's own arguments")
    args = parser.parse_args(argv)
    if args.command == "stack":
        from poolscope_dev.stack import run

        logging.basicConfig(level=logging.INFO, format="%(asctime)s stack: %(message)s", stream=sys.stderr)
        logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per readiness probe
        return run(args.spec, args.ready_file)
    from poolscope.cli import main as poolscope_main
    from poolscope_dev import replay

    try:
        replay.register(args.fixtures)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rest = args.args[1:] if args.args[:1] == ["--"] else args.args
    poolscope_main(rest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
