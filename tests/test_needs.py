"""A test that needs Chromium or PostgreSQL says what is missing: skipped on a
developer's machine, failed in CI (which installs both)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from fakes.needs import POSTGRES_FIX, fail_in_ci, missing, postgres_url


def test_outside_ci_a_missing_requirement_skips_naming_it_and_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("TROUPE_TEST_POSTGRES_URL", raising=False)

    with pytest.raises(pytest.skip.Exception) as skipped:
        postgres_url()

    assert "missing: PostgreSQL (TROUPE_TEST_POSTGRES_URL is not set)" in str(skipped.value)
    assert "brew install postgresql" in str(skipped.value)


def test_in_ci_a_missing_requirement_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")

    with pytest.raises(pytest.fail.Exception) as failed:
        missing("Playwright and Chromium (no Chromium binary was found)", POSTGRES_FIX)

    assert "broken CI" in str(failed.value)


def _report(reason: str) -> Any:
    return SimpleNamespace(
        skipped=True, outcome="skipped", longrepr=("test_x.py", 1, f"Skipped: {reason}")
    )


def _through_the_hook(report: Any) -> None:
    """What tests/conftest.py's report hook does with ``report``."""
    fail_in_ci(report)


@pytest.mark.parametrize(("ci", "outcome"), [("", "skipped"), ("true", "failed")])
def test_a_postgres_skip_marker_fails_only_in_ci(
    monkeypatch: pytest.MonkeyPatch, ci: str, outcome: str
) -> None:
    monkeypatch.setenv("CI", ci)
    report = _report("needs .ci/postgres.sh's server")
    _through_the_hook(report)

    assert report.outcome == outcome


def test_other_skips_stay_skips_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    report = _report("node or npm is not on PATH")
    _through_the_hook(report)

    assert report.outcome == "skipped"


def _dev_script() -> Any:
    path = Path(__file__).resolve().parents[1] / "dev.py"
    spec = importlib.util.spec_from_file_location("troupe_dev_script", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("tool", "said"), [("brew", "brew install --cask chromium"), ("dnf", "dnf install chromium")]
)
def test_dev_py_without_apt_names_the_install_command_and_installs_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tool: str, said: str
) -> None:
    dev = _dev_script()
    monkeypatch.delenv("TROUPE_CHROMIUM", raising=False)
    monkeypatch.setattr(dev, "CHROMIUM", Path("/nowhere/chromium"))
    monkeypatch.setattr(
        dev.shutil, "which", lambda name: f"/usr/bin/{tool}" if name == tool else None
    )
    ran: list[object] = []
    monkeypatch.setattr(dev.subprocess, "run", lambda *a, **k: ran.append(a))

    dev.ensure_chromium("the browser tests skip without it")

    assert ran == []
    assert said in capsys.readouterr().err
