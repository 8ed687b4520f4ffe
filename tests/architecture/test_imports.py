"""No import cycles, and every module imports on its own."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from fakes.import_graph import cycles, graph, modules

# Imports each module named on stdin in a child forked from an interpreter in
# which no troupe module is loaded yet (third-party packages are preloaded
# once, so the check takes seconds, not minutes); prints the failures as JSON.
_IMPORT_EACH_ALONE = textwrap.dedent(
    """
    import importlib, json, os, sys, traceback
    import google.adk.agents, google.adk.runners, google.genai.types, pydantic, rich, typer, yaml
    import google.adk.models.lite_llm, litellm
    assert not [m for m in sys.modules if m == "troupe" or m.startswith("troupe.")]
    failures = {}
    for name in sys.stdin.read().split():
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            try:
                importlib.import_module(name)
                message = ""
            except BaseException:
                message = traceback.format_exc(limit=3)
            os.write(write, message.encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            message = pipe.read().decode()
        os.waitpid(pid, 0)
        if message:
            failures[name] = message
    print(json.dumps(failures))
    """
)


def test_the_import_graph_has_no_cycles() -> None:
    found = cycles(graph())

    assert found == [], "import cycles (move the shared piece into a module both import):\n" + (
        "\n".join(" <-> ".join(group) for group in found)
    )


def test_the_cycle_check_finds_a_cycle_through_three_modules() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

    assert cycles(edges) == [["a", "b", "c"]]


def test_a_lazy_import_inside_a_function_is_an_edge_and_a_type_only_import_is_not() -> None:
    edges = graph()

    assert "troupe.builtins" in edges["troupe.settings"]  # imported inside Settings.config
    assert "troupe.mcp.placement" not in edges["troupe.mcp.toolset"]  # TYPE_CHECKING only


def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    names = sorted(modules())
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH_ALONE],
        input="\n".join(names),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    failures = json.loads(done.stdout.strip().splitlines()[-1])
    assert failures == {}, "\n\n".join(f"{name}:\n{tb}" for name, tb in failures.items())


_HELP_THEN_MODULES = textwrap.dedent(
    """
    import runpy, sys
    sys.argv = ["troupe", *sys.argv[1:]]
    try:
        runpy.run_module("troupe", run_name="__main__")
    except SystemExit:
        pass
    print(" ".join(sys.modules), file=sys.stderr)
    """
)
HEAVY = ("google.adk", "google.genai", "litellm", "playwright", "mcp", "a2a", "sqlalchemy")


def _loaded_after(*argv: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _HELP_THEN_MODULES, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    loaded = set(done.stderr.split())
    return {h for h in HEAVY if h in loaded or any(m.startswith(h + ".") for m in loaded)}


def test_troupe_help_loads_no_agent_framework_model_client_or_browser() -> None:
    assert _loaded_after("--help") == set()


def test_troupe_version_and_subcommand_help_load_none_either() -> None:
    assert _loaded_after("version") == set()
    assert _loaded_after("secrets", "--help") == set()
