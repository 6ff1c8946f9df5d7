"""Write deploy/prometheus/poolscope.rules.yml from the alert rules' declarations (poolscope/alerts/prometheus_rules.py).

Run with the venv's python (`make prometheus-rules`; --check: drift only, as `make lint` runs it).
"""

from __future__ import annotations

import sys
from pathlib import Path

from generated import write_or_check
from poolscope.alerts.prometheus_rules import render
from poolscope.alerts.rules import RULES

OUT = (
    Path(__file__).resolve().parent.parent
    / "deploy"
    / "prometheus"
    / "poolscope.rules.yml"
)


def main(argv: list[str] | None = None) -> int:
    text = render(RULES)
    return write_or_check(
        OUT, text, source="the alert rules", remedy="make prometheus-rules", argv=argv
    )


if __name__ == "__main__":
    sys.exit(main())
