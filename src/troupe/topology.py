"""Agent topologies as data: which specialists exist and what they own.

A topology is an ordered list of :class:`AgentSpec`. The tree builder iterates
it, so adding an agent is a data change. Two topologies ship built in:
``default`` (six specialists) and ``classic`` (the earlier four-agent design).
Users can load their own from YAML with :func:`load_topology`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from .errors import ConfigError
from .yaml_file import read_mapping

ORCHESTRATOR_NAME = "orchestrator"
"""Name of the root agent in multi-agent mode; no specialist may use it."""

SINGLE_AGENT_NAME = "assistant"
"""Name of the one agent in single-agent mode."""
PLANNER_NAME = "planner"
"""The name of troupe's planning agent (the default team's), and of any agent
that plans unless its ``plans`` says otherwise."""


@dataclass(frozen=True, kw_only=True)
class AgentSpec:
    """One specialist: its identity, the tools it owns and its routing entry."""

    name: str
    """Exact agent name; a Python identifier (ADK requires it)."""
    description: str
    """One sentence on the agent's role, shown in the routing table."""
    instruction: str = ""
    """Role guidance added to the agent's own instruction, including how it reports."""
    prefixes: tuple[str, ...] = ()
    """Tool-name prefixes this agent owns, e.g. ``("fs_", "exec")``."""
    keywords: tuple[str, ...] = ()
    """Words in a request that point to this agent, shown in the instructions."""
    match_phrases: tuple[str, ...] = ()
    """Fragments that point to this agent but read as nonsense to a model
    ("what did i", "note that i"): the router and the offline model match them
    as words (never for meaning); no instruction shows them."""
    examples: tuple[str, ...] = ()
    """Requests this agent serves, written as a user would write them. The
    router compares a request with them for meaning (they are closer to real
    requests than a role description is); no instruction shows them."""
    accepts: str = ""
    """What kind of task the agent takes."""
    returns: str = ""
    """What the agent gives back."""
    cannot_do: tuple[str, ...] = ()
    """Tasks the agent must refuse, pointing the orchestrator elsewhere."""
    always_include: bool = False
    """Create the agent even when it owns no tools (e.g. the planner)."""
    capabilities: Mapping[str, str] = field(default_factory=dict)
    """Prefix -> what the tools with that prefix do, in plain words (``weather_``:
    ``weather forecasts``). The orchestrator reads these phrases, never tool names."""
    synonyms: tuple[str, ...] = ()
    """Other names a model may use for this agent (``executor``, ``shell``, ``browser``);
    a transfer to one of them is repaired to this agent."""
    plans: bool | None = None
    """This agent carries out requests of several steps: it holds its teammates
    as tools and hands each step to the one whose work it is. None: an agent
    named ``planner`` plans, any other does not."""

    def __post_init__(self) -> None:
        # As in a topology file: with no prefixes, the capabilities' keys are the prefixes.
        if not self.prefixes and self.capabilities:
            object.__setattr__(self, "prefixes", tuple(self.capabilities))

    @property
    def is_planner(self) -> bool:
        """True when this agent plans (see :attr:`plans`)."""
        return self.name == PLANNER_NAME if self.plans is None else self.plans

    def capability(self, tool_name: str) -> str | None:
        """The phrase of the longest of this agent's prefixes ``tool_name`` starts with."""
        for prefix in sorted(self.capabilities, key=len, reverse=True):
            if tool_name.startswith(prefix):
                return self.capabilities[prefix]
        return None


