"""``troupe --version`` and ``-h`` answer; an unknown verb is met with the nearest real one."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from troupe import __version__
from troupe.cli.app import app


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_answers_with_troupe_and_adk_versions(flag: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "troupe", flag], capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"troupe {__version__} (google-adk ")


@pytest.mark.parametrize("argv", [["-h"], ["--help"], ["trace", "-h"], ["chat", "-h"]])
def test_h_is_help_everywhere(argv: list[str]) -> None:
    result = CliRunner().invoke(app, argv)

    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: troupe")


@pytest.mark.parametrize(
    ("verb", "real"), [("run", "chat"), ("server", "serve"), ("traces", "trace"), ("web", "serve")]
)
def test_a_verb_other_agent_clis_use_points_at_troupes(verb: str, real: str) -> None:
    result = CliRunner().invoke(app, [verb, "hello"])

    assert result.exit_code == 2
    assert f"No such command '{verb}'. Did you mean '{real}'?" in result.output


def test_a_typo_still_gets_the_nearest_command() -> None:
    result = CliRunner().invoke(app, ["chta"])

    assert result.exit_code == 2 and "Did you mean 'chat'?" in result.output
