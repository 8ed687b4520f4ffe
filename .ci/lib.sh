# Helpers .ci/postgres.sh and .ci/pgbouncer.sh share (sourced, not run).

# The servers belong to whoever runs these scripts; root cannot run PostgreSQL
# (nor, by choice, PgBouncer), so as root they belong to the 'postgres' user
# (Debian's package makes one).
# runuser lives in /usr/sbin or /sbin, which a root shell's PATH may leave out.
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then
    local runuser
    runuser="$(PATH="$PATH:/usr/sbin:/sbin" command -v runuser)" || {
      echo "postgres.sh: runuser (util-linux) is needed to run PostgreSQL as root" >&2
      return 1
    }
    "$runuser" -u postgres -- "$@"
  else
    "$@"
  fi
}

# Install Debian packages quietly (apt-get's output to stderr); as root only.
install_debian() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "$@" >&2
}

# A TCP port free on 127.0.0.1 right now.
free_port() {
  local py
  py="$(command -v python3 || command -v python)"
  "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Sourced script: run its start and export what it prints into the caller's shell.
source_start() {
  local exports
  exports="$(set -euo pipefail; start)" || return 1
  eval "$exports"
}

# Run script: `start` (the default) or `stop DIR`.
run_command() {
  set -euo pipefail
  case "${1:-start}" in
    start) start ;;
    stop) stop "${2:-}" ;;
    *) log "usage: $0 start | stop DIR"; exit 2 ;;
  esac
}
