"""troupe's import graph, read from the source with ``ast``.

Every ``import`` counts, at module level or inside a function (a lazy import
still runs the other module, and two modules that need each other are one
module in two files); imports under ``if TYPE_CHECKING:`` do not, as they
never run. Importing ``troupe.a.b`` also runs ``troupe.a``'s ``__init__``,
so each edge brings its parent packages along.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import troupe

PACKAGE_DIR = Path(troupe.__file__).parent


def modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> file."""
    found = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from (n for child in node.orelse for n in _imports_in(child))
            continue
        yield from _imports_in(node)


def _imports_in(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _imports(node)


def _with_parents(name: str, known: dict[str, Path]) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & set(known)


def graph() -> dict[str, set[str]]:
    """Module -> the troupe modules it imports (parents packages included)."""
    known = modules()
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                bases = [alias.name for alias in node.names]
                targets.update(t for b in bases for t in _with_parents(b, known))
                continue
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            targets |= _with_parents(base, known)
            for alias in node.names:  # `from . import serve` imports the module serve
                targets |= {f"{base}.{alias.name}"} & set(known)
        targets.discard(name)
        # A package's own __init__ runs before its modules: not an edge back to it.
        edges[name] = {t for t in targets if not name.startswith(t + ".")}
    return edges


def packages(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph between troupe's top-level packages and modules (``troupe.x``):
    an import between any two of their modules is an edge between them."""

    def top(name: str) -> str:
        return ".".join(name.split(".")[:2])

    tops: dict[str, set[str]] = {}
    for name, targets in edges.items():
        own = top(name)
        tops.setdefault(own, set()).update(top(t) for t in targets if top(t) != own)
    return tops


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found