@dataclass(frozen=True, kw_only=True)
class Topology:
    """An ordered set of specialists plus the order in which prefixes are matched."""

    name: str
    """The topology's name (``default``, ``classic`` or the user's)."""
    agents: tuple[AgentSpec, ...]
    """Specialists in the order they are added to the tree."""
    match_order: tuple[str, ...] = field(default=())
    """Agent names in the order their prefixes are tried; agents not listed come last,
    in ``agents`` order (empty means ``agents`` order)."""
    aliases: dict[str, str] = field(default_factory=dict)
    """Other spellings of agent names (``memory-manager``) mapped to the real name."""
    planner: bool = True
    """A team of two or more specialists none of which plans gets troupe's
    planner (the default team's), so that a request of several steps runs step
    by step (see :func:`with_planner`); False leaves the team as it is."""

    def planning_agent(self) -> AgentSpec | None:
        """The agent that plans, if any."""
        return next((a for a in self.agents if a.is_planner), None)

    def agent_names(self) -> list[str]:
        """Names of every specialist, in tree order."""
        return [a.name for a in self.agents]

    def spec(self, name: str) -> AgentSpec:
        """The spec named ``name``."""
        for agent in self.agents:
            if agent.name == name:
                return agent
        raise KeyError(name)

    def capabilities(self) -> dict[str, str]:
        """Every agent's prefix -> capability phrase, in tree order."""
        return {p: phrase for spec in self.agents for p, phrase in spec.capabilities.items()}

    def matching_order(self) -> list[AgentSpec]:
        """Specs in the order their prefixes are tried during partitioning."""
        if not self.match_order:
            return list(self.agents)
        # Agents left out of match_order are tried last, in tree order, so
        # that a partial match_order never silently strips an agent's tools.
        listed = [self.spec(n) for n in dict.fromkeys(self.match_order)]
        rest = [a for a in self.agents if a.name not in self.match_order]
        return listed + rest


class _AgentSpecFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Exact agent name, a Python identifier.")
    description: str = Field(default="", description="The agent's role.")
    instruction: str = ""
    prefixes: list[str] = Field(
        default_factory=list, description="Tool-name prefixes; default: capabilities' keys."
    )
    capabilities: dict[str, str] = Field(
        default_factory=dict, description="Prefix -> capability phrase, e.g. weather_: forecasts."
    )
    synonyms: list[str] = Field(
        default_factory=list, description="Other names a model may use for this agent."
    )
    keywords: list[str] = Field(default_factory=list)
    match_phrases: list[str] = Field(
        default_factory=list,
        description="Request fragments matched by the router but never shown to a model.",
    )
    examples: list[str] = Field(
        default_factory=list,
        description="Requests this agent serves; the router compares requests with them.",
    )
    accepts: str = ""
    returns: str = ""
    cannot_do: list[str] = Field(default_factory=list)
    always_include: bool = False
    plans: bool | None = Field(
        default=None,
        description="The agent carries out requests of several steps (default: named planner).",
    )


class _TopologyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    agents: list[_AgentSpecFile] = Field(default_factory=list)
    match_order: list[str] = Field(default_factory=list)
    aliases: dict[str, str] = Field(default_factory=dict)
    planner: bool = Field(
        default=True,
        description="Add troupe's planner to a team of specialists none of which plans.",
    )


