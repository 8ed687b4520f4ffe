"""Vault tools: hashing, AES-GCM encryption, Ed25519 signatures and stored secrets."""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets as _random
from collections.abc import Mapping, Sequence
from typing import Any

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..environment import process_environ
from ..stores.vault import SECRET_NAME, SECRET_REF, SecretStore, reference
from ..stores.vault_key import VaultError, parse_key
from ._args import BadArgument, guarded, name_arg, optional_text, text_arg
from ._toolset import Toolset, ToolSpec, tool_list_factory
from .env_import import SETTING, check_import_env, never_importable
from .workspace import Workspace

HASH_ALGORITHMS = ("sha256", "sha512", "sha3_256", "blake2b", "sha1", "md5")
MAX_CRYPTO_FILE_BYTES = 10_000_000
MAX_SECRET_CHARS = 10_000
_HASH_ALIASES = {"sha_256": "sha256", "sha_512": "sha512", "sha_1": "sha1", "sha3": "sha3_256"}
_NONCE = 12
_CHUNK = 1 << 16
_FORMAT = "AES-256-GCM, base64 of a 12-byte nonce followed by the ciphertext"


class VaultTools(Toolset):
    """crypto_* and secrets_* tools over a SecretStore; files are read from the workspace only."""

    specs = (
        ToolSpec("crypto_hash"),
        ToolSpec("crypto_encrypt", dangerous="keyed_by_secret", effect="secret_key_effect"),
        ToolSpec("crypto_decrypt", dangerous="keyed_by_secret", effect="secret_key_effect"),
        ToolSpec("crypto_sign"),
        ToolSpec("crypto_verify"),
        ToolSpec("secrets_set", dangerous=True),
        ToolSpec("secrets_list"),
        ToolSpec("secrets_delete", dangerous=True),
        ToolSpec("secrets_use"),
    )

    def __init__(
        self,
        workspace: Workspace,
        secrets: SecretStore,
        import_env: Sequence[str] = (),
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """``import_env`` names the variables of troupe's environment that
        ``secrets_set(from_env=...)`` may read (none by default; see
        :mod:`troupe.builtins.env_import`). Their values come from ``environ``
        (the settings' snapshot of the environment; None: this process's when
        secrets_set runs)."""
        self.workspace = workspace
        self.secrets = secrets
        self.import_env = frozenset(check_import_env(import_env))
        self.environ = environ

    def _data(self, text: Any, path: Any) -> tuple[bytes, str, str | None]:
        """The bytes to work on, how to describe them, and a note when both were given."""
        chosen = optional_text("path", path, example="notes.txt")
        note = None
        if chosen is not None:
            if text is not None and text != "":
                note = "both path and text were given; the file was used"
            target = self.workspace.resolve(chosen)
            if not target.is_file():
                raise BadArgument(f"{chosen!r} is not a file", "the path of an existing file")
            size = target.stat().st_size
            if size > MAX_CRYPTO_FILE_BYTES:
                raise BadArgument(
                    f"{chosen!r} is {size} bytes",
                    f"a file of at most {MAX_CRYPTO_FILE_BYTES} bytes",
                )
            with self.workspace.open_read(target) as handle:
                content = handle.read(MAX_CRYPTO_FILE_BYTES + 1)
            return content, f"file {self.workspace.relative(target)} ({size} bytes)", note
        if text is None or text == "":
            raise BadArgument("neither text nor path was given", "text='...' or path='file'")
        value = text_arg("text", text, example="hello")
        raw = value.encode("utf-8")
        return raw, f"text ({len(raw)} bytes)", note

    def keyed_by_secret(self, key: Any = None, **_: Any) -> bool:
        """True when ``key`` names a stored secret: then the call asks first.

        The key is stretched under a salt only this vault has
        (:meth:`SecretStore.key_from_secret`), so the result is no oracle for a
        short secret; using a stored secret is still the person's to allow.
        """
        return isinstance(key, str) and SECRET_REF.search(key) is not None

    def secret_key_effect(self, key: Any = None, **_: Any) -> dict[str, Any]:
        """What an approval of a secret-keyed crypto_encrypt or crypto_decrypt allows."""
        names = sorted(set(SECRET_REF.findall(key))) if isinstance(key, str) else []
        shown = ", ".join(reference(name) for name in names)
        return {
            "summary": f"use {shown} as the key (stretched with this vault's own salt); "
            "the result goes back to the model",
            "secrets": names,
        }

    def _aes_key(self, key: Any) -> tuple[bytes, str]:
        """The AES key: the vault's own, a stored secret's, or one given in hex/base64."""
        given = optional_text("key", key, example="{{secret:NAME}}")
        if given is None:
            return self.secrets.derived_key("crypto_encrypt"), "the vault's data key"
        if match := SECRET_REF.fullmatch(given):
            name = match.group(1)
            return self.secrets.key_from_secret(name), (
                f"a key stretched from {reference(name)} with this vault's own salt"
            )
        try:
            return parse_key(given, origin="key"), "the given key"
        except VaultError:
            raise BadArgument(
                "key is neither a secret reference nor a 32-byte key",
                "nothing (the vault's key), '{{secret:NAME}}', or 32 bytes as hex or base64",
            ) from None

    @guarded
    def crypto_hash(
        self, text: str | None = None, path: str | None = None, algorithm: str = "sha256"
    ) -> dict[str, Any]:
        """Hash text or a file in the workspace (sha256 by default; also sha512,
        sha3_256, blake2b, sha1, md5) and return the hex digest."""
        algo = str(algorithm or "sha256").strip().lower().replace("-", "_")
        algo = _HASH_ALIASES.get(algo, algo)
        if algo not in HASH_ALGORITHMS:
            raise BadArgument(f"unknown algorithm {algorithm!r}", ", ".join(HASH_ALGORITHMS))
        digest = hashlib.new(algo)
        chosen = optional_text("path", path, example="notes.txt")
        note = None
        if chosen is not None:
            # Streamed, so any size of file hashes without loading it whole.
            target = self.workspace.resolve(chosen)
            if not target.is_file():
                raise BadArgument(f"{chosen!r} is not a file", "the path of an existing file")
            with self.workspace.open_read(target) as handle:
                while block := handle.read(_CHUNK):
                    digest.update(block)
            what = f"file {self.workspace.relative(target)} ({target.stat().st_size} bytes)"
            if text:
                note = "both path and text were given; the file was hashed"
        else:
            raw, what, _ = self._data(text, None)
            digest.update(raw)
        out = {"algorithm": algo, "digest": digest.hexdigest(), "input": what}
        if note:
            out["note"] = note
        return out

    @guarded
    def crypto_encrypt(
        self, text: str | None = None, path: str | None = None, key: str | None = None
    ) -> dict[str, Any]:
        """Encrypt text or a workspace file with AES-256-GCM. Without `key` the vault's
        own key is used; `key` may be '{{secret:NAME}}' to use a stored secret (that
        asks the person first). Returns base64 ciphertext for crypto_decrypt."""
        raw, what, note = self._data(text, path)
        aes, key_label = self._aes_key(key)
        nonce = _random.token_bytes(_NONCE)
        sealed = nonce + AESGCM(aes).encrypt(nonce, raw, None)
        out = {
            "ciphertext": base64.b64encode(sealed).decode("ascii"),
            "format": _FORMAT,
            "key": key_label,
            "input": what,
        }
        if note:
            out["note"] = note
        return out

    @guarded
    def crypto_decrypt(self, ciphertext: str, key: str | None = None) -> dict[str, Any]:
        """Decrypt base64 ciphertext made by crypto_encrypt, with the same `key`
        (none for the vault's own key, or '{{secret:NAME}}', which asks first)."""
        token = text_arg("ciphertext", ciphertext, example="q83v...", max_chars=20_000_000)
        try:
            sealed = base64.b64decode(token.strip(), validate=True)
        except (binascii.Error, ValueError):
            raise BadArgument("ciphertext is not valid base64", _FORMAT) from None
        if len(sealed) < _NONCE + 16:
            raise BadArgument("ciphertext is too short to be AES-GCM output", _FORMAT)
        aes, key_label = self._aes_key(key)
        try:
            plain = AESGCM(aes).decrypt(sealed[:_NONCE], sealed[_NONCE:], None)
        except InvalidTag:
            raise BadArgument(
                f"decryption failed with {key_label}: wrong key, or the ciphertext was altered",
                "the ciphertext and the same key used by crypto_encrypt",
            ) from None
        try:
            return {"text": self.secrets.mask(plain.decode("utf-8")), "key": key_label}
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(plain).decode("ascii"), "key": key_label}

    @guarded
    def crypto_sign(
        self, text: str | None = None, path: str | None = None, key_name: str = "default"
    ) -> dict[str, Any]:
        """Sign text or a workspace file with the vault's Ed25519 key `key_name`
        (created on first use); returns the signature and the public key, base64."""
        raw, what, note = self._data(text, path)
        name = name_arg("key_name", key_name or "default", example="default")
        pair = self.secrets.signing_key(name, create=True)
        assert pair is not None
        private, public = pair
        signature = Ed25519PrivateKey.from_private_bytes(private).sign(raw)
        out = {
            "signature": base64.b64encode(signature).decode("ascii"),
            "public_key": base64.b64encode(public).decode("ascii"),
            "key_name": name,
            "algorithm": "Ed25519",
            "input": what,
        }
        if note:
            out["note"] = note
        return out

    @guarded
    def crypto_verify(
        self,
        signature: str,
        text: str | None = None,
        path: str | None = None,
        public_key: str | None = None,
        key_name: str | None = None,
    ) -> dict[str, Any]:
        """Check an Ed25519 signature over text or a workspace file, against a base64
        `public_key` or the vault's key `key_name` (default 'default')."""
        sig = _b64("signature", signature, size=64)
        raw, what, _ = self._data(text, path)
        given = optional_text("public_key", public_key, example="base64 public key")
        if given is not None:
            public = _b64("public_key", given, size=32)
            against = "the given public key"
        else:
            name = name_arg("key_name", key_name or "default", example="default")
            pair = self.secrets.signing_key(name, create=False)
            if pair is None:
                raise BadArgument(
                    f"the vault has no signing key named {name!r}",
                    "public_key='base64', or the key_name used with crypto_sign",
                )
            public = pair[1]
            against = f"vault key {name!r}"
        try:
            Ed25519PublicKey.from_public_bytes(public).verify(sig, raw)
            valid = True
        except InvalidSignature:
            valid = False
        return {"valid": valid, "checked_against": against, "input": what}

    @guarded
    def secrets_set(
        self,
        name: str,
        value: str | None = None,
        from_env: str | None = None,
        from_file: str | None = None,
    ) -> dict[str, Any]:
        """Store a secret under `name`, encrypted. Prefer from_env (an environment
        variable the user listed in the config's vault.import_env) or from_file (a
        workspace file): a value typed in the chat is already in the conversation.
        Later, refer to it as {{secret:NAME}}."""
        secret_name = _secret_name(name)
        sources = {
            k: v
            for k, v in (("value", value), ("from_env", from_env), ("from_file", from_file))
            if v not in (None, "")
        }
        if len(sources) != 1:
            raise BadArgument(
                f"{len(sources)} sources were given ({', '.join(sources) or 'none'})",
                "exactly one of value, from_env (a variable name) or from_file (a workspace path)",
            )
        plain, note = self._secret_value(value, from_env, from_file)
        if not plain:
            raise BadArgument("the secret's value is empty", "a non-empty value")
        if len(plain) > MAX_SECRET_CHARS:
            raise BadArgument(
                f"the secret is {len(plain)} characters long", f"at most {MAX_SECRET_CHARS}"
            )
        replaced = self.secrets.set(secret_name, plain)
        out: dict[str, Any] = {
            "name": secret_name,
            "stored": True,
            "replaced": replaced,
            "reference": reference(secret_name),
            "source": next(iter(sources)),
        }
        if note:
            out["note"] = note
        return out

    def _secret_value(self, value: Any, from_env: Any, from_file: Any) -> tuple[str, str | None]:
        """The value of the one source secrets_set was given, and a note about it, if any."""
        if value not in (None, ""):
            if not isinstance(value, str):
                raise BadArgument(f"value must be text, got {type(value).__name__}", "a string")
            return value, (
                "the value was typed in the conversation, so the chat history holds it; "
                "next time use from_env or from_file"
            )
        if from_env not in (None, ""):
            var = text_arg("from_env", from_env, example="GITHUB_TOKEN", max_chars=200)
            self._importable(var)
            source = process_environ() if self.environ is None else self.environ
            if var not in source:
                raise BadArgument(
                    f"the environment variable {var!r} is not set in troupe's process",
                    "the name of a variable set before troupe started",
                )
            return source[var], None
        target = self.workspace.resolve(text_arg("from_file", from_file, example=".token"))
        if not target.is_file():
            raise BadArgument(f"{from_file!r} is not a file", "a file in the workspace")
        with self.workspace.open_read(target) as handle:
            return handle.read(MAX_SECRET_CHARS * 4 + 2).decode("utf-8").rstrip("\r\n"), None

    def _importable(self, var: str) -> None:
        """Refuse a variable the user did not list in vault.import_env, and always
        a model provider's key or a TROUPE_* variable."""
        if (why := never_importable(var)) is not None:
            raise BadArgument(
                f"the environment variable {var!r} {why}; no tool may read it",
                "ask the person to store it with `troupe secrets set NAME --from-env VAR`",
            )
        if var not in self.import_env:
            listed = ", ".join(sorted(self.import_env)) or "nothing"
            raise BadArgument(
                f"the environment variable {var!r} is not listed in the config's {SETTING} "
                f"(which lists {listed})",
                f"a variable named in {SETTING}, or ask the person to add it there",
            )

    @guarded
    def secrets_list(self) -> dict[str, Any]:
        """List the stored secrets by name (never their values), with their references."""
        listed = self.secrets.describe()
        return {"secrets": listed, "count": len(listed)}

    @guarded
    def secrets_delete(self, name: str) -> dict[str, Any]:
        """Delete the stored secret `name`."""
        secret_name = _secret_name(name)
        self.secrets.delete(secret_name)
        return {"name": secret_name, "deleted": True}

    @guarded
    def secrets_use(self, name: str) -> dict[str, Any]:
        """Check that secret `name` exists and get the reference to use it with, without
        revealing it: put '{{secret:NAME}}' where a tool needs the value, e.g. in
        exec_shell's env."""
        secret_name = _secret_name(name)
        if not self.secrets.exists(secret_name):
            self.secrets.get(secret_name)  # raises SecretNotFound, naming the stored secrets
        ref = reference(secret_name)
        return {
            "name": secret_name,
            "reference": ref,
            "how_to_use": (
                f"pass {ref} as a value where the secret is needed, e.g. exec_shell with "
                f"env={{'API_TOKEN': '{ref}'}} and the command using $API_TOKEN; the value is "
                "substituted only inside the tool and masked in its output"
            ),
        }


vault_tools = tool_list_factory(
    VaultTools,
    "vault_tools",
    "crypto_* and secrets_* tools; files are read from ``workspace`` only.",
)


def _secret_name(value: Any) -> str:
    name = text_arg("name", value, example="GITHUB_TOKEN", max_chars=64)
    if match := SECRET_REF.fullmatch(name):
        name = match.group(1)
    if not SECRET_NAME.match(name):
        raise BadArgument(
            f"secret name {name!r} is not allowed",
            "1-64 letters, digits, '_', '-' or '.', starting with a letter or '_', "
            "such as 'GITHUB_TOKEN'",
        )
    return name


def _b64(label: str, value: Any, *, size: int) -> bytes:
    text = text_arg(label, value, example="base64 text", max_chars=1000)
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise BadArgument(f"{label} is not valid base64", f"base64 of {size} bytes") from None
    if len(raw) != size:
        raise BadArgument(f"{label} decodes to {len(raw)} bytes", f"base64 of {size} bytes")
    return raw
