"""The interop tests' package cache fails a hung install with what to check."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from fakes import package_cache


def test_an_install_that_never_answers_fails_with_what_to_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(package_cache, "INSTALL_TIMEOUT", 1)
    hang = [sys.executable, "-c", "import time; time.sleep(30)"]
    with pytest.raises(pytest.fail.Exception) as failed:
        package_cache._run(hang, "a package that hangs")
    message = str(failed.value)
    assert "could not install a package that hangs" in message
    assert "no answer within 1 s" in message
    assert "registry is reachable" in message


def test_the_install_limit_is_under_the_suites_per_test_limit() -> None:
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    options = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["pytest"]
    assert int(options["ini_options"]["timeout"]) > package_cache.INSTALL_TIMEOUT
