"""No import cycles, and every module imports on its own."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from fakes.import_graph import cycles, graph, modules

# Imports each module named on stdin in a child forked from an interpreter in
# which no troupe module is loaded yet, and prints the failures as JSON. The
# third-party packages troupe uses are loaded once before the forks (found by
# a scout child that imports everything), so each child runs only troupe's
# own module code and the check takes seconds, not minutes.
_IMPORT_EACH_ALONE = textwrap.dedent(
    """
    import importlib, json, os, sys, traceback

    def in_child(work):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            try:
                message = work()
            except BaseException:
                message = "!" + traceback.format_exc(limit=3)
            os.write(write, message.encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            message = pipe.read().decode()
        os.waitpid(pid, 0)
        return message

    def ours(name):
        return name == "troupe" or name.startswith("troupe.")

    names = sys.stdin.read().split()
    before = set(sys.modules)

    def scout():
        for name in names:
            importlib.import_module(name)
        return " ".join(m for m in sys.modules if m not in before and not ours(m))

    for name in in_child(scout).split():
        try:
            importlib.import_module(name)
        except BaseException:
            pass
    assert not [m for m in sys.modules if ours(m)]

    def import_alone(name):
        return lambda: importlib.import_module(name) and ""

    failures = {}
    for name in names:
        if message := in_child(import_alone(name)):
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
        timeout=110,
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
