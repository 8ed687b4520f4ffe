"""The installed wheel is the product: no benchmark code in it, and ``troupe eval``
runs from it in a fresh virtual environment (issue 23, item 4).

The wheel is built from this checkout without build isolation (hatchling is a
dev dependency, so nothing is downloaded) and installed without its
dependencies into a new venv that sees this venv's packages through a ``.pth``
line: the wheel's own ``troupe`` is the one imported, not the checkout's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK_NAMES = ("troupe_bench", "benchmarks", "stub_tools", "faulty", "router_bench")


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["COLUMNS"] = "200"
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    built = _run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
        "-w", out, ROOT,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    [found] = out.glob("troupe-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel; its dependencies come from this venv."""
    home = tmp_path_factory.mktemp("venv") / "v"
    venv.EnvBuilder(with_pip=False).create(home)
    python = home / "bin" / "python"
    site = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    # A plain path line: this venv's packages, without running its .pth files
    # (one of them would put the checkout's src/ ahead of the wheel).
    ours = sysconfig.get_paths()["purelib"]
    (Path(site.stdout.strip()) / "_deps.pth").write_text(ours + "\n", encoding="utf-8")
    done = _run(
        sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel
    )
    assert done.returncode == 0, done.stderr
    return home


def test_the_wheel_holds_no_benchmark_code(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()

    assert any(n == "troupe/evaluation/runner.py" for n in names)  # the eval ships
    assert any(n.startswith("troupe/evaluation/data/routing_test") for n in names)
    assert all(n.startswith(("troupe/", "troupe-")) for n in names), names
    leaked = [n for n in names if any(word in n for word in BENCHMARK_NAMES)]
    assert leaked == []


def test_troupe_eval_runs_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    python, troupe = installed / "bin" / "python", installed / "bin" / "troupe"
    where = _run(python, "-c", "import troupe; print(troupe.__file__)")
    assert str(installed) in where.stdout, where.stdout + where.stderr  # the wheel's copy

    out = tmp_path / "eval.json"
    result = _run(
        troupe, "eval", "--model", "offline", "--dataset", "test", "--limit", "8",
        "--out-json", out, "--out-html", tmp_path / "eval.html",
        cwd=tmp_path,
    )  # fmt: skip

    assert result.returncode == 0, result.stdout + result.stderr
    assert "overall" in result.stdout
    assert out.read_text(encoding="utf-8").count('"text"') == 8


@pytest.mark.parametrize(
    "command",
    [["bench", "faults", "--turns", "1"], ["eval", "--model", "offline", "--stub-tools"]],
    ids=["bench", "eval-stub-tools"],
)
def test_a_checkout_only_command_from_the_wheel_says_so_in_one_line_and_imports_no_workspace_code(
    installed: Path, tmp_path: Path, command: list[str]
) -> None:
    # A workspace's own bench/ is not troupe's code: it is never imported.
    planted = tmp_path / "bench" / "troupe_bench"
    planted.mkdir(parents=True)
    marker = tmp_path / "ran"
    for module in ("__init__", "faults", "stub_tools"):
        (planted / f"{module}.py").write_text(
            f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8"
        )

    result = _run(installed / "bin" / "troupe", *command, cwd=tmp_path)

    assert not marker.exists()
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "runs from a source checkout of troupe" in lines[0]
    assert "Traceback" not in result.stdout + result.stderr
