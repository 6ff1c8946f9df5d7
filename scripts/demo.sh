#!/usr/bin/env bash
# `make demo`: a private MariaDB with the thread pool on (127.0.0.1 only), a background load
# that makes the pool queue, and the Poolscope dashboard at http://127.0.0.1:8000.
# Ctrl-C (or SIGTERM) stops all of it and checks that nothing is left running.
#
# The parts run under one process, the dev stack (`python -m poolscope_dev stack`,
# backend/dev/poolscope_dev/stack.py), from the spec written below; this script installs, writes
# the spec, says where things are, and stops the stack.
#
# Environment:
#   POOLSCOPE_DEMO_PORT=8000       dashboard port
#   POOLSCOPE_DEMO_HOURS=4         the load (and so the demo) stops by itself after this long
#   POOLSCOPE_DEMO_NO_SERVE=1      sandbox + load only, no dashboard
#   POOLSCOPE_DEMO_NO_SYSBENCH=1   built-in load only
#   POOLSCOPE_DEMO_SKIP_INSTALL=1  don't run install steps (already done)
#   POOLSCOPE_DEMO_MARIADB=10.11   the MariaDB line: 10.11 (Debian's) or 11.4 (LTS, from Maven
#                                  Central via scripts/install-system.sh)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

DEMO_DIR="$ROOT/.demo"
PORT=${POOLSCOPE_DEMO_PORT:-8000}
HOURS=${POOLSCOPE_DEMO_HOURS:-4}
NO_SERVE=${POOLSCOPE_DEMO_NO_SERVE:-0}
NO_SYSBENCH=${POOLSCOPE_DEMO_NO_SYSBENCH:-0}
SKIP_INSTALL=${POOLSCOPE_DEMO_SKIP_INSTALL:-0}
LINE=${POOLSCOPE_DEMO_MARIADB:-10.11}
PY="$ROOT/.venv/bin/python"

if [[ -t 1 ]]; then B=$'\033[1m' G=$'\033[32m' R=$'\033[31m' N=$'\033[0m'; else B='' G='' R='' N=''; fi
say() { printf '%sdemo:%s %s\n' "$B" "$N" "$*"; }
die() {
  printf '%sdemo: error:%s %s\n' "$R" "$N" "$*" >&2
  exit 1
}

case $LINE in
  10.11) SB_NAME=mariadb ;;
  11.4) SB_NAME=mariadb-11.4 ;; # one datadir per line (backend/dev/poolscope_dev/stack.py sandbox_dir)
  *) die "POOLSCOPE_DEMO_MARIADB=$LINE: the demo runs MariaDB 10.11 or 11.4" ;;
esac
SB_DIR="$DEMO_DIR/$SB_NAME"

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
# As the dashboard binds (uvicorn sets SO_REUSEADDR): a demo stopped a moment ago leaves
# connections in TIME_WAIT on the port, which are no reason to refuse it.
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
EOF
    die "port $PORT on 127.0.0.1 is in use (another demo?). Stop it or set POOLSCOPE_DEMO_PORT."
  fi
fi

