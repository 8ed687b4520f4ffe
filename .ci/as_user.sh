#!/usr/bin/env bash
# Run pytest on the given paths as an unprivileged user (nobody), from a copy of
# the checkout that user can read, with a venv built from the system's Python
# (pyenv's lives under /root, which nobody cannot enter). CI runs as root; the
# jail and every security promise must hold for a desktop user too.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
  echo "as_user.sh: already unprivileged; run the tests directly" >&2
  exit 2
fi
PY=/usr/bin/python3
if ! "$PY" -c "import ensurepip, venv" 2>/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
fi

# TROUPE_CI_USER_ROOT lets two checkouts on one machine run this at once.
ROOT=${TROUPE_CI_USER_ROOT:-/tmp/troupe-ci-user}
rm -rf "$ROOT"
mkdir -p "$ROOT/home"
# The checkout without its venv and caches; owned by the user, so tests may
# write where they write in a developer's own checkout.
tar --exclude=./.venv --exclude=./.git --exclude='*/__pycache__' -cf - . | (mkdir -p "$ROOT/repo" && tar -xf - -C "$ROOT/repo")
"$PY" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --quiet -c requirements.lock -e "$ROOT/repo[dev]"
chown -R 65534:65534 "$ROOT/repo" "$ROOT/home"
chmod 755 "$ROOT"

cd "$ROOT/repo"
exec setpriv --reuid=65534 --regid=65534 --clear-groups \
  env HOME="$ROOT/home" XDG_CACHE_HOME="$ROOT/home/.cache" \
  "$ROOT/venv/bin/python" -m pytest -p no:cacheprovider -q "$@"