def _field_path(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _describe_error(err: ErrorDetails) -> str:
    where = _field_path(err["loc"])
    if err["type"] == "extra_forbidden":
        # loc is ("agents", i, field) inside an agent, (field,) at the top.
        model = _AgentSpecFile if len(err["loc"]) > 1 else _TopologyFile
        return f"field {where!r} is unknown; use one of {', '.join(model.model_fields)}"
    return f"field {where!r}: {err['msg']}"


def load_topology(path: str | Path) -> Topology:
    """Load a topology from a YAML file with the same fields as :class:`AgentSpec`.

    Raises:
        ConfigError: naming the file and the field when the file is invalid.
    """
    file = Path(path)
    raw = read_mapping(file, "topology file", "a mapping with an 'agents' list")
    try:
        parsed = _TopologyFile.model_validate(raw)
    except ValidationError as exc:
        details = "; ".join(_describe_error(err) for err in exc.errors())
        raise ConfigError(f"Topology file {str(file)!r} is invalid: {details}.") from None
    topology = Topology(
        name=parsed.name or file.stem,
        agents=tuple(
            AgentSpec(
                name=a.name,
                description=a.description,
                instruction=a.instruction,
                prefixes=tuple(a.prefixes or a.capabilities),
                capabilities=dict(a.capabilities),
                synonyms=tuple(a.synonyms),
                keywords=tuple(a.keywords),
                match_phrases=tuple(a.match_phrases),
                examples=tuple(a.examples),
                accepts=a.accepts,
                returns=a.returns,
                cannot_do=tuple(a.cannot_do),
                always_include=a.always_include,
                plans=a.plans,
            )
            for a in parsed.agents
        ),
        match_order=tuple(parsed.match_order),
        aliases=dict(parsed.aliases),
        planner=parsed.planner,
    )
    validate_topology(topology, source=f"Topology file {str(file)!r}")
    return topology


def validate_topology(topology: Topology, *, source: str | None = None) -> None:
    """Check names and match order; raise ConfigError saying where and what."""
    where = source or f"Topology {topology.name!r}"
    if not topology.agents:
        raise ConfigError(f"{where} is invalid: field 'agents' lists no agents; add at least one.")
    seen: set[str] = set()
    for index, agent in enumerate(topology.agents):
        field_name = f"agents[{index}].name"
        if not agent.name.strip():
            raise ConfigError(
                f"{where} is invalid: field {field_name!r} is empty; give the agent a name."
            )
        if not agent.name.isidentifier():
            raise ConfigError(
                f"{where} is invalid: field {field_name!r} is {agent.name!r}, which is not "
                "a Python identifier (ADK requires one); use letters, digits and underscores."
            )
        if agent.name == ORCHESTRATOR_NAME:
            raise ConfigError(
                f"{where} is invalid: field {field_name!r} is {agent.name!r}, the "
                "orchestrator's own name; choose another name."
            )
        if agent.name in seen:
            raise ConfigError(
                f"{where} is invalid: field {field_name!r} repeats the agent name "
                f"{agent.name!r}; every agent needs a unique name."
            )
        seen.add(agent.name)
        for prefix in agent.capabilities:
            if prefix not in agent.prefixes:
                raise ConfigError(
                    f"{where} is invalid: field 'agents[{index}].capabilities' describes "
                    f"{prefix!r}, which is not one of the agent's prefixes "
                    f"({', '.join(agent.prefixes) or 'none'}); add it to 'prefixes' or "
                    "leave 'prefixes' out to use the capabilities' keys."
                )
    for index, name in enumerate(topology.match_order):
        if name not in seen:
            raise ConfigError(
                f"{where} is invalid: field 'match_order[{index}]' names {name!r}, which "
                f"is not an agent; use one of {', '.join(sorted(seen))}."
            )
    for alias, name in topology.aliases.items():
        if name not in seen:
            raise ConfigError(
                f"{where} is invalid: field 'aliases.{alias}' names {name!r}, which is not "
                f"an agent; use one of {', '.join(sorted(seen))}."
            )


def resolve_topology(topology: str | Path | Topology | None) -> Topology:
    """A built-in name, a YAML path or a Topology object, as a Topology."""
    if topology is None:
        return DEFAULT_TOPOLOGY
    if isinstance(topology, Topology):
        validate_topology(topology)
        return topology
    key = str(topology)
    if key in BUILTIN_TOPOLOGIES:
        return BUILTIN_TOPOLOGIES[key]
    if key.endswith((".yaml", ".yml")) or Path(key).is_file():
        return load_topology(key)
    raise ConfigError(
        f"Unknown topology {key!r}: use one of {', '.join(BUILTIN_TOPOLOGIES)} or the "
        "path of a YAML topology file."
    )


def _builtin(name: str) -> Topology:
    # The built-in topologies are data files shipped in the package, read with
    # the same loader (and the same checks) as a user's own.
    with resources.as_file(resources.files("troupe") / "topologies" / f"{name}.yaml") as path:
        return load_topology(path)


DEFAULT_TOPOLOGY = _builtin("default")
"""operator, navigator, vault, librarian, planner, chronicler (topologies/default.yaml)."""

CLASSIC_TOPOLOGY = _builtin("classic")
"""executor, researcher, planner, memory_manager (topologies/classic.yaml); the spec's
memory-manager, which ADK would refuse as a name, is an alias."""

BUILTIN_TOPOLOGIES: dict[str, Topology] = {
    DEFAULT_TOPOLOGY.name: DEFAULT_TOPOLOGY,
    CLASSIC_TOPOLOGY.name: CLASSIC_TOPOLOGY,
}
