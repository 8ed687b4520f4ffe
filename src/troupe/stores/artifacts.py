"""ADK's artifacts in the session store's database, so every replica reads them.

:class:`DatabaseArtifactService` is an ADK ``BaseArtifactService`` over
:mod:`troupe.stores.database`: one row per version of a file, in
``troupe_artifacts`` beside the sessions (PostgreSQL, the SQLite file, or an
in-memory database for ``memory://``). It keeps what ADK's in-memory service
keeps: session-scoped files and ``user:`` files shared by a user's sessions,
versions numbered from 0, custom metadata, the MIME type, and ``artifact://``
references followed (within the caller's scope) when loaded.

A deployment with a bucket can set ``artifact_store`` to one of ADK's own
artifact services instead (``gs://bucket``, ``file:///path``, ``memory://``):
:func:`open_artifact_store` hands those URIs to ADK's service registry.
"""

from __future__ import annotations

import json
import time
from typing import Any

from google.adk.artifacts import artifact_util
from google.adk.artifacts.base_artifact_service import (
    ArtifactVersion,
    BaseArtifactService,
    ensure_part,
)
from google.adk.errors.input_validation_error import InputValidationError
from google.genai import types
from typing_extensions import override

from ..errors import ConfigError
from .database import Records

MAX_REFERENCE_DEPTH = 5
"""``artifact://`` references followed at most by one load."""
SAVE_TRIES = 5
"""Tries to number a version when replicas save the same file at once."""
USER_SCOPE = ""
"""The scope column of a ``user:`` file (session-scoped files name their session)."""

TABLES = {
    dialect: (
        "CREATE TABLE IF NOT EXISTS troupe_artifacts ("
        " app_name TEXT NOT NULL, user_id TEXT NOT NULL, scope TEXT NOT NULL,"
        " filename TEXT NOT NULL, version BIGINT NOT NULL, part TEXT NOT NULL,"
        " mime_type TEXT, custom_metadata TEXT NOT NULL,"
        " create_time DOUBLE PRECISION NOT NULL,"
        " PRIMARY KEY (app_name, user_id, scope, filename, version))",
    )
    for dialect in ("postgresql", "sqlite")
}
_WHERE = "app_name = :a AND user_id = :u AND scope = :s AND filename = :f"


def open_artifact_store(uri: str, records: Records) -> BaseArtifactService:
    """The artifact service ``uri`` names: empty for the session store's database
    (``records``), else one of ADK's (``gs://``, ``file://``, ``memory://``).

    Raises:
        ConfigError: ADK knows no artifact service for the URI's scheme.
    """
    if not uri:
        return DatabaseArtifactService(records)
    from google.adk.cli.service_registry import get_service_registry

    try:
        service = get_service_registry().create_artifact_service(uri)
    except (ValueError, ImportError) as exc:
        raise ConfigError(f"artifact_store {uri!r} cannot be used: {exc}") from None
    if service is None:
        raise ConfigError(
            f"artifact_store {uri!r} names no artifact service ADK knows; leave it empty "
            "for the session store's database, or use gs://bucket, file:///path or memory://"
        )
    return service


def _is_user_file(filename: str) -> bool:
    return filename.startswith("user:")


_VERSION_COLUMNS = "version, mime_type, custom_metadata, create_time"
"""What an artifact's version is described by (ADK's ``ArtifactVersion``)."""


