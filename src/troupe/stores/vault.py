"""Secrets encrypted at rest, referenced as ``{{secret:NAME}}``, masked in tool output.

The model never sees a secret's value. It writes ``{{secret:NAME}}`` where a
value is needed; a tool that needs the value (exec_shell's environment, a
browser form field) calls :meth:`SecretStore.substitute` at call time and
:meth:`SecretStore.mask` on whatever it returns, so a value echoed back by a
command comes back as its reference.

Values are encrypted with AES-256-GCM under a master key taken from the
``TROUPE_SECRET_KEY`` environment variable (32 bytes, hex or base64) or from
``secret.key`` in the data directory, created with mode 0600 on first use.
With a PostgreSQL session store the secrets live in that database (schema
``troupe_vault``) and the key must come from ``TROUPE_SECRET_KEY`` or the
``vault.key_file`` setting, so every replica holds the same key; none is
ever generated then.
"""

from __future__ import annotations

import re
import secrets as _random
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..environment import process_environ
from ..errors import TroupeError
from ..sandbox.masking import mask_forms, process_keys
from .postgres import Postgres, open_store, postgres_schema
from .timestamps import iso
from .vault_key import (
    KEY_ENV,
    KEY_FILENAME,
    VaultError,
    derive_key,
    load_master_key,
)

