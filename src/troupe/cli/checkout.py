"""The benchmark kit of a source checkout (``bench/troupe_bench``), for the
commands that need it: ``troupe bench ...`` and ``troupe eval --stub-tools``.

The kit (stub tools, a faulty model, request sets, the benchmarks) is not in
the installed package. It is found only beside the package's own source (an
editable install of a checkout, as ``python dev.py`` makes), never in the
current directory: a workspace's ``bench/`` is not troupe's code.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

KIT = "troupe_bench"


class CheckoutOnlyError(Exception):
    """A checkout-only command was run from an installed wheel."""


def bench_dir() -> Path:
    """Where a checkout keeps the kit: ``<checkout>/bench`` beside ``src/troupe``."""
    return Path(__file__).resolve().parents[3] / "bench"


def bench_kit(module: str, command: str) -> ModuleType:
    """``troupe_bench.<module>`` from the checkout's ``bench/``.

    Raises:
        CheckoutOnlyError: one line naming ``command`` and where it runs, when
            no checkout is found.
    """
    directory = bench_dir()
    if not (directory / KIT / "__init__.py").is_file():
        raise CheckoutOnlyError(
            f"`{command}` runs from a source checkout of troupe (its benchmark kit is not "
            "in the installed package): clone troupe's repository and run "
            "`python dev.py bench` there."
        )
    if str(directory) not in sys.path:
        sys.path.insert(0, str(directory))
    return importlib.import_module(f"{KIT}.{module}")
