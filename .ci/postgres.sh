#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1 for troupe's session-store tests.
#
#   eval "$(bash .ci/postgres.sh start)"    # installs Debian's postgresql if missing,
#                                           # starts a cluster in a temp dir, creates a
#                                           # database and prints the exports below
#   source .ci/postgres.sh                  # the same, exporting into this shell
#   bash .ci/postgres.sh stop "$TROUPE_TEST_POSTGRES_DIR"
#
# start prints (on stdout, everything else goes to stderr):
#   export TROUPE_TEST_POSTGRES_URL=postgresql+asyncpg://troupe@127.0.0.1:PORT/troupe_test
#   export TROUPE_TEST_POSTGRES_DIR=/tmp/troupe-pg.XXXXXX
# PORT is a free port unless TROUPE_PG_PORT is set. The cluster trusts local
# connections and runs without fsync: it lives for one test run only. It keeps
# PostgreSQL's defaults otherwise (max_connections 100), as users run it.
log() { echo "postgres.sh: $*" >&2; }
# as_postgres, install_debian, free_port, source_start, run_command
# shellcheck source=.ci/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# initdb and pg_ctl: Debian's versioned directories, else pg_config's, else PATH
# (Homebrew on macOS, Fedora's and Arch's packages put them there).
find_bindir() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) \
      "$(pg_config --bindir 2>/dev/null || true)" \
      "$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")"; do
    if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return 0
    fi
  done
  return 1
}

install_postgres() {
  if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" -ne 0 ]; then
    log "PostgreSQL's initdb and pg_ctl were not found. Install PostgreSQL's server"
    log "(Debian/Ubuntu as root: apt-get install postgresql; macOS: brew install postgresql;"
    log "Fedora: dnf install postgresql-server; Arch: pacman -S postgresql), then run this again."
    exit 1
  fi
  log "installing Debian's postgresql package"
  install_debian postgresql
}

start() {
  local bindir dir port
  bindir="$(find_bindir || true)"
  if [ -z "$bindir" ]; then
    install_postgres
    bindir="$(find_bindir)" || { log "postgresql installed but initdb not found"; exit 1; }
  fi
  dir="$(mktemp -d /tmp/troupe-pg.XXXXXX)"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || { log "as root the cluster needs a 'postgres' user; none exists"; exit 1; }
    chown postgres: "$dir"
  fi
  chmod 700 "$dir"
  port="${TROUPE_PG_PORT:-$(free_port)}"

  as_postgres "$bindir/initdb" -D "$dir/data" --auth=trust --username=troupe \
    --encoding=UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  as_postgres "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off" \
    start >&2 || { cat "$dir/server.log" >&2; exit 1; }
  as_postgres "$bindir/createdb" -h 127.0.0.1 -p "$port" -U troupe troupe_test >&2

  log "PostgreSQL $("$bindir/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port, data in $dir"
  echo "export TROUPE_TEST_POSTGRES_URL=postgresql+asyncpg://troupe@127.0.0.1:$port/troupe_test"
  echo "export TROUPE_TEST_POSTGRES_DIR=$dir"
}

stop() {
  local dir="${1:-${TROUPE_TEST_POSTGRES_DIR:-}}" bindir
  if [ -z "$dir" ] || [ ! -d "$dir/data" ]; then
    log "nothing to stop (no cluster directory given)"
    return 0
  fi
  bindir="$(find_bindir)"
  as_postgres "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
  rm -rf "$dir"
  log "stopped and removed $dir"
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  # Sourced: start and export the URL into the caller's shell.
  source_start || return 1
  return 0
fi
run_command "$@"
