# troupe serve in a container: one replica. compose.yaml runs several behind nginx.
#   docker build -t troupe .
#   docker run -p 8000:8000 -e TROUPE_AUTH_TOKEN=... -e TROUPE_SESSION_STORE=postgresql+asyncpg://... troupe
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    TROUPE_DATA_DIR=/data \
    ADK_SUPPRESS_A2A_EXPERIMENTAL_FEATURE_WARNINGS=1

WORKDIR /app
COPY pyproject.toml README.md requirements.lock ./
COPY src ./src
# The PostgreSQL driver and the A2A server, at the versions the lock file pins.
RUN pip install -c requirements.lock '.[postgres,a2a]'

# An unprivileged user owns the data directory and the workspace, nothing else.
RUN useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin troupe \
    && mkdir -p /data /workspace \
    && chown troupe:troupe /data /workspace
USER troupe
WORKDIR /workspace

EXPOSE 8000
# Liveness: the process answers. Readiness (/readyz) also checks the database.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"]
# SIGTERM lets the turns in flight finish before the process exits.
STOPSIGNAL SIGTERM
CMD ["troupe", "serve", "--host", "0.0.0.0", "--port", "8000", "--a2a", "--workspace", "/workspace"]
