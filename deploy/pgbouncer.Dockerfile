# PgBouncer (Debian's package) for compose.yaml: transaction pooling in front of PostgreSQL.
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends pgbouncer postgresql-client \
    && rm -rf /var/lib/apt/lists/*
COPY deploy/pgbouncer.ini /etc/pgbouncer/pgbouncer.ini
COPY deploy/pgbouncer-entrypoint.sh /usr/local/bin/pgbouncer-entrypoint.sh
# Debian's package runs PgBouncer as the postgres user; so does the image.
USER postgres
EXPOSE 6432
ENTRYPOINT ["/usr/local/bin/pgbouncer-entrypoint.sh"]
