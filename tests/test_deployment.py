"""The container deployment: compose.yaml, the Dockerfile and nginx's config agree.

No container engine runs in the tests; these check the files a user runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _probe(service: dict[str, Any]) -> str:
    return " ".join(service["healthcheck"]["test"])


def _default(value: str) -> int:
    """The default of a compose variable such as ``${TROUPE_REPLICAS:-3}``."""
    found = re.fullmatch(r"\$\{\w+:-(\d+)\}", str(value))
    return int(found.group(1)) if found else int(value)


def test_compose_runs_several_replicas_one_database_a_pooler_and_a_load_balancer() -> None:
    services = _compose()["services"]
    assert set(services) == {"postgres", "pgbouncer", "troupe", "nginx"}
    databases = [n for n, s in services.items() if str(s.get("image", "")).startswith("postgres")]
    assert databases == ["postgres"]
    troupe = services["troupe"]
    assert troupe["build"] == "."
    assert _default(troupe["deploy"]["replicas"]) >= 2
    store = troupe["environment"]["TROUPE_SESSION_STORE"]
    assert store.startswith("postgresql+asyncpg://") and "@pgbouncer:6432/troupe" in store
    assert troupe["depends_on"]["pgbouncer"]["condition"] == "service_healthy"
    assert services["pgbouncer"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    # The balancer starts once replicas are ready, and publishes the only port.
    assert services["nginx"]["depends_on"]["troupe"]["condition"] == "service_healthy"
    assert [s for s in services if services[s].get("ports")] == ["nginx"]


def test_postgres_stays_at_its_defaults_and_every_budget_fits_in_it() -> None:
    """PostgreSQL at max_connections 100 (3 for superusers): PgBouncer's server pool plus
    the reserve fits, and so do the replicas' own pools, as ``troupe serve`` checks."""
    services = _compose()["services"]
    assert "command" not in services["postgres"]  # no max_connections override
    ini = (ROOT / "deploy" / "pgbouncer.ini").read_text(encoding="utf-8")
    assert re.search(r"^pool_mode = transaction$", ini, re.M)
    pooled = int(re.search(r"^default_pool_size = (\d+)$", ini, re.M).group(1))  # type: ignore[union-attr]
    env = services["troupe"]["environment"]
    replicas = _default(env["TROUPE_DATABASE_REPLICAS"])
    assert replicas == _default(services["troupe"]["deploy"]["replicas"])
    pool = int(env["TROUPE_DATABASE_POOL_SIZE"])
    reserve = 10  # database_reserve's default
    assert pooled + reserve <= 97
    assert replicas * pool + reserve <= 97
    assert "POSTGRES_PASSWORD" not in ini  # the user list is written from the environment


def test_every_service_has_a_probe_and_replicas_are_ready_only_with_the_database() -> None:
    services = _compose()["services"]
    assert "pg_isready" in _probe(services["postgres"])
    assert "pg_isready" in _probe(services["pgbouncer"]) and "6432" in _probe(services["pgbouncer"])
    assert "/readyz" in _probe(services["troupe"])  # /readyz checks the session store
    assert "/healthz" in _probe(services["nginx"])
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"HEALTHCHECK .*\n.*/healthz", dockerfile)


def test_secrets_come_from_the_environment_and_the_replicas_require_a_token() -> None:
    text = (ROOT / "compose.yaml").read_text(encoding="utf-8")
    env = _compose()["services"]["troupe"]["environment"]
    assert env["TROUPE_AUTH_TOKEN"] == "${TROUPE_AUTH_TOKEN:?set TROUPE_AUTH_TOKEN}"
    # One vault key for every replica, never generated per replica.
    assert env["TROUPE_SECRET_KEY"] == "${TROUPE_SECRET_KEY:?set TROUPE_SECRET_KEY}"
    assert "${POSTGRES_PASSWORD:?" in env["TROUPE_SESSION_STORE"]
    assert not re.search(r"PASSWORD: [^$\s]", text)


def test_the_image_runs_troupe_serve_unprivileged_with_the_postgres_driver() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^USER troupe$", dockerfile, re.M)
    assert "'.[postgres,a2a]'" in dockerfile and "-c requirements.lock" in dockerfile
    cmd = re.search(r"^CMD (\[.*\])$", dockerfile, re.M)
    assert cmd is not None
    assert yaml.safe_load(cmd.group(1))[:2] == ["troupe", "serve"]


def test_nginx_balances_across_the_troupe_service_and_streams() -> None:
    conf = (ROOT / "deploy" / "nginx.conf").read_text(encoding="utf-8")
    volumes = _compose()["services"]["nginx"]["volumes"]
    assert "./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro" in volumes
    assert "http://troupe:8000" in conf
    assert "proxy_buffering off;" in conf  # /run_sse events are not held back
    assert "non_idempotent" not in conf  # a POST already sent is never resent
