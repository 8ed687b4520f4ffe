"""Config files a test treats as the person's own.

Many tests keep their ``troupe.yaml`` in the test's folder, which is also the
workspace, and are about what the file says rather than whether it is
trusted. They trust every config file, as a person would with ``troupe trust``
(tests/security/test_workspace_config.py covers the file nobody trusted and
the one that changed after it was trusted).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from troupe.trust_store import TrustCheck, TrustStore


def trust_every_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every config file read counts as trusted, as if ``troupe trust`` had recorded it."""

    def trusted(self: TrustStore, file: Path, content: bytes) -> TrustCheck:
        return TrustCheck(file, True, False, [])

    monkeypatch.setattr(TrustStore, "check", trusted)