FILENAME = "vault.db"
SECRET_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
SECRET_REF = re.compile(r"\{\{\s*secret:([^{}\s]*)\s*\}\}")
_KEY_CHECK = b"troupe vault key check"
_NONCE_BYTES = 12

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS secrets (
        name TEXT PRIMARY KEY,
        nonce BLOB NOT NULL,
        ciphertext BLOB NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS meta (
        key TEXT PRIMARY KEY,
        value BLOB NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS signing_keys (
        name TEXT PRIMARY KEY,
        nonce BLOB NOT NULL,
        ciphertext BLOB NOT NULL,
        public_key BLOB NOT NULL,
        created_at REAL NOT NULL
    )""",
)

PG_SCHEMA_NAME = "troupe_vault"
PG_SCHEMA = postgres_schema(SCHEMA)


SECRET_KEY_SCRYPT_N = 2**14
"""scrypt's cost for a secret used as a key (16 MiB and some tens of ms a use)."""


class SecretNotFound(VaultError):
    """A ``{{secret:NAME}}`` reference or name with no stored secret."""


def reference(name: str) -> str:
    """The placeholder the model writes for the secret ``name``."""
    return "{{secret:" + name + "}}"


class SecretStore:
    """Named secrets, encrypted in ``vault.db``; also holds the vault's signing keys."""

    def __init__(
        self,
        data_dir: str | Path,
        *,
        database: Postgres | None = None,
        key_file: str | Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """``environ`` is the snapshot of the environment the settings took (None:
        this process's, when it is needed): TROUPE_SECRET_KEY and troupe's own
        keys to mask."""
        self.data_dir = Path(data_dir).expanduser()
        self._environ = environ
        self.key_file = None if key_file is None else Path(key_file).expanduser()
        location = database if database is not None else self.data_dir / FILENAME
        self.store: Any = open_store(location, PG_SCHEMA_NAME, SCHEMA, PG_SCHEMA)
        self._key: bytes | None = None
        self._lock = threading.Lock()

    @property
    def environ(self) -> Mapping[str, str]:
        """Where TROUPE_SECRET_KEY and troupe's own keys are read."""
        return process_environ() if self._environ is None else self._environ

    @property
    def shared(self) -> bool:
        """True when the secrets live in a database other processes share (PostgreSQL)."""
        return bool(self.store.dialect == "postgresql")

    @property
    def path(self) -> Path:
        """The SQLite file (a SQLite vault only)."""
        return Path(self.store.path)

    # -- keys --------------------------------------------------------------
    def master_key(self) -> bytes:
        """The master key, checked against the store the first time."""
        with self._lock:
            if self._key is None:
                if not self.shared:
                    self._refuse_a_lost_key()
                key = load_master_key(
                    self.data_dir, key_file=self.key_file, shared=self.shared, environ=self.environ
                )
                self._check_key(key)
                self._key = key
            return self._key

    def _refuse_a_lost_key(self) -> None:
        # A new key file next to a vault made with the old one would lock the
        # old secrets away for good; stop before creating it.
        key_file = self.key_file or self.data_dir / KEY_FILENAME
        if self.environ.get(KEY_ENV) or key_file.exists() or not self.path.exists():
            return
        with self.store.read() as conn:
            row = conn.execute("SELECT 1 FROM meta WHERE key = 'key_check'").fetchone()
        if row is not None:
            raise VaultError(
                f"the key file {str(key_file)!r} is missing but {str(self.path)!r} holds "
                f"secrets sealed with it; restore the key file or set {KEY_ENV} to the key, "
                "or move the vault file aside to start an empty vault"
            )

    def _check_key(self, key: bytes) -> None:
        aead = AESGCM(key)
        nonce = _random.token_bytes(_NONCE_BYTES)
        fresh = nonce + aead.encrypt(nonce, _KEY_CHECK, b"key-check")
        with self.store.write() as conn:
            # The first process to check the key seals it; every later one
            # (another replica too) checks its key against that seal.
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('key_check', ?) ON CONFLICT DO NOTHING",
                (fresh,),
            )
            row = conn.execute("SELECT value FROM meta WHERE key = 'key_check'").fetchone()
        blob = bytes(row["value"])
        try:
            aead.decrypt(blob[:_NONCE_BYTES], blob[_NONCE_BYTES:], b"key-check")
        except InvalidTag:
            raise VaultError(
                f"the vault key does not match the one {self.store.where!r} was created with; "
                f"set {KEY_ENV} (or restore {KEY_FILENAME}, or vault.key_file) to the original "
                "key, or move the vault aside to start an empty vault"
            ) from None

    def derived_key(self, purpose: str) -> bytes:
        """A 32-byte key for ``purpose``, derived from the master key (never the master itself)."""
        return derive_key(self.master_key(), purpose)

    def key_from_secret(self, name: str) -> bytes:
        """A 32-byte key made from the stored secret ``name`` for crypto_* tools.

        The secret is stretched with scrypt under a salt only this vault has
        (derived from its master key, which no model sees): a ciphertext made
        with it, or a decryption that succeeds, tells nothing about a short
        secret (a PIN) to whoever lacks the master key, and the same secret in
        another vault gives another key.
        """
        from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

        salt = self.derived_key("secret-as-key salt")
        stretch = Scrypt(salt=salt, length=32, n=SECRET_KEY_SCRYPT_N, r=8, p=1)
        return stretch.derive(self.get(name).encode("utf-8"))

    def _seal(self, plaintext: bytes, aad: bytes) -> tuple[bytes, bytes]:
        nonce = _random.token_bytes(_NONCE_BYTES)
        return nonce, AESGCM(self.master_key()).encrypt(nonce, plaintext, aad)

    def _open(self, nonce: bytes, ciphertext: bytes, aad: bytes, what: str) -> bytes:
        try:
            return AESGCM(self.master_key()).decrypt(nonce, ciphertext, aad)
        except InvalidTag:
            raise VaultError(
                f"{what} in {self.store.where!r} cannot be decrypted (altered, or stored under "
                "another key); set it again"
            ) from None

    # -- secrets -------------------------------------------------------------
    def set(self, name: str, value: str) -> bool:
        """Store (or replace) a secret; True when it replaced an existing one."""
        nonce, sealed = self._seal(value.encode("utf-8"), _aad(name))
        now = time.time()
        with self.store.write() as conn:
            existed = conn.execute("SELECT 1 FROM secrets WHERE name = ?", (name,)).fetchone()
            conn.execute(
                """INSERT INTO secrets(name, nonce, ciphertext, created_at, updated_at)
                   VALUES (?, ?, ?, ?, ?)
                   ON CONFLICT(name) DO UPDATE SET nonce = excluded.nonce,
                   ciphertext = excluded.ciphertext, updated_at = excluded.updated_at""",
                (name, nonce, sealed, now, now),
            )
        return existed is not None

    def get(self, name: str) -> str:
        """A secret's value; :class:`SecretNotFound` when there is none."""
        with self.store.read() as conn:
            row = conn.execute(
                "SELECT nonce, ciphertext FROM secrets WHERE name = ?", (name,)
            ).fetchone()
        if row is None:
            raise SecretNotFound(self._missing(name))
        plain = self._open(
            bytes(row["nonce"]), bytes(row["ciphertext"]), _aad(name), f"secret {name!r}"
        )
        return plain.decode("utf-8")

    def exists(self, name: str) -> bool:
        """True when a secret named ``name`` is stored."""
        with self.store.read() as conn:
            return (
                conn.execute("SELECT 1 FROM secrets WHERE name = ?", (name,)).fetchone() is not None
            )

    def require(self, name: str) -> None:
        """Raise :class:`SecretNotFound`, naming the stored secrets, unless ``name`` is stored."""
        if not self.exists(name):
            raise SecretNotFound(self._missing(name))

    def names(self) -> list[str]:
        """The stored secrets' names, sorted."""
        with self.store.read() as conn:
            return [r["name"] for r in conn.execute("SELECT name FROM secrets ORDER BY name")]

    def describe(self) -> list[dict[str, Any]]:
        """Name, reference and times of every secret; never a value."""
        with self.store.read() as conn:
            rows = conn.execute(
                "SELECT name, created_at, updated_at FROM secrets ORDER BY name"
            ).fetchall()
        return [
            {
                "name": r["name"],
                "reference": reference(r["name"]),
                "created_at": iso(r["created_at"]),
                "updated_at": iso(r["updated_at"]),
            }
            for r in rows
        ]

    def delete(self, name: str) -> None:
        """Remove a secret; :class:`SecretNotFound` when there is none."""
        with self.store.write() as conn:
            cur = conn.execute("DELETE FROM secrets WHERE name = ?", (name,))
        if cur.rowcount == 0:
            raise SecretNotFound(self._missing(name))

    def _missing(self, name: str) -> str:
        known = self.names()
        listing = ", ".join(known) if known else "none yet"
        return (
            f"no secret named {name!r} (stored secrets: {listing}); store it first with secrets_set"
        )

    # -- references and masking ----------------------------------------------
    def has_references(self, text: str) -> bool:
        """True when ``text`` contains a ``{{secret:NAME}}`` reference."""
        return bool(SECRET_REF.search(text))

    def substitute(self, text: str) -> str:
        """``text`` with every ``{{secret:NAME}}`` replaced by the secret's value.

        Raises :class:`SecretNotFound` naming the first reference with no secret.
        Call it only where the value leaves troupe (a child process, a form field),
        never on text that goes back to the model.
        """
        names = list(dict.fromkeys(SECRET_REF.findall(text)))
        if not names:
            return text
        values = {name: self.get(name) for name in names}
        return SECRET_REF.sub(lambda m: values[m.group(1)], text)

    def substitute_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """An environment mapping with references in its values substituted."""
        return {key: self.substitute(value) for key, value in env.items()}

    def values(self) -> dict[str, str]:
        """Every secret's value by name (for masking)."""
        if not self.store.exists():
            return {}  # masking output must not create the vault as a side effect
        return {name: self.get(name) for name in self.names()}

    def mask(self, text: str) -> str:
        """``text`` with every stored secret's value replaced by its reference."""
        if not text:
            return text
        try:
            known = self.values()
        except TroupeError:
            known = {}  # no usable vault: no stored values to leak either
        return mask_values(text, self._with_process_keys(known))

    def mask_data(self, data: Any) -> Any:
        """:meth:`mask` applied to every string inside dicts, lists and tuples."""
        try:
            known = self._with_process_keys(self.values())
        except TroupeError:
            known = self._with_process_keys({})
        if not known:
            return data
        return _mask_nested(data, known)

    def _with_process_keys(self, stored: Mapping[str, str]) -> dict[str, str]:
        """Stored secrets plus troupe's own keys; a value stored as a secret keeps its name."""
        by_value = {value: name for name, value in process_keys(self.environ).items()}
        by_value.update({value: name for name, value in stored.items()})
        return {name: value for value, name in by_value.items()}

    # -- signing keys ------------------------------------------------------------
    def signing_key(self, name: str, *, create: bool) -> tuple[bytes, bytes] | None:
        """(private, public) raw Ed25519 key bytes named ``name``; created on request."""
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        aad = b"signing-key:" + name.encode()
        with self.store.read() as conn:
            row = conn.execute(
                "SELECT nonce, ciphertext, public_key FROM signing_keys WHERE name = ?", (name,)
            ).fetchone()
        if row is not None:
            private = self._open(
                bytes(row["nonce"]), bytes(row["ciphertext"]), aad, f"signing key {name!r}"
            )
            return private, bytes(row["public_key"])
        if not create:
            return None
        key = Ed25519PrivateKey.generate()
        private = key.private_bytes_raw()
        public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        nonce, sealed = self._seal(private, aad)
        with self.store.write() as conn:
            conn.execute(
                """INSERT INTO signing_keys(name, nonce, ciphertext, public_key,
                   created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""",
                (name, nonce, sealed, public, time.time()),
            )
        # Another process may have created the key first; the stored one wins.
        return self.signing_key(name, create=False)


def mask_values(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each value in ``values`` replaced by its name's reference."""
    # Longest first, so a secret that contains another is masked whole. Encoded,
    # reversed and split forms are masked too (see troupe.sandbox.masking).
    for name, value in sorted(values.items(), key=lambda item: len(item[1]), reverse=True):
        if value:
            text = mask_forms(text, value, reference(name))
    return text


def _mask_nested(data: Any, values: Mapping[str, str]) -> Any:
    if isinstance(data, str):
        return mask_values(data, values)
    if isinstance(data, dict):
        return {key: _mask_nested(item, values) for key, item in data.items()}
    if isinstance(data, list | tuple):
        return [_mask_nested(item, values) for item in data]
    return data


def _aad(name: str) -> bytes:
    # Binding the ciphertext to the name stops a row being swapped for another's.
    return b"secret:" + name.encode("utf-8")
