#!/usr/bin/env bash
# `make dist`: an sdist and a wheel of the backend that carry the built UI and the Alembic scripts.
#
#   scripts/dist.sh OUTDIR [UI_DIR]     UI_DIR defaults to frontend/dist (`make build`)
#
# The package is staged in a temporary copy (poolscope/ui <- the UI, poolscope/migrations <-
# migrations/), so the checkout never holds a second, possibly stale UI. `python -m build`
# makes the sdist first and the wheel from it, which proves the sdist is complete.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: scripts/dist.sh OUTDIR [UI_DIR]}
ui=${2:-$root/frontend/dist}
python=${PYTHON:-python3}

if [[ ! -f $ui/index.html ]]; then
  echo "dist: no built UI at $ui (run make build first)" >&2
  exit 1
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/poolscope-dist.XXXXXX")
trap 'rm -rf "$stage"' EXIT
cp "$root/backend/pyproject.toml" "$root/LICENSE" "$stage/"
cp -r "$root/backend/poolscope" "$stage/poolscope"
cp -r "$ui" "$stage/poolscope/ui"
cp -r "$root/migrations" "$stage/poolscope/migrations"
find "$stage" \( -name __pycache__ -o -name '*.egg-info' \) -prune -exec rm -rf {} +

mkdir -p "$out"
"$python" -m build --outdir "$out" "$stage"
ls -l "$out"
