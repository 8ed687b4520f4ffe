"""The router's start-up: phrase vectors cached on disk, the encoder preloaded."""

from __future__ import annotations

import logging
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import troupe
from troupe import Config, build_agent_tree
from troupe.routing.encoder import UniversalSentenceEncoder
from troupe.routing.fastpath import FastPath
from troupe.routing.phrase_cache import PhraseCache
from troupe.routing.router import AgentProfile, Router
from troupe.settings import load_settings
from troupe.tree import TroupeAgent

TEAM = [AgentProfile.build("operator", texts=["Runs shell commands."], keywords=["run"])]


class CountingEncoder:
    """Three-dimensional vectors; counts the texts it was asked to encode."""

    cache_id = "counting/1"

    def __init__(self) -> None:
        self.encoded = 0
        self.preloads = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        self.encoded += len(texts)
        rows = [[1.0, float(len(t) % 3), 0.5] for t in texts]
        vectors = np.asarray(rows, dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def preload(self) -> None:
        self.preloads += 1


def test_phrase_vectors_come_back_from_the_cache(tmp_path: Path) -> None:
    cache = PhraseCache(tmp_path / "cache")
    vectors = np.eye(2, dtype=np.float32)

    cache.store("enc/1", ["a", "b"], vectors)

    loaded = cache.load("enc/1", ["a", "b"])
    assert loaded is not None and np.array_equal(loaded, vectors)
    assert cache.load("enc/2", ["a", "b"]) is None  # another encoder version
    assert cache.load("enc/1", ["a", "c"]) is None  # other phrases


def test_the_cache_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    cache = PhraseCache(tmp_path / "cache")

    cache.store("enc/1", ["a"], np.ones((1, 2), dtype=np.float32))

    mode = stat.S_IMODE(cache.path("enc/1", ["a"]).stat().st_mode)
    assert mode == 0o600


def test_a_cache_file_that_does_not_fit_is_ignored(tmp_path: Path) -> None:
    cache = PhraseCache(tmp_path)
    cache.path("enc/1", ["a", "b"]).write_bytes(b"not an array")

    assert cache.load("enc/1", ["a", "b"]) is None


def test_an_unwritable_cache_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be", encoding="utf-8")

    with caplog.at_level(logging.WARNING, logger="troupe.router"):
        PhraseCache(blocker / "cache").store("enc/1", ["a"], np.ones((1, 2)))

    assert "phrase vectors not cached" in caplog.text


def test_a_second_router_reuses_the_cached_phrase_vectors(tmp_path: Path) -> None:
    encoder = CountingEncoder()
    cache = PhraseCache(tmp_path)
    first = Router(TEAM, encoder, cache=cache).decide("run the tests")
    encoded_once = encoder.encoded

    second = Router(TEAM, encoder, cache=cache).decide("run the tests")

    assert encoder.encoded - encoded_once < encoded_once  # only the request this time
    assert first.candidates == second.candidates


def test_preload_starts_the_encoders_own_preload() -> None:
    encoder = CountingEncoder()
    root = build_agent_tree(Config(model="offline", router="off"))

    FastPath(root, {}, threshold=0.5, encoder_factory=lambda: encoder).preload()

    assert encoder.preloads == 1


def test_the_real_encoder_preloads_once_and_then_encodes() -> None:
    encoder = UniversalSentenceEncoder()

    encoder.preload()
    encoder.preload()
    vectors = encoder.encode(["list the files"])

    assert vectors.shape[0] == 1
    assert encoder.cache_id.startswith("use-multilingual-v3/")


async def _route_once(config: Config) -> None:
    root = build_agent_tree(config)
    assert isinstance(root, TroupeAgent) and root.troupe_router is not None
    router = await root.troupe_router.router()
    router.decide("list the files")


async def test_the_library_keeps_phrase_vectors_where_it_is_told(tmp_path: Path) -> None:
    await _route_once(Config(model="offline", router="auto", router_cache_dir=tmp_path / "rc"))

    assert list((tmp_path / "rc").glob("*.npy"))


async def test_the_library_writes_no_phrase_cache_unless_told(
    isolated_environment: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME")

    await _route_once(Config(model="offline", router="auto"))

    assert not list(tmp_path.rglob("*.npy"))
    assert not list(isolated_environment.rglob("*.npy"))


async def test_a_configured_data_dir_holds_the_cli_phrase_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TROUPE_DATA_DIR")
    config = tmp_path / "troupe.yaml"
    config.write_text("data_dir: mine\nbuiltin_tools: false\n", encoding="utf-8")

    (tmp_path / "ws").mkdir()
    await _route_once(
        load_settings(config_path=config, workspace=tmp_path / "ws", router="auto").config
    )

    assert list((tmp_path / "mine" / "router-cache").glob("*.npy"))


async def test_without_a_data_dir_the_cli_phrase_cache_is_in_the_xdg_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TROUPE_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    await _route_once(load_settings(workspace=tmp_path, router="auto").config)

    assert list((tmp_path / "cache" / "troupe" / "router-cache").glob("*.npy"))
    assert not list((tmp_path / "data").rglob("*.npy"))


class _RecordsBlasThreads:
    """Stands in for the loaded model: records the BLAS pool size during encode."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def encode(self, texts: list[str]) -> np.ndarray[Any, Any]:
        from threadpoolctl import threadpool_info  # type: ignore[import-untyped]

        self.seen += [
            pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"
        ]
        return np.ones((len(texts), 4), dtype=np.float32)


@pytest.mark.parametrize("threads", [1, 3])
def test_the_configured_encoder_threads_bound_blas_whatever_the_environment_says(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from troupe.routing import encoder as encoder_module

    monkeypatch.setattr(encoder_module, "_threads", encoder_module.ENCODER_BLAS_THREADS)
    build_agent_tree(Config(model="offline", router="auto", router_encoder_threads=threads))
    encoder = UniversalSentenceEncoder()
    model = _RecordsBlasThreads()
    encoder._model = model

    encoder.encode(["list the files"])

    assert model.seen and set(model.seen) == {threads}


def test_encoder_threads_come_from_the_config_files_router_section(tmp_path: Path) -> None:
    config = tmp_path / "troupe.yaml"
    config.write_text("router:\n  mode: auto\n  encoder_threads: 2\n", encoding="utf-8")
    (tmp_path / "ws").mkdir()

    settings = load_settings(config_path=config, workspace=tmp_path / "ws")

    assert settings.config.router_encoder_threads == 2


def test_zero_encoder_threads_is_refused_naming_the_setting() -> None:
    with pytest.raises(troupe.ConfigError, match="router_encoder_threads"):
        Config(router_encoder_threads=0)
