#!/usr/bin/env bash
# `make demo`: a private MariaDB with the thread pool on (127.0.0.1 only), a background load
# that makes the pool queue, and the Poolscope dashboard at http://127.0.0.1:8000.
# Ctrl-C (or SIGTERM) stops all of it and checks that nothing is left running.
#
# Environment:
#   POOLSCOPE_DEMO_PORT=8000       dashboard port
#   POOLSCOPE_DEMO_HOURS=4         the load (and so the demo) stops by itself after this long
#   POOLSCOPE_DEMO_NO_SERVE=1      sandbox + load only, no dashboard
#   POOLSCOPE_DEMO_NO_SYSBENCH=1   built-in load only
#   POOLSCOPE_DEMO_SKIP_INSTALL=1  don't run install steps (already done)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

DEMO_DIR="$ROOT/.demo"
PORT=${POOLSCOPE_DEMO_PORT:-8000}
HOURS=${POOLSCOPE_DEMO_HOURS:-4}
NO_SERVE=${POOLSCOPE_DEMO_NO_SERVE:-0}
NO_SYSBENCH=${POOLSCOPE_DEMO_NO_SYSBENCH:-0}
SKIP_INSTALL=${POOLSCOPE_DEMO_SKIP_INSTALL:-0}
PY="$ROOT/.venv/bin/python"

if [[ -t 1 ]]; then B=$'\033[1m' G=$'\033[32m' R=$'\033[31m' N=$'\033[0m'; else B='' G='' R='' N=''; fi
say() { printf '%sdemo:%s %s\n' "$B" "$N" "$*"; }
die() {
  printf '%sdemo: error:%s %s\n' "$R" "$N" "$*" >&2
  exit 1
}

mkdir -p "$DEMO_DIR"

# ---------------------------------------------------------------- install
if [[ $SKIP_INSTALL != 1 ]]; then
  say "checking system packages"
  bash scripts/install-system.sh
  say "installing Python and npm dependencies (quick when already done)"
  make --no-print-directory install-backend install-frontend
  if [[ -f frontend/package.json && $NO_SERVE != 1 ]]; then
    say "building the frontend"
    make --no-print-directory build >"$DEMO_DIR/build.log" 2>&1 || {
      tail -n 30 "$DEMO_DIR/build.log" >&2
      die "frontend build failed (log above: .demo/build.log)"
    }
  fi
fi
[[ -x $PY ]] || die "no Python venv at .venv: run 'make install'"
if [[ $NO_SERVE != 1 ]]; then
  [[ -x .venv/bin/poolscope ]] || die "the poolscope command is missing from .venv: run 'make install'"
  if ! "$PY" - "$PORT" <<'EOF'; then
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
EOF
    die "port $PORT on 127.0.0.1 is in use (another demo?). Stop it or set POOLSCOPE_DEMO_PORT."
  fi
fi

# ---------------------------------------------------------------- process handling
# Each background part runs in its own session (setsid), so it is its own process group and
# a terminal Ctrl-C reaches only this script, which then stops the parts in order.
SANDBOX_PID='' LOAD_PID='' SERVE_PID=''

start_bg() { # start_bg LOGFILE CMD... ; sets BG_PID
  local logfile=$1
  shift
  setsid "$@" >"$logfile" 2>&1 </dev/null &
  BG_PID=$!
}

stop_group() { # stop_group PID NAME SECONDS
  local pid=$1 name=$2 secs=$3 i
  [[ -n $pid ]] || return 0
  kill -0 -- "-$pid" 2>/dev/null || return 0
  kill -TERM -- "-$pid" 2>/dev/null || true
  for ((i = 0; i < secs * 5; i++)); do
    kill -0 -- "-$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  say "$name did not stop within ${secs}s; killing it"
  kill -KILL -- "-$pid" 2>/dev/null || true
  sleep 0.5
}

