"""Reading a YAML file that must hold a mapping: one loader, one set of error messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError


def read_mapping(
    file: Path, kind: str, shape: str, *, empty_ok: bool = False, content: bytes | None = None
) -> dict[str, Any]:
    """The mapping in ``file`` (or in ``content``, its bytes read already); ``kind``
    names the file in errors (``config file``).

    Raises:
        ConfigError: the file cannot be read, is not YAML, or holds something
            other than a mapping (described by ``shape``).
    """
    try:
        text = (file.read_bytes() if content is None else content).decode("utf-8")
        raw = yaml.safe_load(text)
    except UnicodeDecodeError:
        raise ConfigError(f"{kind.capitalize()} {str(file)!r} is not UTF-8 text.") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {kind} {str(file)!r}: {exc.strerror}.") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{kind.capitalize()} {str(file)!r} is not valid YAML: {exc}.") from None
    if raw is None and empty_ok:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{kind.capitalize()} {str(file)!r} must be {shape}, not {type(raw).__name__}."
        )
    return raw
