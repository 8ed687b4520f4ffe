#!/usr/bin/env bash
# PgBouncer in transaction pooling in front of .ci/postgres.sh's throwaway cluster, so
# the tests check that troupe works through a transaction pooler (no session state).
#
#   source .ci/postgres.sh && source .ci/pgbouncer.sh   # installs Debian's pgbouncer if
#                                                      # missing, starts it, exports below
#   bash .ci/pgbouncer.sh stop "$TROUPE_TEST_PGBOUNCER_DIR"
#
# start needs TROUPE_TEST_POSTGRES_URL and prints (on stdout):
#   export TROUPE_TEST_PGBOUNCER_URL=postgresql+asyncpg://troupe@127.0.0.1:PORT/troupe_test
#   export TROUPE_TEST_PGBOUNCER_DIR=/tmp/troupe-pgbouncer.XXXXXX
# Its server pool is small (PGBOUNCER_POOL_SIZE, default 4), so transactions of
# different clients share server connections, as they do under load.
log() { echo "pgbouncer.sh: $*" >&2; }
# shellcheck source=.ci/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install_pgbouncer() {
  if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" -ne 0 ]; then
    log "pgbouncer was not found. Install it (Debian/Ubuntu as root: apt-get install"
    log "pgbouncer; macOS: brew install pgbouncer), then run this again."
    exit 1
  fi
  log "installing Debian's pgbouncer package"
  install_debian pgbouncer
  # The package may start a system-wide instance on 6432; this script runs its own.
  service pgbouncer stop >/dev/null 2>&1 || true
}

start() {
  local url="${TROUPE_TEST_POSTGRES_URL:?start .ci/postgres.sh first}" rest hostport pg_port db dir port
  command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || install_pgbouncer
  local bin
  bin="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
  rest="${url#*@}"                 # 127.0.0.1:PORT/db
  hostport="${rest%%/*}"
  pg_port="${hostport##*:}"
  db="${rest#*/}"
  dir="$(mktemp -d /tmp/troupe-pgbouncer.XXXXXX)"
  port="${TROUPE_PGBOUNCER_PORT:-$(free_port)}"
  printf '"troupe" ""\n' >"$dir/userlist.txt"
  cat >"$dir/pgbouncer.ini" <<EOF
[databases]
$db = host=127.0.0.1 port=$pg_port dbname=$db

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = ${PGBOUNCER_POOL_SIZE:-4}
max_client_conn = 500
ignore_startup_parameters = extra_float_digits,options
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
EOF
  [ "$(id -u)" -ne 0 ] || chown -R postgres: "$dir"
  chmod 700 "$dir"
  as_postgres "$bin" -d "$dir/pgbouncer.ini" >&2 || { cat "$dir/pgbouncer.log" >&2; exit 1; }
  local tries=0
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    tries=$((tries + 1))
    [ "$tries" -lt 50 ] || { log "pgbouncer did not listen on $port"; cat "$dir/pgbouncer.log" >&2; exit 1; }
    sleep 0.1
  done
  log "PgBouncer $("$bin" --version | head -1 | awk '{print $2}') (transaction pooling) on 127.0.0.1:$port in front of :$pg_port"
  echo "export TROUPE_TEST_PGBOUNCER_URL=postgresql+asyncpg://troupe@127.0.0.1:$port/$db"
  echo "export TROUPE_TEST_PGBOUNCER_DIR=$dir"
}

stop() {
  local dir="${1:-${TROUPE_TEST_PGBOUNCER_DIR:-}}"
  if [ -z "$dir" ] || [ ! -f "$dir/pgbouncer.ini" ]; then
    log "nothing to stop (no pgbouncer directory given)"
    return 0
  fi
  if [ -f "$dir/pgbouncer.pid" ]; then
    kill "$(cat "$dir/pgbouncer.pid")" 2>/dev/null || true
    sleep 0.3
  fi
  rm -rf "$dir"
  log "stopped and removed $dir"
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  # Sourced: start and export the URL into the caller's shell.
  source_start || return 1
  return 0
fi
run_command "$@"
