#!/usr/bin/env bash
# Prints the Python that `make install` builds .venv with (the Makefile's PYTHON; set PYTHON to
# choose another): Debian's /usr/bin/python3 when it is the 3.11 that backend/requirements.lock
# was made for and it can make a venv (python3-venv, which scripts/install-system.sh installs),
# else python3 from PATH.
#
# Why Debian's first: it is the interpreter the container image runs (Dockerfile), built (by
# Debian's packaging) with PGO and LTO and libpython linked into the executable. The python3 on
# PATH of these machines is pyenv's 3.11.7, built without PGO or LTO and with a shared libpython:
# against it Debian's spent ~14 % less CPU on a poll's own work and ~8 % less per target-poll in
# the fleet bench (docs/decisions/0014-debian-python.md). So tests, demo and bench run on what ships.
set -euo pipefail

debian=/usr/bin/python3
if [[ -x $debian ]] && "$debian" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
  echo "$debian"
else
  command -v python3 || echo python3  # none at all: make's error names python3
fi
