"""Finding where troupe's source reaches past ADK's public API.

What counts (issue 23): an attribute or method of ADK's that starts with one
underscore (read, written, called, overridden, or named to ``getattr``), an
import from a private ADK module or of a private name, an assignment to
``__class__``, and a regex or text test over words ADK writes (its errors,
the instructions it injects). ADK's private names and its words are read
from the installed ``google.adk`` package, so the scan follows the release
troupe runs on.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import google.adk

ADK_ROOT = Path(google.adk.__file__).resolve().parent
_RE_FUNCS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer"}
_RE_FUNCS |= {"split"}
_SAFE_RECEIVERS = {"self", "cls"}
DOCUMENTED_HOOKS = frozenset({"_run_async_impl", "_run_live_impl"})
"""Underscore names ADK documents as public: a custom agent implements these
(https://google.github.io/adk-docs/agents/custom-agents)."""
_MIN_FRAGMENT = 12
"""Characters of literal text a pattern must share with ADK to count as ADK's words."""
_WINDOW_WORDS = 4


@dataclass(frozen=True)
class Reach:
    """One place a module reaches past ADK's public API."""

    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


@functools.cache
def adk_private_names() -> frozenset[str]:
    """Every single-underscore name ADK defines: functions, methods, attributes."""
    names: set[str] = set()
    for path in ADK_ROOT.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        names.update(re.findall(r"\bdef (_[A-Za-z]\w*)", text))
        names.update(re.findall(r"\bself\.(_[A-Za-z]\w*)\s*(?::[^=\n]*)?=(?!=)", text))
        names.update(re.findall(r"^\s+(_[A-Za-z]\w*)\s*:", text, re.M))
    return frozenset(names - DOCUMENTED_HOOKS)


@functools.cache
def adk_words() -> str:
    """ADK's own words, whitespace collapsed, one text a line: every string in an
    error it raises, and every string of its flows (the instructions and relayed
    context it writes into a model's request)."""
    texts: list[str] = []
    flows = ADK_ROOT / "flows"
    for path in ADK_ROOT.rglob("*.py"):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        roots: list[ast.AST] = [tree] if flows in path.parents else []
        roots += [node for node in ast.walk(tree) if isinstance(node, ast.Raise)]
        for root in roots:
            texts.extend(_literals(root))
    return "\n".join(texts)


def _literals(root: ast.AST) -> Iterator[str]:
    for node in ast.walk(root):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield " ".join(node.value.split())


def _literal_fragments(pattern: str, *, regex: bool) -> list[str]:
    """The runs of literal text in ``pattern`` (a regex or plain text)."""
    if not regex:
        return [" ".join(pattern.split())]
    text = re.sub(r"\\[AZbBdDsSwWnrtfv0-9]", "\0", pattern)  # classes, anchors, controls
    text = re.sub(r"\[(?:\\.|[^\]\\])*\]", "\0", text)  # character sets
    text = re.sub(r"\(\?[:=!<P]?[<>=!]?(?:\w+>)?", "\0", text)  # group openings
    text = re.sub(r"\{\d*,?\d*\}", "\0", text)  # counted repeats
    text = re.sub(r"(?<!\\)[()|*+?.^$]", "\0", text)
    text = re.sub(r"\\(.)", r"\1", text)
    return [" ".join(part.split()) for part in text.split("\0") if part.strip()]


def adk_words_in(pattern: str, *, regex: bool) -> str | None:
    """The part of ``pattern`` that is ADK's own text, if any."""
    corpus = adk_words()
    for fragment in _literal_fragments(pattern, regex=regex):
        if len(fragment) >= _MIN_FRAGMENT and fragment in corpus:
            return fragment
        words = fragment.split(" ")
        for start in range(len(words) - _WINDOW_WORDS + 1):
            window = " ".join(words[start : start + _WINDOW_WORDS])
            if len(window) >= 16 and window in corpus:
                return window
    return None


def _string_constants(module: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` (and tuples of texts), by name."""
    found: dict[str, str] = {}
    for node in module.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                for target in targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = node.value.value
    return found


def _texts(node: ast.AST, constants: dict[str, str]) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Name) and node.id in constants:
        yield constants[node.id]
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for item in node.elts:
            yield from _texts(item, constants)


def _is_re_call(node: ast.Call) -> bool:
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr in _RE_FUNCS
        and isinstance(func.value, ast.Name)
        and func.value.id == "re"
    )


_PRIVATE_DEFS = (
    re.compile(r"\bdef (_[A-Za-z]\w*)"),
    re.compile(r"\bself\.(_[A-Za-z]\w*)\s*(?::[^=\n]*)?=(?!=)"),
    re.compile(r"^\s+(_[A-Za-z]\w*)\s*:", re.M),
)


@functools.cache
def _private_of(cls: type) -> frozenset[str]:
    """The single-underscore names the ADK classes in ``cls``'s MRO define."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("google.adk"):
            continue
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        for pattern in _PRIVATE_DEFS:
            names.update(pattern.findall(source))
    return frozenset(names - DOCUMENTED_HOOKS)


def _imports(module: ast.Module, package: str) -> dict[str, tuple[str, str]]:
    """Every name ``module`` imports with ``from x import y`` (lazy ones too)."""
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{source}" if source else base
            for alias in node.names:
                found[alias.asname or alias.name] = (source, alias.name)
    return found


def _adk_privates_by_class(module: ast.Module, package: str) -> dict[str, frozenset[str]]:
    """For each class in ``module`` built on an ADK class, the private names its ADK
    bases define. A base that cannot be resolved (a parameter) counts as any ADK class."""
    imports = _imports(module, package)
    classes = {n.name: n for n in ast.walk(module) if isinstance(n, ast.ClassDef)}
    result: dict[str, frozenset[str]] = {}

    def privates(node: ast.ClassDef, seen: frozenset[str]) -> frozenset[str] | None:
        names: set[str] = set()
        adk = False
        for base in node.bases:
            if not isinstance(base, ast.Name):
                continue
            if base.id in classes and base.id not in seen:
                inner = privates(classes[base.id], seen | {base.id})
                if inner is not None:
                    adk, names = True, names | inner
            elif base.id in imports:
                source, attr = imports[base.id]
                try:
                    obj = getattr(importlib.import_module(source), attr)
                except (ImportError, AttributeError):
                    continue
                if isinstance(obj, type) and any(
                    k.__module__.startswith("google.adk") for k in obj.__mro__
                ):
                    adk, names = True, names | _private_of(obj)
            elif base.id not in classes and base.id not in {"object", "Protocol"}:
                adk, names = True, names | adk_private_names()  # unresolvable
        return frozenset(names) if adk else None

    for name, node in classes.items():
        if (found := privates(node, frozenset({name}))) is not None:
            result[name] = found
    return result


def scan(path: Path, shown: str, package: str) -> list[Reach]:
    """Every reach past ADK's public API in the module at ``path`` (of ``package``)."""
    module = ast.parse(path.read_text(encoding="utf-8"))
    private = adk_private_names()
    constants = _string_constants(module)
    by_class = _adk_privates_by_class(module, package)
    found: list[Reach] = []

    def add(node: ast.AST, what: str) -> None:
        found.append(Reach(shown, getattr(node, "lineno", 0), what))

    # The private names of the ADK bases of the class each node sits in, if any.
    enclosing: dict[int, frozenset[str]] = {}
    for node in ast.walk(module):  # outer classes first: an inner class wins
        if isinstance(node, ast.ClassDef) and node.name in by_class:
            names = by_class[node.name]
            for inner in ast.walk(node):
                enclosing[id(inner)] = names
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name in names:
                    add(item, f"overrides ADK's private {item.name}()")

    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("google.adk"):
            assert node.module is not None
            if any(part.startswith("_") for part in node.module.split(".")):
                add(node, f"imports ADK's private module {node.module}")
            for alias in node.names:
                if alias.name.startswith("_"):
                    add(node, f"imports ADK's private {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("google.adk") and "._" in alias.name:
                    add(node, f"imports ADK's private module {alias.name}")
        elif isinstance(node, ast.Attribute):
            if node.attr == "__class__" and isinstance(node.ctx, ast.Store):
                add(node, "assigns __class__")
            elif node.attr.startswith("_") and not node.attr.startswith("__"):
                receiver = node.value
                own = (isinstance(receiver, ast.Name) and receiver.id in _SAFE_RECEIVERS) or (
                    isinstance(receiver, ast.Call)
                    and isinstance(receiver.func, ast.Name)
                    and receiver.func.id == "super"
                )
                names = enclosing.get(id(node), frozenset()) if own else private
                if node.attr in names:
                    add(node, f"uses ADK's private .{node.attr}")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in {"getattr", "setattr", "hasattr"}:
                name = node.args[1] if len(node.args) > 1 else None
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    if name.value == "__class__" and func.id == "setattr":
                        add(node, "assigns __class__")
                    elif name.value in private:
                        add(node, f"uses ADK's private {name.value!r} by name")
            if _is_re_call(node) and node.args:
                for text in _texts(node.args[0], constants):
                    if (words := adk_words_in(text, regex=True)) is not None:
                        add(node, f"matches ADK's words with a regex: {words!r}")
            if isinstance(func, ast.Attribute) and func.attr in {"startswith", "endswith"}:
                for arg in node.args:
                    for text in _texts(arg, constants):
                        if (words := adk_words_in(text, regex=False)) is not None:
                            add(node, f"tests text for ADK's words: {words!r}")
        elif isinstance(node, ast.Compare) and any(
            isinstance(op, ast.In | ast.NotIn) for op in node.ops
        ):
            for text in _texts(node.left, constants):
                if (words := adk_words_in(text, regex=False)) is not None:
                    add(node, f"tests text for ADK's words: {words!r}")
    return found


def scan_package(root: Path, package: str, skip: frozenset[str]) -> list[Reach]:
    """:func:`scan` over every module under ``root`` (the package ``package``),
    except the files named in ``skip`` (relative to ``root``)."""
    found: list[Reach] = []
    for path in sorted(root.rglob("*.py")):
        shown = path.relative_to(root).as_posix()
        if shown in skip:
            continue
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        else:
            parts.pop()  # a module's package
        found.extend(scan(path, shown, ".".join(parts)))
    return found
