#!/usr/bin/env bash
# Prints the Python that `make install` builds .venv with (the Makefile's PYTHON; set PYTHON to
# choose another): Debian's /usr/bin/python3 when it is the 3.11 that backend/requirements.lock
# was made for and it can make a venv (python3-venv, which scripts/install-system.sh installs),
# else python3 from PATH.
#
# Why Debian's first: it is the interpreter the container image runs (Dockerfile), built with
# PGO and LTO into a static executable. A Python built from source without --enable-optimizations
# (pyenv's default, which is python3 on PATH on these machines) ran a poll's work with ~20 % more
# CPU (docs/FLEET-PROFILE.md, "Eleventh round"), so tests, demo and bench run on what ships.
set -euo pipefail

debian=/usr/bin/python3
if [[ -x $debian ]] && "$debian" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
  echo "$debian"
else
  command -v python3
fi
