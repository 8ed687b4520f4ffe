"""The config files a person trusted, each by path and digest (``troupe trust FILE``).

A ``troupe.yaml`` in the workspace is the workspace's: a tool, an approved
command or the repository's author may have written it. Editors and coding
CLIs call the answer *workspace trust*: the person says once that a file is
theirs, and the tool remembers which file and what it said. Here the record is
the file's resolved path, the SHA-256 of its bytes and the text itself, kept
in ``trusted_configs.json`` in troupe's data directory (owner-only, hidden
from every tool and command like the rest of that directory). A file whose
bytes no longer match its record has lost its trust: the change is shown as a
diff against the text that was trusted, and nothing in it that needs trust
applies until the person runs ``troupe trust`` again.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .sandbox.private import private_dir

TRUST_FILE = "trusted_configs.json"
"""The trust records' file in the data directory."""
MAX_KEPT_TEXT = 256 * 1024
"""The longest config text kept for a diff; a longer file is trusted by digest alone."""
MAX_DIFF_LINES = 40
"""Diff lines shown at most; the rest is counted."""
_VERSION = 1


def digest(content: bytes) -> str:
    """The SHA-256 of ``content``, hex."""
    return hashlib.sha256(content).hexdigest()


def key_of(file: Path) -> str:
    """How a file is recorded: its absolute path with every link resolved."""
    return str(file.expanduser().resolve())


@dataclass(frozen=True)
class TrustCheck:
    """What the records say about one file's current bytes."""

    file: Path
    trusted: bool
    """True when a record holds exactly these bytes."""
    changed: bool
    """True when the file was trusted once and its bytes differ now."""
    diff: list[str]
    """The change from the trusted text to the current one (unified diff lines)."""

    def shown_diff(self, limit: int = MAX_DIFF_LINES) -> str:
        """The diff for a person, cut to ``limit`` lines."""
        lines = self.diff[:limit]
        if len(self.diff) > limit:
            lines.append(f"... ({len(self.diff) - limit} more lines)")
        return "\n".join(lines)


class TrustStore:
    """The trust records in one data directory."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir.expanduser() / TRUST_FILE

    def _records(self) -> dict[str, Any]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"cannot read the trust records {str(self.path)!r} ({exc}); move the file "
                "aside and trust your config files again with `troupe trust FILE`"
            ) from None
        files = raw.get("files") if isinstance(raw, dict) else None
        return files if isinstance(files, dict) else {}

    def check(self, file: Path, content: bytes) -> TrustCheck:
        """Whether ``content`` (the bytes just read from ``file``) is what was trusted."""
        record = self._records().get(key_of(file))
        if not isinstance(record, dict):
            return TrustCheck(file, False, False, [])
        if record.get("sha256") == digest(content):
            return TrustCheck(file, True, False, [])
        return TrustCheck(file, False, True, _diff(record.get("text"), content, file))

    def trust(self, file: Path, content: bytes) -> TrustCheck:
        """Record ``content`` as the trusted bytes of ``file``; what the records said before."""
        before = self.check(file, content)
        records = self._records()
        text = _text(content)
        records[key_of(file)] = {
            "sha256": digest(content),
            "text": text if text is not None and len(text) <= MAX_KEPT_TEXT else None,
            "trusted_at": time.time(),
        }
        self._write(records)
        return before

    def forget(self, file: Path) -> bool:
        """Drop the record of ``file``; False when there was none."""
        records = self._records()
        if records.pop(key_of(file), None) is None:
            return False
        self._write(records)
        return True

    def _write(self, records: dict[str, Any]) -> None:
        private_dir(self.path.parent)
        tmp = self.path.with_name(f".{TRUST_FILE}.{os.getpid()}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"version": _VERSION, "files": records}, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)


def _text(content: bytes) -> str | None:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _diff(trusted: Any, content: bytes, file: Path) -> list[str]:
    now = _text(content)
    if not isinstance(trusted, str) or now is None:
        return [f"(the trusted text of {file} was not kept; its digest differs)"]
    return [
        line.rstrip("\n")
        for line in difflib.unified_diff(
            trusted.splitlines(keepends=True),
            now.splitlines(keepends=True),
            fromfile=f"{file} (trusted)",
            tofile=f"{file} (now)",
        )
    ]