# ---------------------------------------------------------------- config and stack spec
# An operator login, so the demo can apply recommendations and silence alerts. The password is
# new on every run and only written to a file of the user's own (never printed or logged).
umask 077
OPERATOR_PW_FILE="$DEMO_DIR/operator-password"
"$PY" -c 'import secrets; print(secrets.token_urlsafe(12))' >"$OPERATOR_PW_FILE"
OPERATOR_HASH=$("$ROOT/.venv/bin/poolscope" hash-password <"$OPERATOR_PW_FILE")
umask 022
CONFIG="$DEMO_DIR/poolscope.toml"
SPEC="$DEMO_DIR/stack.json"
READY="$DEMO_DIR/ready.json"
USE_SYSBENCH=0
if command -v sysbench >/dev/null && [[ $NO_SYSBENCH != 1 ]]; then USE_SYSBENCH=1; fi
# ${mariadb.…} is filled in by the stack once the sandbox is up (its info(): ports, DSNs).
"$PY" - "$SPEC" "$DEMO_DIR" "$CONFIG" "$PORT" "$HOURS" "$NO_SERVE" "$USE_SYSBENCH" "$OPERATOR_HASH" "$ROOT" "$LINE" <<'PYEOF'
import json, sys
from poolscope_dev.demochanges import ACT
spec_file, demo, config, port, hours, no_serve, sysbench, operator_hash, root, line = sys.argv[1:]
toml = f"""# Written by scripts/demo.sh for the demo sandbox; regenerated on every run.
poll_interval_s = 1.0
store_url = "sqlite+aiosqlite:///{demo}/poolscope.db"
listen_host = "127.0.0.1"
listen_port = {port}
# The demo's dashboard is on loopback only: show the live pages without a login. Changes
# (apply, revert, silence, capture) still need the operator login below.
anonymous_read = true

[[users]]
name = "operator"
role = "operator"
password_hash = "{operator_hash}"

[[targets]]
name = "sandbox"
dsn = "${{mariadb.dsns.poolscope_monitor}}"
extra_port = ${{mariadb.extra_port}}
# The separate credential that may SET GLOBAL (one-click apply); the monitoring one cannot.
admin_dsn = "${{mariadb.dsns.poolscope_admin}}"
"""
# The load runs a little longer than the stack, whose own time limit ends the demo cleanly.
load = ["${python}", "-m", "poolscope_dev.demoload", "--info", f"{demo}/load.json", "--hours", str(min(float(hours) + 0.25, 24.0))]
if sysbench != "1":
    load.append("--no-sysbench")
# The opening act (backend/dev/poolscope_dev/demochanges.py): the demo's operator applies two
# changes through the dashboard's API under a load of sysbench's, on a pool of one group first.
act = sysbench == "1" and no_serve != "1"
if act:
    load += ["--url", f"http://127.0.0.1:{port}", "--operator-password-file", f"{demo}/operator-password"]
pool_size = ACT.pool_size if act else 2
processes = [{"name": "load", "argv": load, "log": f"{demo}/load.log"}]
if no_serve != "1":
    processes.append(
        {
            "name": "dashboard",
            "argv": [f"{root}/.venv/bin/poolscope", "serve", "--config", config],
            "log": f"{demo}/poolscope.log",
            "ready_url": f"http://127.0.0.1:{port}/api/targets",
        }
    )
spec = {
    "dir": demo,
    "hours": float(hours),
    "sandboxes": {"mariadb": {"thread_pool_size": pool_size, "exact_stats": True, "line": line}},
    "files": {config: toml, f"{demo}/load.json": '{"dsns": {"sbtest": "${mariadb.dsns.sbtest}"}}\n'},
    "processes": processes,
}
with open(spec_file, "w") as f:
    json.dump(spec, f, indent=2)
PYEOF

# ---------------------------------------------------------------- the stack
STACK_PID=''
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
  local left='' i
  if [[ -n $STACK_PID ]] && kill -0 -- "-$STACK_PID" 2>/dev/null; then
    # The stack stops its parts in order (dashboard, load, MariaDB); give it time for that.
    kill -TERM -- "-$STACK_PID" 2>/dev/null
    for ((i = 0; i < 600; i++)); do # 120 s
      kill -0 -- "-$STACK_PID" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 -- "-$STACK_PID" 2>/dev/null; then
      say "the stack did not stop within 120s; killing it"
      kill -KILL -- "-$STACK_PID" 2>/dev/null
      sleep 0.5
    fi
    if pgrep -g "$STACK_PID" >/dev/null 2>&1; then left+=" $(pgrep -g "$STACK_PID" | tr '\n' ' ')"; fi
  fi
  # A server left by a killed stack is stopped through its pid file.
  "$PY" -m poolscope_dev.sandbox --dir "$SB_DIR" --line "$LINE" --stop >/dev/null 2>&1 || true
  if [[ -f $SB_DIR/data/mysqld.pid ]] && kill -0 "$(cat "$SB_DIR/data/mysqld.pid")" 2>/dev/null; then
    left+=" mariadbd:$(cat "$SB_DIR/data/mysqld.pid")"
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
# Each handler first ignores further signals: `make demo` stopped by SIGTERM to its process group
# sends the script a second SIGTERM (GNU make forwards it to its children), which would otherwise
# run `exit` again inside the EXIT trap and cut the cleanup short, leaving the stack running.
trap "trap '' INT TERM; exit 0" INT # a Ctrl-C is the normal way to end the demo
trap "trap '' INT TERM; exit 143" TERM

