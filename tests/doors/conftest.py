"""Fixtures for the door tests: a fresh set of visits per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from door_models import Visits


@pytest.fixture
def visit_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Visits]:
    """A :class:`Visits`: call it with (model kind, shape) to get a Visit."""
    visits = Visits(tmp_path, monkeypatch)
    yield visits
    visits.close()
