#!/bin/sh
# PgBouncer's user list from the environment (never baked into the image), then PgBouncer.
set -eu
umask 077
mkdir -p /tmp/pgbouncer
printf '"troupe" "%s"\n' "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}" >/tmp/pgbouncer/userlist.txt
exec pgbouncer /etc/pgbouncer/pgbouncer.ini
