#!/bin/sh
# First start on an empty datadir: initialise it, give root the password from
# MARIADB_ROOT_PASSWORD, run /docker-entrypoint-initdb.d/*.sql. Then run mariadbd, listening on
# all of the container's interfaces (Debian's own config binds 127.0.0.1).
set -eu

if [ "${1#-}" != "$1" ]; then
  set -- mariadbd "$@"
fi
if [ "$1" != mariadbd ]; then
  exec "$@"
fi
shift

datadir=/var/lib/mysql
socket=/run/mysqld/init.sock
if [ ! -d "$datadir/mysql" ]; then
  : "${MARIADB_ROOT_PASSWORD:?set MARIADB_ROOT_PASSWORD for the first start}"
  chown mysql:mysql "$datadir"
  mariadb-install-db --user=mysql --datadir="$datadir" --auth-root-authentication-method=normal \
    --skip-test-db >/dev/null
  mariadbd --user=mysql --datadir="$datadir" --skip-networking --socket="$socket" &
  pid=$!
  tries=0
  until mariadb-admin --socket="$socket" -uroot ping >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge 60 ]; then
      echo "entrypoint: mariadbd did not start for initialisation" >&2
      exit 1
    fi
    sleep 1
  done
  # The password is passed on stdin, never on a command line.
  mariadb --socket="$socket" -uroot <<SQL
CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '$(printf '%s' "$MARIADB_ROOT_PASSWORD" | sed "s/'/''/g")';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
ALTER USER 'root'@'localhost' IDENTIFIED BY '$(printf '%s' "$MARIADB_ROOT_PASSWORD" | sed "s/'/''/g")';
SQL
  for file in /docker-entrypoint-initdb.d/*.sql; do
    [ -e "$file" ] || continue
    echo "entrypoint: running $file"
    MYSQL_PWD=$MARIADB_ROOT_PASSWORD mariadb --socket="$socket" -uroot <"$file"
  done
  MYSQL_PWD=$MARIADB_ROOT_PASSWORD mariadb-admin --socket="$socket" -uroot shutdown
  wait "$pid"
fi

exec mariadbd --user=mysql --datadir="$datadir" --bind-address=0.0.0.0 "$@"