CLEANED=0
cleanup() {
  local rc=$?
  ((CLEANED)) && return
  CLEANED=1
  # Keep going whatever happens: a Ctrl-C also kills a `| tee` reading our output, and a
  # SIGPIPE or a failed echo must not cut the cleanup short.
  set +e
  trap '' INT TERM PIPE
  echo
  say "stopping the demo ..."
  stop_group "$SERVE_PID" "dashboard" 15
  stop_group "$LOAD_PID" "load" 30
  stop_group "$SANDBOX_PID" "sandbox MariaDB" 60
  # A server left by a killed sandbox process is stopped through its pid file.
  "$PY" -m poolscope_dev.sandbox --dir "$DEMO_DIR/mariadb" --stop >/dev/null 2>&1 || true
  local left=''
  for pid in $SERVE_PID $LOAD_PID $SANDBOX_PID; do
    if pgrep -g "$pid" >/dev/null 2>&1; then left+=" $(pgrep -g "$pid" | tr '\n' ' ')"; fi
  done
  if [[ -f $DEMO_DIR/mariadb/data/mysqld.pid ]] && kill -0 "$(cat "$DEMO_DIR/mariadb/data/mysqld.pid")" 2>/dev/null; then
    left+=" mariadbd:$(cat "$DEMO_DIR/mariadb/data/mysqld.pid")"
  fi
  if [[ -n $left ]]; then
    printf '%sdemo: still running:%s%s\n' "$R" "$N" "$left" >&2
    rc=1
  else
    say "${G}everything stopped${N} (logs in .demo/)"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 0' INT # a Ctrl-C is the normal way to end the demo
trap 'exit 143' TERM

# ---------------------------------------------------------------- sandbox MariaDB
INFO="$DEMO_DIR/sandbox.json"
rm -f "$INFO"
say "starting MariaDB (pool-of-threads, thread_pool_size=2, exact stats, extra_port; 127.0.0.1 only)"
start_bg "$DEMO_DIR/sandbox.log" "$PY" -m poolscope_dev.sandbox --dir "$DEMO_DIR/mariadb" \
  --thread-pool-size 2 --exact-stats --info-file "$INFO" --hide-passwords \
  --max-hours "$(awk "BEGIN { print $HOURS + 0.25 }")"
SANDBOX_PID=$BG_PID
for ((i = 0; i < 900; i++)); do # 90 s
  [[ -f $INFO ]] && break
  kill -0 "$SANDBOX_PID" 2>/dev/null || {
    tail -n 20 "$DEMO_DIR/sandbox.log" >&2
    die "the sandbox MariaDB did not start (log above, and .demo/mariadb/mariadb.err)"
  }
  sleep 0.1
done
[[ -f $INFO ]] || die "the sandbox MariaDB did not come up within 90s (see .demo/sandbox.log)"
read -r DB_PORT EXTRA_PORT MONITOR_DSN ADMIN_DSN < <("$PY" -c '
import json, sys
i = json.load(open(sys.argv[1]))
print(i["port"], i["extra_port"], i["dsns"]["poolscope_monitor"], i["dsns"]["poolscope_admin"])' "$INFO")
say "MariaDB up on 127.0.0.1:$DB_PORT (extra_port $EXTRA_PORT)"

# ---------------------------------------------------------------- config
CONFIG="$DEMO_DIR/poolscope.toml"
umask 077
# An operator login, so the demo can apply recommendations and silence alerts. The password is
# new on every run and only written to a file of the user's own (never printed or logged).
OPERATOR_PW_FILE="$DEMO_DIR/operator-password"
"$PY" -c 'import secrets; print(secrets.token_urlsafe(12))' >"$OPERATOR_PW_FILE"
OPERATOR_HASH=$("$ROOT/.venv/bin/poolscope" hash-password <"$OPERATOR_PW_FILE")
cat >"$CONFIG" <<EOF
# Written by scripts/demo.sh for the demo sandbox; regenerated on every run.
poll_interval_s = 1.0
store_url = "sqlite+aiosqlite:///$DEMO_DIR/poolscope.db"
listen_host = "127.0.0.1"
listen_port = $PORT
# The demo's dashboard is on loopback only: show the live pages without a login. Changes
# (apply, revert, silence, capture) still need the operator login below.
anonymous_read = true

[[users]]
name = "operator"
role = "operator"
password_hash = "$OPERATOR_HASH"

[[targets]]
name = "sandbox"
dsn = "$MONITOR_DSN"
extra_port = $EXTRA_PORT
# The separate credential that may SET GLOBAL (one-click apply); the monitoring one cannot.
admin_dsn = "$ADMIN_DSN"
EOF
umask 022

# ---------------------------------------------------------------- load
LOAD_ARGS=(--info "$INFO" --hours "$HOURS")
if [[ $NO_SYSBENCH == 1 ]]; then LOAD_ARGS+=(--no-sysbench); fi
if command -v sysbench >/dev/null && [[ $NO_SYSBENCH != 1 ]]; then
  say "starting load: sysbench oltp_read_write (64 threads) + built-in waves/trx/stall cycle, for up to ${HOURS}h"
else
  say "starting load: built-in waves/trx/stall cycle, for up to ${HOURS}h"
fi
start_bg "$DEMO_DIR/load.log" "$PY" -m poolscope_dev.demoload "${LOAD_ARGS[@]}"
LOAD_PID=$BG_PID

# ---------------------------------------------------------------- dashboard
URL="http://127.0.0.1:$PORT"
if [[ $NO_SERVE != 1 ]]; then
  say "starting the dashboard"
  start_bg "$DEMO_DIR/poolscope.log" "$ROOT/.venv/bin/poolscope" serve --config "$CONFIG"
  SERVE_PID=$BG_PID
  up=0
  for ((i = 0; i < 240; i++)); do # 120 s (a busy 2-core machine starts slowly)
    kill -0 "$SERVE_PID" 2>/dev/null || break
    if "$PY" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
      "$URL/api/targets" >/dev/null 2>&1; then
      up=1
      break
    fi
    sleep 0.5
  done
  if ((!up)); then
    tail -n 30 "$DEMO_DIR/poolscope.log" >&2
    die "the dashboard did not come up (log above: .demo/poolscope.log)"
  fi
fi

cat <<EOF

  ${B}Poolscope demo is running${N}
EOF
if [[ $NO_SERVE != 1 ]]; then
  printf '\n      %sOpen %s%s\n\n' "$G$B" "$URL" "$N"
fi
cat <<EOF
  MariaDB sandbox  127.0.0.1:$DB_PORT  (extra_port $EXTRA_PORT; mariadb -S .demo/mariadb/data/mysqld.sock -uroot)
  config           .demo/poolscope.toml
  log in           as "operator", password in .demo/operator-password (to apply and silence;
                   reading needs no login here: anonymous_read = true)
  logs             .demo/{poolscope,load,sandbox}.log
  stops by itself  after ${HOURS}h

  Press Ctrl-C to stop everything.
EOF

# ---------------------------------------------------------------- wait
# Whichever part ends first (or a signal) ends the demo; the EXIT trap stops the rest.
set +e
wait -n $SANDBOX_PID $LOAD_PID $SERVE_PID
set -e
for pair in "dashboard:$SERVE_PID" "load:$LOAD_PID" "sandbox MariaDB:$SANDBOX_PID"; do
  pid=${pair##*:}
  [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null && say "the ${pair%%:*} process ended"
done
exit 0
