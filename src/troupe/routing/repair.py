"""Resolve a misspelled or invented agent name to a real one, when that is unambiguous.

Models that are told about "web browsing" still sometimes call
``transfer_to_agent("browser_agent")``. Most such names carry enough signal to
find the intended agent: a case or separator variant (``Operator``,
``memory-manager``), a tool prefix or capability word (``browser``, ``exec``,
``crypto``, ``filesystem_agent``), or the other built-in topology's name for
the same role (``executor`` on the default topology). The words come from the
topology: each :class:`~troupe.AgentSpec` lists the ``synonyms`` it answers to.
Anything else, or anything that could mean two agents, is left unresolved.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..topology import BUILTIN_TOPOLOGIES, Topology

_SUFFIXES = ("_agent", "agent", "_specialist", "_expert", "_bot", "_tool", "_tools")


def normalize(name: str) -> str:
    """Lower case, separators folded to '_', e.g. 'Memory-Manager' -> 'memory_manager'."""
    return re.sub(r"[\s\-.]+", "_", name.strip().lower()).strip("_")


def _strip_suffix(name: str) -> str:
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)].rstrip("_")
    return name


class AgentNameResolver:
    """Maps names a model might invent to the agents that exist in one tree."""

    def __init__(
        self,
        valid_names: Iterable[str],
        *,
        prefixes: Mapping[str, Iterable[str]] | None = None,
        aliases: Mapping[str, str] | None = None,
        synonyms: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        self.valid = list(valid_names)
        self._by_norm = {normalize(n): n for n in self.valid}
        self._by_norm.update(
            {normalize(k): v for k, v in (aliases or {}).items() if v in self.valid}
        )
        self._prefix_owner: dict[str, set[str]] = {}
        for agent, owned in (prefixes or {}).items():
            for prefix in owned:
                self._prefix_owner.setdefault(prefix, set()).add(agent)
        self._word_owner: dict[str, set[str]] = {}
        for agent, words in (synonyms or {}).items():
            if agent in self.valid:
                for word in words:
                    self._word_owner.setdefault(normalize(word), set()).add(agent)

    @classmethod
    def for_topology(cls, topology: Topology, valid_names: Iterable[str]) -> AgentNameResolver:
        """A resolver for the agents of ``topology`` that are in the tree."""
        valid = list(valid_names)
        owned = {spec.name: spec.prefixes for spec in topology.agents if spec.name in valid}
        words = {spec.name: spec.synonyms for spec in topology.agents}
        aliases = dict(topology.aliases)
        for topo in BUILTIN_TOPOLOGIES.values():
            aliases.update(topo.aliases)
        return cls(valid, prefixes=owned, aliases=aliases, synonyms=words)

    def resolve(self, name: str) -> str | None:
        """The one agent ``name`` must mean, or None when unknown or ambiguous."""
        if name in self.valid:
            return name
        if not isinstance(name, str) or not name.strip():
            return None
        norm = normalize(name)
        for candidate in (norm, _strip_suffix(norm), norm.replace("_", "")):
            if candidate in self._by_norm:
                return self._by_norm[candidate]
            if found := self._by_role(candidate):
                return found
        return self._by_capability(_strip_suffix(norm))

    def _by_role(self, candidate: str) -> str | None:
        owners = self._word_owner.get(candidate, set())
        return next(iter(owners)) if len(owners) == 1 else None

    def _by_capability(self, stem: str) -> str | None:
        owners: set[str] = set()
        words = [stem, *stem.split("_")] if stem else []
        for word in words:
            if word in self._word_owner:
                owners |= self._word_owner[word]
                continue
            # A bare prefix stem such as "fs" or "browser".
            prefix = next((p for p in self._prefix_owner if p.rstrip("_") == word), None)
            if prefix is not None:
                owners |= self._prefix_owner.get(prefix, set())
        return owners.pop() if len(owners) == 1 else None