class DatabaseArtifactService(BaseArtifactService):
    """ADK's artifact service, its versions kept as rows of the session store's database."""

    def __init__(self, records: Records) -> None:
        self.records = records

    async def _ready(self) -> None:
        await self.records.ensure("troupe_artifacts", TABLES)

    @staticmethod
    def _key(app_name: str, user_id: str, filename: str, session_id: str | None) -> dict[str, str]:
        artifact_util.validate_path_segment(app_name, "app_name")
        artifact_util.validate_path_segment(user_id, "user_id")
        if _is_user_file(filename):
            scope = USER_SCOPE
        elif session_id is None:
            raise InputValidationError("Session ID must be provided for session-scoped artifacts.")
        else:
            artifact_util.validate_path_segment(session_id, "session_id")
            scope = session_id
        return {"a": app_name, "u": user_id, "s": scope, "f": filename}

    @override
    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: types.Part | dict[str, Any],
        session_id: str | None = None,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        key = self._key(app_name, user_id, filename, session_id)
        part = ensure_part(artifact)
        mime_type = self._mime_type(part, app_name, user_id, session_id)
        await self._ready()
        row = {
            **key,
            "p": part.model_dump_json(exclude_none=True),
            "m": mime_type,
            "c": json.dumps(custom_metadata or {}),
            "t": time.time(),
        }
        for attempt in range(SAVE_TRIES):
            try:
                async with self.records.transaction() as tx:
                    found = await tx.execute(
                        "SELECT coalesce(max(version), -1) + 1 FROM troupe_artifacts"
                        f" WHERE {_WHERE}",
                        key,
                    )
                    version = int(found.rows[0][0])
                    await tx.execute(
                        "INSERT INTO troupe_artifacts (app_name, user_id, scope, filename,"
                        " version, part, mime_type, custom_metadata, create_time)"
                        " VALUES (:a, :u, :s, :f, :v, :p, :m, :c, :t)",
                        {**row, "v": version},
                    )
                return version
            except Exception as exc:  # another replica took that version number first
                if attempt == SAVE_TRIES - 1 or "unique" not in str(exc).lower():
                    raise
        raise AssertionError("unreachable")

    @staticmethod
    def _mime_type(
        part: types.Part, app_name: str, user_id: str, session_id: str | None
    ) -> str | None:
        if part.inline_data is not None:
            return part.inline_data.mime_type
        if part.text is not None:
            return "text/plain"
        if part.file_data is not None:
            if artifact_util.is_artifact_ref(part):
                parsed = artifact_util.parse_artifact_uri(part.file_data.file_uri or "")
                if parsed is None:
                    raise InputValidationError(
                        f"Invalid artifact reference URI: {part.file_data.file_uri}"
                    )
                artifact_util.validate_artifact_reference_scope(
                    app_name=app_name, user_id=user_id, session_id=session_id, parsed_uri=parsed
                )
                return None  # known once the reference is loaded
            return part.file_data.mime_type
        raise InputValidationError("Not supported artifact type.")

    async def _rows(
        self, key: dict[str, str], version: int | None = None, columns: str = "*"
    ) -> list[tuple[Any, ...]]:
        await self._ready()
        sql = f"SELECT {columns} FROM troupe_artifacts WHERE {_WHERE}"
        params: dict[str, Any] = dict(key)
        if version is not None:
            sql += " AND version = :v"
            params["v"] = version
        return (await self.records.run(sql + " ORDER BY version", params)).rows

    @override
    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> types.Part | None:
        depth = MAX_REFERENCE_DEPTH
        while True:
            key = self._key(app_name, user_id, filename, session_id)
            rows = await self._rows(key, version, "part")
            if not rows:
                return None
            part = types.Part.model_validate_json(rows[-1][0])
            if not artifact_util.is_artifact_ref(part):
                return None if part == types.Part() else part
            assert part.file_data is not None
            target = artifact_util.resolve_artifact_reference(
                file_uri=part.file_data.file_uri or "",
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                remaining_depth=depth,
            )
            depth -= 1
            app_name, user_id = target.app_name, target.user_id
            filename, session_id, version = target.filename, target.session_id, target.version

    @override
    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> list[str]:
        artifact_util.validate_path_segment(app_name, "app_name")
        artifact_util.validate_path_segment(user_id, "user_id")
        scopes = [USER_SCOPE]
        if session_id is not None:
            artifact_util.validate_path_segment(session_id, "session_id")
            scopes.append(session_id)
        await self._ready()
        found = await self.records.run(
            "SELECT DISTINCT filename FROM troupe_artifacts"
            " WHERE app_name = :a AND user_id = :u AND scope IN (:s0, :s1)",
            {"a": app_name, "u": user_id, "s0": scopes[0], "s1": scopes[-1]},
        )
        return sorted(str(row[0]) for row in found.rows)

    @override
    async def delete_artifact(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> None:
        key = self._key(app_name, user_id, filename, session_id)
        await self._ready()
        await self.records.run(f"DELETE FROM troupe_artifacts WHERE {_WHERE}", key)

    @override
    async def list_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[int]:
        key = self._key(app_name, user_id, filename, session_id)
        return [int(row[0]) for row in await self._rows(key, columns="version")]

    @override
    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[ArtifactVersion]:
        key = self._key(app_name, user_id, filename, session_id)
        rows = await self._rows(key, columns=_VERSION_COLUMNS)
        return [self._version(key, row) for row in rows]

    @override
    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> ArtifactVersion | None:
        key = self._key(app_name, user_id, filename, session_id)
        rows = await self._rows(key, version, _VERSION_COLUMNS)
        return self._version(key, rows[-1]) if rows else None

    @staticmethod
    def _version(key: dict[str, str], row: tuple[Any, ...]) -> ArtifactVersion:
        version = int(row[0])
        return ArtifactVersion(
            version=version,
            canonical_uri=artifact_util.get_artifact_uri(
                key["a"], key["u"], key["f"], version, key["s"] or None
            ),
            mime_type=row[1],
            custom_metadata=json.loads(row[2]),
            create_time=float(row[3]),
        )
