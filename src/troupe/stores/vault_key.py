"""The vault's master key: from TROUPE_SECRET_KEY or a 0600 key file, and keys derived from it."""

from __future__ import annotations

import base64
import binascii
import secrets as _random
import stat
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..errors import ConfigError, TroupeError
from ..sandbox.private import publish_once

KEY_ENV = "TROUPE_SECRET_KEY"
KEY_FILENAME = "secret.key"


class VaultError(TroupeError):
    """The vault cannot be used: no usable key, or a key that does not match."""


def parse_key(text: str, *, origin: str) -> bytes:
    """32 key bytes from hex or base64 text; VaultError naming ``origin`` otherwise."""
    raw = text.strip()
    candidates: list[bytes] = []
    with suppress(ValueError):
        candidates.append(bytes.fromhex(raw))
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        with suppress(binascii.Error, ValueError):
            candidates.append(decode(raw + "=" * (-len(raw) % 4)))
    for key in candidates:
        if len(key) == 32:
            return key
    raise VaultError(
        f"{origin} is not a 32-byte key; set it to 64 hex characters, e.g. the output of "
        "`python -c 'import secrets; print(secrets.token_hex(32))'`"
    )


def load_master_key(
    data_dir: Path,
    *,
    key_file: Path | None = None,
    shared: bool = False,
    environ: Mapping[str, str] = {},
) -> bytes:
    """The master key: TROUPE_SECRET_KEY (in ``environ``, the snapshot of the
    environment), else ``key_file`` (the ``vault.key_file`` setting), else
    ``secret.key`` in the data directory, created (mode 0600) if missing.

    A ``shared`` vault (in a database every replica uses) never gets a new key:
    one made by one replica would lock the others out, so it needs the variable
    or the setting, and a :class:`ConfigError` naming both says so.
    """
    if env := environ.get(KEY_ENV):
        return parse_key(env, origin=f"the {KEY_ENV} environment variable")
    if key_file is not None:
        if not key_file.exists():
            raise ConfigError(
                f"vault.key_file {str(key_file)!r} does not exist; write the key there "
                "(64 hex characters, `python -c 'import secrets; print(secrets.token_hex(32))'`"
                f", mode 600) or set {KEY_ENV}"
            )
        return _read_key_file(key_file)
    if shared:
        raise ConfigError(shared_key_missing())
    path = data_dir / KEY_FILENAME
    if not path.exists():
        try:
            publish_once(path, (_random.token_hex(32) + "\n").encode("ascii"))
        except OSError as exc:
            raise VaultError(
                f"cannot create the key file {str(path)!r}: {exc.strerror}; choose a writable "
                f"data directory or set {KEY_ENV}"
            ) from None
    return _read_key_file(path)


def shared_key_missing() -> str:
    """The message for a shared (PostgreSQL) vault with no key configured."""
    return (
        f"the vault is in the shared PostgreSQL database, so every replica needs the same "
        f"key: set the {KEY_ENV} environment variable (64 hex characters) or vault.key_file "
        "(a path to an owner-only file holding it) in troupe.yaml; troupe never generates "
        "a key per replica"
    )


def shared_key_configured(key_file: Path | None, environ: Mapping[str, str]) -> bool:
    """True when a shared vault has a key source: the variable or ``vault.key_file``."""
    return bool(environ.get(KEY_ENV)) or key_file is not None


def _read_key_file(path: Path) -> bytes:
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            raise VaultError(
                f"the key file {str(path)!r} can be read by other users (mode {mode:04o}); "
                f"run `chmod 600 {path}`"
            )
        text = path.read_text(encoding="ascii")
    except OSError as exc:
        raise VaultError(f"cannot read the key file {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError:
        text = ""
    return parse_key(text, origin=f"the key file {str(path)!r}")


def derive_key(material: bytes, purpose: str) -> bytes:
    """32 bytes derived from ``material`` with HKDF-SHA256 for ``purpose``."""
    return HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"troupe:" + purpose.encode()
    ).derive(material)
