"""``troupe serve``'s app: ADK's REST API over the tree, probes, the bearer token, the card."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from troupe_servers import TEST_VAULT_KEY

from troupe import ConfigError
from troupe.server import ServeOptions, build_app
from troupe.server.app import served_agent
from troupe.settings import Settings, load_settings
from troupe.tree import agent_tools

TOKEN = "s3cret-token"
BASE = "http://127.0.0.1:8000"


def _settings(workspace: Path, tmp_path: Path, store: str, token: str | None) -> Settings:
    settings = load_settings(workspace=workspace, data_dir=tmp_path / "data", session_store=store)
    settings.auth_token = token
    return settings


@pytest.fixture
def client(workspace: Path, tmp_path: Path, session_store: str) -> Iterator[TestClient]:
    """The app with a token configured and A2A on, its lifespan running."""
    app = build_app(_settings(workspace, tmp_path, session_store, TOKEN), ServeOptions(a2a=True))
    with TestClient(app, base_url=BASE) as test_client:
        yield test_client


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/list-apps"),
        ("GET", "/apps/troupe/users/u1/sessions"),
        ("POST", "/apps/troupe/users/u1/sessions"),
        ("POST", "/run"),
        ("POST", "/a2a/"),
    ],
)
def test_unauthenticated_requests_are_refused_when_a_token_is_configured(
    client: TestClient, method: str, path: str
) -> None:
    response = client.request(method, path, json={})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_a_wrong_token_is_refused(client: TestClient) -> None:
    response = client.get("/list-apps", headers={"Authorization": "Bearer not-the-token"})
    assert response.status_code == 401


def test_the_configured_token_is_accepted(client: TestClient) -> None:
    response = client.get("/list-apps", headers=_auth())
    assert response.status_code == 200
    assert response.json() == ["troupe"]


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/health"])
def test_health_probes_need_no_token(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 200


def test_readiness_reports_the_built_tree_and_a_reachable_store(client: TestClient) -> None:
    body = client.get("/readyz").json()
    assert body["status"] == "ready"
    assert body["session_store"] == "ok"
    assert body["agents"][0] == "orchestrator" and "operator" in body["agents"]


def test_a_websocket_without_the_token_is_refused(client: TestClient) -> None:
    with (
        pytest.raises(WebSocketDisconnect),
        client.websocket_connect("/run_live?app_name=troupe&user_id=u&session_id=s"),
    ):
        pass


def test_a_turn_through_the_rest_api_routes_and_is_stored(client: TestClient) -> None:
    sid = f"rest-{uuid.uuid4().hex[:8]}"
    created = client.post(
        "/apps/troupe/users/u1/sessions", json={"session_id": sid}, headers=_auth()
    )
    assert created.status_code == 200, created.text
    run = client.post(
        "/run",
        headers=_auth(),
        json={
            "app_name": "troupe",
            "user_id": "u1",
            "session_id": sid,
            "new_message": {"role": "user", "parts": [{"text": "list the files here"}]},
        },
    )
    assert run.status_code == 200, run.text
    events = run.json()
    calls = [
        (event["author"], part["functionCall"]["name"])
        for event in events
        for part in event["content"]["parts"]
        if "functionCall" in part
    ]
    assert calls[:2] == [("orchestrator", "transfer_to_agent"), ("operator", "fs_list")]
    assert "notes.txt" in events[-1]["content"]["parts"][0]["text"]
    stored = client.get(f"/apps/troupe/users/u1/sessions/{sid}", headers=_auth()).json()
    assert {e["id"] for e in events} <= {e["id"] for e in stored["events"]}


def test_the_agent_card_is_public_and_lists_capabilities_not_tool_names(
    client: TestClient, workspace: Path, tmp_path: Path, session_store: str
) -> None:
    response = client.get("/a2a/.well-known/agent-card.json")
    assert response.status_code == 200
    card = response.json()
    tags = {tag for skill in card["skills"] for tag in skill["tags"]}
    assert {"file operations", "command execution"} <= tags
    assert card["supportedInterfaces"][0]["url"] == f"{BASE}/a2a/"
    assert "bearer" in card["securitySchemes"]
    root = served_agent(_settings(workspace, tmp_path, session_store, None), None)
    tool_names = {name for agent in root.sub_agents for name in agent_tools(agent)}
    assert tool_names, "the tree should hold tools"
    text = json.dumps(card)
    assert not [name for name in tool_names if name in text]


def test_readiness_fails_while_the_store_is_unreachable(
    workspace: Path, tmp_path: Path, unused_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TROUPE_SECRET_KEY", TEST_VAULT_KEY)  # a PostgreSQL vault needs one
    store = f"postgresql+asyncpg://troupe@127.0.0.1:{unused_port}/nowhere"
    app = build_app(_settings(workspace, tmp_path, store, None), ServeOptions())
    with TestClient(app, base_url=BASE) as test_client:
        assert test_client.get("/healthz").status_code == 200
        ready = test_client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["status"] == "unavailable"


def test_serving_an_agent_that_is_not_in_the_tree_names_the_choices(
    workspace: Path, tmp_path: Path
) -> None:
    settings = _settings(workspace, tmp_path, "memory://", None)
    with pytest.raises(ConfigError) as caught:
        served_agent(settings, "nope")
    assert "'nope'" in str(caught.value) and "operator" in str(caught.value)


def test_serving_one_specialist_detaches_it_from_the_orchestrator(
    workspace: Path, tmp_path: Path
) -> None:
    agent = served_agent(_settings(workspace, tmp_path, "memory://", None), "operator")
    assert agent.name == "operator"
    assert agent.parent_agent is None
    assert "fs_list" in agent_tools(agent)


def test_the_token_can_come_from_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "troupe.yaml"
    config.write_text("auth_token: from-the-file\n", encoding="utf-8")
    assert load_settings(config_path=config).auth_token == "from-the-file"


def test_the_token_environment_variable_wins_over_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "troupe.yaml"
    config.write_text("auth_token: from-the-file\n", encoding="utf-8")
    monkeypatch.setenv("TROUPE_AUTH_TOKEN", "from-the-env")
    assert load_settings(config_path=config).auth_token == "from-the-env"


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer"])
def test_the_bearer_scheme_is_accepted_in_any_case(client: TestClient, scheme: str) -> None:
    response = client.get("/list-apps", headers={"Authorization": f"{scheme} {TOKEN}"})
    assert response.status_code == 200


def test_another_scheme_with_the_right_token_is_refused(client: TestClient) -> None:
    response = client.get("/list-apps", headers={"Authorization": f"Basic {TOKEN}"})
    assert response.status_code == 401


def test_a_browser_without_the_token_is_sent_to_the_login_page(client: TestClient) -> None:
    response = client.get("/dev-ui/", headers={"Accept": "text/html"}, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=/dev-ui/"
    page = client.get(response.headers["location"])
    assert page.status_code == 200 and "<form" in page.text


def test_logging_in_with_the_token_sets_a_cookie_the_api_accepts(client: TestClient) -> None:
    response = client.post(
        "/login", data={"token": TOKEN, "next": "/list-apps"}, follow_redirects=False
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/list-apps"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert TOKEN not in cookie  # a digest of the token, never the token itself
    assert client.get("/list-apps").json() == ["troupe"]  # the client keeps the cookie


def test_a_wrong_token_at_the_login_page_sets_no_cookie(client: TestClient) -> None:
    response = client.post("/login", data={"token": "guess"}, follow_redirects=False)
    assert response.status_code == 401
    assert "set-cookie" not in response.headers
    assert client.get("/list-apps").status_code == 401


def test_a_forged_cookie_is_refused(client: TestClient) -> None:
    client.cookies.set("troupe_session", TOKEN)
    assert client.get("/list-apps").status_code == 401


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x", "javascript:x"])
def test_the_login_page_never_redirects_off_the_server(client: TestClient, target: str) -> None:
    response = client.post("/login", data={"token": TOKEN, "next": target}, follow_redirects=False)
    assert response.headers["location"] == "/dev-ui/"
