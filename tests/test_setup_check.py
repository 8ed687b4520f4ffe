"""Setup is checked before the first prompt: a missing provider key, a model server
that does not answer or does not serve the model, each stops ``troupe chat`` with
one line naming the cause (exit 2); a llama.cpp template without tools is a warning."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakes.openai_server import serve, text_reply
from fakes.terminal import Terminal
from troupe import ConfigError
from troupe.cli.app import app
from troupe.models.setup_check import check_model_setup

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def test_a_provider_model_without_its_key_stops_before_the_prompt_at_a_terminal(
    tmp_path: Path,
) -> None:
    term = Terminal(
        tmp_path, tmp_path / "data", "--model", "openai/gpt-4o-mini", unset=("OPENAI_API_KEY",)
    )
    try:
        assert term.exit_code() == 2
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    shown = ANSI.sub(b"", term.seen).replace(b"\r", b"")
    assert b"you>" not in shown
    errors = [line for line in shown.split(b"\n") if line.startswith(b"error:")]
    assert errors == [
        b"error: OPENAI_API_KEY is not set: model 'openai/gpt-4o-mini' needs it "
        b"(export OPENAI_API_KEY=..., api_key_env in troupe.yaml, or --model offline)."
    ]


def test_gemini_through_adk_names_both_of_its_variables() -> None:
    with pytest.raises(ConfigError, match=r"^GOOGLE_API_KEY or GEMINI_API_KEY is not set"):
        check_model_setup("gemini-2.5-flash", api_base=None, api_key=None, environ={})


@pytest.mark.parametrize(
    ("model", "environ"),
    [
        ("openai/gpt-4o-mini", {"OPENAI_API_KEY": "sk-test"}),
        ("gemini-2.5-flash", {"GEMINI_API_KEY": "k"}),
        ("gemini-2.5-flash", {"GOOGLE_GENAI_USE_VERTEXAI": "true"}),
        ("offline", {}),
    ],
)
def test_a_model_with_its_key_passes(model: str, environ: dict[str, str]) -> None:
    assert check_model_setup(model, api_base=None, api_key=None, environ=environ) == []


def test_a_key_in_the_config_is_enough() -> None:
    found = check_model_setup("anthropic/claude-x", api_base=None, api_key="k", environ={})

    assert found == []


def _chat(tmp_path: Path, api_base: str, model: str = "openai/local") -> object:
    args = ["chat", "-w", str(tmp_path), "--data-dir", str(tmp_path / "data")]
    return CliRunner().invoke(app, [*args, "--model", model, "--api-base", api_base, "hi"])


def test_an_unreachable_server_is_named_before_any_turn(tmp_path: Path) -> None:
    with serve([]) as fake:
        gone = fake.api_base
    result = _chat(tmp_path, gone)

    assert result.exit_code == 2  # type: ignore[attr-defined]
    out = " ".join(result.output.split())  # type: ignore[attr-defined]
    assert f"cannot reach the model server at {gone}" in out and "api_base" in out


def test_a_server_that_does_not_serve_the_model_lists_what_it_serves(tmp_path: Path) -> None:
    with serve([text_reply("hello")], models=["qwen2.5-7b-instruct"]) as fake:
        result = _chat(tmp_path, fake.api_base, model="openai/qwen-7b")

        assert fake.requests == []  # no turn was sent
    assert result.exit_code == 2  # type: ignore[attr-defined]
    out = " ".join(result.output.split())  # type: ignore[attr-defined]
    assert "does not serve 'qwen-7b'; it serves qwen2.5-7b-instruct" in out
    assert "--model openai/qwen2.5-7b-instruct" in out


def test_a_server_serving_the_model_lets_the_chat_run(tmp_path: Path) -> None:
    with serve([text_reply("hello there")], models=["local"]) as fake:
        result = _chat(tmp_path, fake.api_base)

    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert "hello there" in result.output  # type: ignore[attr-defined]


def test_llama_cpp_without_tools_in_its_template_is_a_warning(tmp_path: Path) -> None:
    props = {"chat_template_caps": {"supports_tools": False, "supports_tool_calls": False}}
    # llama.cpp answers under any name: the listed file name is not a mismatch.
    with serve([text_reply("hi back")], models=["smollm2.gguf"], props=props) as fake:
        result = _chat(tmp_path, fake.api_base)

    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    out = " ".join(result.output.split())  # type: ignore[attr-defined]
    assert "warning: llama.cpp at" in out and "takes no tools" in out and "--jinja" in out
    assert "hi back" in out