rm -f "$READY"
if ((USE_SYSBENCH)) && [[ $NO_SERVE != 1 ]]; then
  say "starting MariaDB $LINE (pool-of-threads, thread_pool_size=1, exact stats, extra_port; 127.0.0.1 only)"
  say "then the opening act (~4 min): a steady sysbench load; the operator applies thread_pool_size=2,"
  say "  then thread_pool_oversubscribe=5 as the load changes phase (their verdicts: the target's Changes)"
  say "then the load: sysbench oltp_read_write (64 threads) + built-in waves/trx/stall cycle, for up to ${HOURS}h"
elif ((USE_SYSBENCH)); then
  say "starting MariaDB $LINE (pool-of-threads, thread_pool_size=2, exact stats, extra_port; 127.0.0.1 only)"
  say "then the load: sysbench oltp_read_write (64 threads) + built-in waves/trx/stall cycle, for up to ${HOURS}h"
else
  say "starting MariaDB $LINE (pool-of-threads, thread_pool_size=2, exact stats, extra_port; 127.0.0.1 only)"
  say "then the load: built-in waves/trx/stall cycle, for up to ${HOURS}h"
fi
[[ $NO_SERVE == 1 ]] || say "then the dashboard"
# Its own session (setsid): a terminal Ctrl-C reaches only this script, which stops the stack.
setsid "$PY" -m poolscope_dev stack --spec "$SPEC" --ready-file "$READY" >/dev/null 2>"$DEMO_DIR/stack.log" </dev/null &
STACK_PID=$!
for ((i = 0; i < 2400; i++)); do # 240 s: MariaDB, then the dashboard (a busy 2-core machine is slow)
  [[ -f $READY ]] && break
  kill -0 "$STACK_PID" 2>/dev/null || {
    tail -n 30 "$DEMO_DIR/stack.log" >&2
    die "the demo did not start (log above: .demo/stack.log; also .demo/$SB_NAME/mariadb.err, .demo/poolscope.log)"
  }
  sleep 0.1
done
[[ -f $READY ]] || die "the demo did not come up within 240s (see .demo/stack.log)"
read -r DB_PORT EXTRA_PORT < <("$PY" -c '
import json, sys
i = json.load(open(sys.argv[1]))["sandboxes"]["mariadb"]
print(i["port"], i["extra_port"])' "$READY")
URL="http://127.0.0.1:$PORT"

cat <<EOF

  ${B}Poolscope demo is running${N}
EOF
if [[ $NO_SERVE != 1 ]]; then
  printf '\n      %sOpen %s%s\n\n' "$G$B" "$URL" "$N"
fi
cat <<EOF
  MariaDB $LINE    127.0.0.1:$DB_PORT  (extra_port $EXTRA_PORT; mariadb -S .demo/$SB_NAME/data/mysqld.sock -uroot)
  config           .demo/poolscope.toml
  log in           as "operator", password in .demo/operator-password (to apply and silence;
                   reading needs no login here: anonymous_read = true)
  logs             .demo/{poolscope,load,stack}.log
  stops by itself  after ${HOURS}h

  Press Ctrl-C to stop everything.
EOF

# ---------------------------------------------------------------- wait
# The stack ends when a part ends or its time is up; the EXIT trap then checks nothing is left.
set +e
wait "$STACK_PID"
say "the stack ended (exit $?; see .demo/stack.log)"
exit 0
