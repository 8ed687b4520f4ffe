"""``troupe eval -c`` scores the team a configuration builds, not troupe's default one."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import troupe
from troupe.cli.app import app
from troupe.errors import ConfigError
from troupe.evaluation import RoutingCase, run_evaluation

TEAMS = Path(__file__).parent.parent / "bench" / "teams"


def _shop_config(tmp_path: Path) -> Path:
    """The benchmark shop team's config, its servers started with this Python."""
    text = (TEAMS / "shop" / "troupe.yaml").read_text()
    text = text.replace("command: python", f"command: {sys.executable}")
    text = text.replace("../servers/", f"{TEAMS / 'servers'}/")
    text = text.replace("topology: topology.yaml", f"topology: {TEAMS / 'shop' / 'topology.yaml'}")
    config = tmp_path / "shop.yaml"
    config.write_text(text)
    return config


def _requests(tmp_path: Path, *rows: dict[str, object]) -> Path:
    path = tmp_path / "requests.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_eval_with_a_config_scores_that_teams_agents_and_names_the_team(tmp_path: Path) -> None:
    dataset = _requests(
        tmp_path,
        {"text": "Where is parcel SH3016688402 right now?", "expected": "shipping"},
        {"text": "How many loyalty points do I have? tom.baker@gmail.com", "expected": "account"},
        {"text": "Hello!", "expected": "orchestrator"},
    )
    out = tmp_path / "eval.json"

    config = _shop_config(tmp_path)
    args = ["eval", "-c", str(config), "--dataset", str(dataset), "--out-json", str(out)]
    result = CliRunner().invoke(app, [*args, "--out-html", str(tmp_path / "eval.html")])

    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["team"]["agents"] == [
        *("orders", "catalogue", "returns", "shipping", "account"),
        "planner",  # troupe's, for a team without one
    ]
    assert report["team"]["topology"].endswith("topology.yaml")
    assert len(report["team"]["digest"]) == 16
    assert "orders" in result.output and "vault" not in result.output


def test_eval_refuses_a_label_the_team_does_not_have_in_one_line(tmp_path: Path) -> None:
    dataset = _requests(tmp_path, {"text": "encrypt this", "expected": "vault"})

    result = CliRunner().invoke(
        app, ["eval", "-c", str(_shop_config(tmp_path)), "--dataset", str(dataset)]
    )

    assert result.exit_code == 2
    assert "'vault', which is not on the team" in result.output
    assert "orders, catalogue, returns, shipping, account, planner" in result.output
    assert "Traceback" not in result.output


def weather_now(city: str) -> dict[str, str]:
    """The weather in a city right now."""
    return {"city": city, "sky": "sunny"}


FORECASTING = troupe.Topology(
    name="forecasting",
    agents=(
        troupe.AgentSpec(
            name="meteorologist",
            description="Answers questions about the weather anywhere in the world.",
            capabilities={"weather_": "weather forecasts"},
            prefixes=("weather_",),
            keywords=("weather", "forecast"),
        ),
    ),
)


async def test_the_library_evaluates_the_team_a_config_builds() -> None:
    config = troupe.Config(
        tools=[troupe.Tool(name="weather_now", description="Weather now.", func=weather_now)],
        topology=FORECASTING,
        model="offline",
    )
    case = RoutingCase("is it sunny in Oslo?", ("meteorologist",), "plain", "en")

    [result] = await run_evaluation([case], config=config)

    assert result.expected == ("meteorologist",)
    with pytest.raises(ConfigError, match="'operator', which is not on the team"):
        await run_evaluation([RoutingCase("ls", ("operator",), "plain", "en")], config=config)


def test_calibrate_writes_the_threshold_it_chose_into_the_config(tmp_path: Path) -> None:
    config = _shop_config(tmp_path)
    config.write_text("# my shop\n" + config.read_text() + "router: off\n")

    dataset = str(TEAMS / "shop" / "dev.jsonl")
    args = ["routing", "calibrate", "-c", str(config), "--dataset", dataset]
    result = CliRunner().invoke(app, [*args, "--precision", "0.9", "--write"])

    assert result.exit_code == 0, result.output
    assert "held-out half 0" in result.output and "calibration error" in result.output
    written = config.read_text()
    assert written.startswith("# my shop\n")  # the rest of the file is kept
    assert "router: off" not in written
    chosen = re.search(r"chosen ([0-9.]+): coverage", result.output)
    assert chosen is not None
    assert f"router: {{mode: auto, threshold: {float(chosen.group(1)):g}}}" in written


def test_calibrate_without_a_dataset_keeps_the_default_and_says_how_to_fit_it() -> None:
    result = CliRunner().invoke(app, ["routing", "calibrate"])

    assert result.exit_code == 0
    assert "default threshold, 0.75" in result.output and "--dataset" in result.output
