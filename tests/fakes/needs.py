"""What a test needs from the machine: said when missing; a skip here, a failure in CI.

CI (``.ci/run``, which sets ``CI``) installs Chromium and starts PostgreSQL
itself, so there a missing one is a broken CI and fails the test. On a
developer's machine without them (macOS, a Linux without apt), the test
says what is missing and how to get it, and is skipped.
"""

from __future__ import annotations

import os
import shutil
from glob import glob
from typing import Any, NoReturn

import pytest

from troupe.builtins import browser_unavailable_reason

POSTGRES_ENV = "TROUPE_TEST_POSTGRES_URL"
CHROMIUM_FIX = (
    "Debian/Ubuntu: apt-get install chromium; Fedora: dnf install chromium; "
    "Arch: pacman -S chromium; macOS: brew install --cask chromium, then "
    "TROUPE_CHROMIUM=/Applications/Chromium.app/Contents/MacOS/Chromium"
)
POSTGRES_FIX = (
    "start a throwaway server with `source .ci/postgres.sh` (it needs PostgreSQL's "
    "initdb: Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql; "
    "Fedora: dnf install postgresql-server) or set TROUPE_TEST_POSTGRES_URL"
)


def in_ci() -> bool:
    """True under CI (``.ci/run`` sets ``CI``): nothing the tests need may be missing."""
    return bool(os.environ.get("CI"))


def missing(what: str, fix: str) -> NoReturn:
    """Skip the test, saying what is missing and how to get it; in CI, fail it."""
    message = f"missing: {what}. To run this test: {fix}"
    if in_ci():
        pytest.fail(f"{message} (CI installs it; its absence is a broken CI)", pytrace=False)
    pytest.skip(message)


def require_browser() -> None:
    """Playwright and a Chromium the navigator can drive."""
    if (reason := browser_unavailable_reason()) is not None:
        missing(f"Playwright and Chromium ({reason})", CHROMIUM_FIX)


def postgres_url() -> str:
    """The URL of the test PostgreSQL (``TROUPE_TEST_POSTGRES_URL``)."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        missing(f"PostgreSQL ({POSTGRES_ENV} is not set)", POSTGRES_FIX)
    return url


def can_start_postgres() -> bool:
    """Whether ``.ci/postgres.sh`` can start a server here: PostgreSQL's initdb is
    installed, or apt-get can install it (as root)."""
    if glob("/usr/lib/postgresql/*/bin/initdb") or shutil.which("initdb"):
        return True
    return bool(shutil.which("apt-get")) and os.geteuid() == 0


SKIPS_CI_MUST_NOT_HAVE = ("needs .ci/postgres.sh's server",)
"""Reasons of skip markers naming something CI provides: where it is missing the
test skips, but in CI (tests/conftest.py's report hook) the skip is a failure."""


def fail_in_ci(report: Any) -> None:
    """Turn ``report`` (a pytest test report) from skipped into failed when, in CI,
    it was skipped for want of something CI provides."""
    if not (report.skipped and in_ci()):
        return
    longrepr = report.longrepr
    reason = str(longrepr[-1] if isinstance(longrepr, tuple) else longrepr)
    if any(phrase in reason for phrase in SKIPS_CI_MUST_NOT_HAVE):
        report.outcome = "failed"
        report.longrepr = f"{reason} (in CI: .ci/run starts it, so its absence is a failure)"
