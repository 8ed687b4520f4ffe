"""Models reached over HTTP: keys from the config, keyless local servers, errors not retried.

Every test talks to the scripted OpenAI-compatible server on 127.0.0.1
(tests/fakes/openai_server.py) through LiteLLM, as a user's local server would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakes.cli import unwrapped
from fakes.openai_server import FakeOpenAI, failure, serve, text_reply
from troupe.cli.app import app

MODEL = "openai/local-model"


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy between LiteLLM and the fake, and no OpenAI key in the environment."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def answering() -> Iterator[FakeOpenAI]:
    with serve([text_reply("Hello from the local model.")]) as fake:
        yield fake


def _config(tmp_path: Path, fake: FakeOpenAI, *lines: str) -> str:
    config = tmp_path / "troupe.yaml"
    body = [f"api_base: {fake.api_base}", "model_retries: 3", *lines]
    config.write_text("\n".join(body) + "\n", encoding="utf-8")
    return str(config)


def _chat(tmp_path: Path, fake: FakeOpenAI, *lines: str) -> tuple[int, str]:
    config = _config(tmp_path, fake, *lines)
    workspace = tmp_path / "ws"  # outside it, the file's api_base and keys count
    workspace.mkdir(exist_ok=True)
    result = CliRunner().invoke(
        app, ["chat", "--model", MODEL, "--config", config, "--workspace", str(workspace), "hi"]
    )
    return result.exit_code, result.output


def _eval(tmp_path: Path, fake: FakeOpenAI, *lines: str) -> tuple[int, str]:
    """``troupe eval`` on one request, decided by the model (router off)."""
    config = _config(tmp_path, fake, *lines)
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--model",
            MODEL,
            "--config",
            config,
            "--router",
            "off",
            "--limit",
            "1",
            "--out-json",
            str(tmp_path / "eval.json"),
            "--out-html",
            str(tmp_path / "eval.html"),
        ],
    )
    return result.exit_code, result.output


def test_a_keyless_local_server_answers_without_any_api_key(
    tmp_path: Path, answering: FakeOpenAI
) -> None:
    code, out = _chat(tmp_path, answering)
    assert code == 0, out
    assert "Hello from the local model." in out
    assert len(answering.requests) == 1


Command = Callable[..., tuple[int, str]]
COMMANDS = pytest.mark.parametrize("run", [_chat, _eval], ids=["chat", "eval"])
"""The commands that reach a model: both read the key through the same settings."""


@COMMANDS
def test_api_key_in_the_config_is_sent_to_the_server(
    tmp_path: Path, answering: FakeOpenAI, run: Command
) -> None:
    code, out = run(tmp_path, answering, "api_key: sk-from-the-file")
    assert code == 0, out
    assert answering.authorizations == ["Bearer sk-from-the-file"]


@COMMANDS
def test_api_key_env_names_the_variable_whose_key_is_sent(
    tmp_path: Path, answering: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, run: Command
) -> None:
    monkeypatch.setenv("LOCAL_LLM_KEY", "sk-from-the-environment")
    code, out = run(tmp_path, answering, "api_key_env: LOCAL_LLM_KEY")
    assert code == 0, out
    assert answering.authorizations == ["Bearer sk-from-the-environment"]


@COMMANDS
def test_an_unset_api_key_env_is_a_config_error_naming_the_variable(
    tmp_path: Path, answering: FakeOpenAI, run: Command
) -> None:
    code, out = run(tmp_path, answering, "api_key_env: NOT_SET_ANYWHERE")
    assert code == 2, out
    assert "'NOT_SET_ANYWHERE', which is not set" in unwrapped(out)
    assert answering.requests == []


@pytest.mark.parametrize(
    ("status", "meaning"),
    [(401, "authentication failed"), (400, "the provider rejected the request as malformed")],
)
def test_a_permanent_model_error_is_not_retried_and_is_one_clear_line(
    tmp_path: Path, status: int, meaning: str
) -> None:
    with serve([failure(status, "no such key here")] * 4) as fake:
        code, out = _chat(tmp_path, fake)
    assert code == 1, out
    assert len(fake.requests) == 1
    lines = unwrapped(out).split("turn failed:")[1:]
    assert len(lines) == 1, out
    assert f"HTTP {status} ({meaning}): no such key here" in lines[0]
    assert "Traceback" not in out


def test_rich_markup_in_an_error_message_is_printed_as_written(tmp_path: Path) -> None:
    with serve([failure(401, "bad key [bold]sk-x[/bold] [link=x]")]) as fake:
        code, out = _chat(tmp_path, fake)
    assert code == 1, out
    assert "bad key [bold]sk-x[/bold] [link=x]" in unwrapped(out)


def test_a_rate_limit_that_outlasts_the_retries_is_one_line_naming_model_and_fix(
    tmp_path: Path,
) -> None:
    with serve([failure(429, "Rate limit reached for requests")] * 8) as fake:
        code, out = _chat(tmp_path, fake)
    assert code == 1, out
    lines = unwrapped(out).split("turn failed:")[1:]
    assert len(lines) == 1, out
    line = lines[0]
    assert "'local-model' (openai)" in line or f"'{MODEL}'" in line, line
    assert "HTTP 429 (rate limited by the provider): Rate limit reached" in line
    assert "fallback_model" in line
    assert "litellm.RateLimitError" not in out and "OpenAIException" not in out, out


def test_a_model_error_stays_on_one_line_in_an_80_column_terminal(tmp_path: Path) -> None:
    reason = "no such key here, " * 12  # far wider than 80 columns
    with serve([failure(401, reason)]) as fake:
        code, out = _chat(tmp_path, fake)
    assert code == 1, out
    [line] = [line for line in out.splitlines() if "turn failed:" in line]
    assert reason.strip() in line
