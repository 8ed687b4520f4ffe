"""Agent topologies as data: which specialists exist and what they own.

A topology is an ordered list of :class:`AgentSpec`. The tree builder iterates
it, so adding an agent is a data change. Two topologies ship built in:
``default`` (six specialists) and ``classic`` (the earlier four-agent design).
Users can load their own from YAML with :func:`load_topology`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from .errors import ConfigError

ORCHESTRATOR_NAME = "orchestrator"
"""Name of the root agent in multi-agent mode; no specialist may use it."""


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
    """Words in a request that point to this agent."""
    accepts: str = ""
    """What kind of task the agent takes."""
    returns: str = ""
    """What the agent gives back."""
    cannot_do: tuple[str, ...] = ()
    """Tasks the agent must refuse, pointing the orchestrator elsewhere."""
    always_include: bool = False
    """Create the agent even when it owns no tools (e.g. the planner)."""


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

    def agent_names(self) -> list[str]:
        """Names of every specialist, in tree order."""
        return [a.name for a in self.agents]

    def spec(self, name: str) -> AgentSpec:
        """The spec named ``name``."""
        for agent in self.agents:
            if agent.name == name:
                return agent
        raise KeyError(name)

    def matching_order(self) -> list[AgentSpec]:
        """Specs in the order their prefixes are tried during partitioning."""
        if not self.match_order:
            return list(self.agents)
        # Agents left out of match_order are tried last, in tree order, so
        # that a partial match_order never silently strips an agent's tools.
        listed = [self.spec(n) for n in dict.fromkeys(self.match_order)]
        rest = [a for a in self.agents if a.name not in self.match_order]
        return listed + rest


DEFAULT_TOPOLOGY = Topology(
    name="default",
    agents=(
        AgentSpec(
            name="operator",
            description="Acts on the local machine: runs shell commands, reads, "
            "writes and lists files, and runs saved skills.",
            instruction="Carry out the action, then report the results clearly: the "
            "command's output or the file's contents, and whether it succeeded.",
            prefixes=("exec", "fs_", "skill_"),
            keywords=(
                "run",
                "execute",
                "command",
                "shell",
                "terminal",
                "file",
                "files",
                "folder",
                "directory",
                "read",
                "write",
                "edit",
                "save to",
                "create a file",
                "script",
                "uname",
                "ls",
                "cat",
                "skill",
            ),
            accepts="A concrete action on this machine: a command to run, a path to "
            "read, list or write, or a saved skill to run.",
            returns="The command output or file contents, with the exit status or what changed.",
            cannot_do=(
                "open or read web pages",
                "encrypt, sign or keep secrets",
                "search or store long-term knowledge",
                "remember things about the user",
            ),
        ),
        AgentSpec(
            name="navigator",
            description="Works with the web: opens pages, reads their text and "
            "links, clicks, fills in forms and takes screenshots.",
            instruction="Visit the page, then summarize findings clearly: what the "
            "page says and the links or values the user asked for.",
            prefixes=("browser_",),
            keywords=(
                "website",
                "web page",
                "webpage",
                "url",
                "http",
                "https",
                "link",
                "navigate",
                "browse",
                "click",
                "screenshot",
                "form",
                "page",
                "online",
                "site",
            ),
            accepts="A URL or a description of a page to visit and what to do there.",
            returns="The page's readable text, links, or the result of the action.",
            cannot_do=(
                "run shell commands or touch local files",
                "keep secrets or encrypt data",
            ),
        ),
        AgentSpec(
            name="vault",
            description="Guards sensitive operations: hashing, encryption, "
            "signatures, stored secrets and payments.",
            instruction="Perform the operation and report the results clearly, never "
            "revealing a secret's value: refer to secrets by name only.",
            prefixes=("crypto_", "secrets_", "payment_"),
            keywords=(
                "encrypt",
                "decrypt",
                "hash",
                "sha256",
                "checksum",
                "sign",
                "signature",
                "verify",
                "secret",
                "secrets",
                "password",
                "api key",
                "token",
                "credential",
                "payment",
                "pay",
                "usdc",
                "wallet",
            ),
            accepts="Data to hash, encrypt, decrypt, sign or verify; a secret to "
            "store, list, use or delete; a payment to make.",
            returns="The digest, ciphertext, signature, verification result or "
            "confirmation, never a secret's plaintext.",
            cannot_do=(
                "browse the web",
                "run arbitrary shell commands",
                "search the knowledge base",
            ),
        ),
        AgentSpec(
            name="librarian",
            description="Keeps the team's knowledge: searches it, stores new "
            "knowledge and learnings, walks the knowledge graph and manages "
            "reusable skills.",
            instruction="Look the information up or store it, then summarize "
            "findings clearly, citing where each piece came from.",
            prefixes=(
                "search_",
                "rag_",
                "graph_",
                "save_knowledge",
                "save_learning",
                "create_skill",
                "list_skills",
            ),
            keywords=(
                "list skills",
                "my skills",
                "save knowledge",
                "knowledge",
                "search",
                "look up",
                "lookup",
                "find information",
                "document",
                "documents",
                "fact",
                "facts",
                "graph",
                "learned",
                "learning",
                "skills",
                "create a skill",
                "reference",
                "wiki",
            ),
            accepts="A question to look up in stored knowledge, or knowledge, a "
            "learning, a fact or a skill to store.",
            returns="The matching knowledge with its sources and scores, or "
            "confirmation of what was stored.",
            cannot_do=(
                "run commands or edit files",
                "remember personal details of this conversation",
                "open live web pages",
            ),
        ),
        AgentSpec(
            name="planner",
            description="Breaks a large or multi-step goal into ordered steps, each "
            "assigned to the right team member. Uses no tools.",
            instruction="Think the goal through and present the plan for review: "
            "numbered steps, each naming the team member that should do it.",
            keywords=(
                "plan",
                "steps",
                "step by step",
                "break down",
                "roadmap",
                "strategy",
                "organize",
                "schedule",
                "how should i",
                "approach",
            ),
            accepts="A goal that needs several steps or several team members.",
            returns="A numbered plan, each step naming the team member to carry it out.",
            cannot_do=("carry out any step itself",),
            always_include=True,
        ),
        AgentSpec(
            name="chronicler",
            description="Keeps memory of the user and the conversation: stores and "
            "recalls memories, records observations and reflects on them.",
            instruction="Store or recall the memory, then report what was stored or "
            "retrieved, with when it was recorded.",
            prefixes=("memory_", "observe_", "reflect_"),
            keywords=(
                "remember",
                "recall",
                "memory",
                "memories",
                "forget",
                "earlier",
                "last time",
                "history",
                "observe",
                "observation",
                "reflect",
                "what did i",
                "my preference",
                "note that i",
            ),
            accepts="Something to remember about the user or the conversation, or "
            "a question about what happened before.",
            returns="What was stored, or the recalled memories with their times.",
            cannot_do=(
                "search general knowledge",
                "run commands or browse the web",
            ),
        ),
    ),
    match_order=("librarian", "chronicler", "navigator", "vault", "operator"),
)
"""operator, navigator, vault, librarian, planner, chronicler."""


CLASSIC_TOPOLOGY = Topology(
    name="classic",
    agents=(
        AgentSpec(
            name="executor",
            description="Carries out actions: runs commands, works with files, "
            "browses the web, handles cryptography, secrets and payments.",
            instruction="Carry out the action, then provide results clearly: what "
            "was done and what came back.",
            prefixes=("exec", "fs_", "skill_", "browser_", "crypto_", "secrets_", "payment_"),
            keywords=(
                "run",
                "execute",
                "command",
                "shell",
                "file",
                "files",
                "list",
                "read",
                "write",
                "website",
                "url",
                "http",
                "browse",
                "encrypt",
                "hash",
                "sign",
                "secret",
                "payment",
                "pay",
            ),
            accepts="Any concrete action that needs a tool.",
            returns="The action's output and whether it succeeded.",
            cannot_do=("search stored knowledge", "remember things about the user"),
        ),
        AgentSpec(
            name="researcher",
            description="Looks information up: searches stored knowledge and the "
            "knowledge graph, and stores what was learned.",
            instruction="Research the question, then summarize findings clearly, "
            "with their sources.",
            prefixes=(
                "search_",
                "rag_",
                "graph_",
                "save_knowledge",
                "save_learning",
                "create_skill",
                "list_skills",
            ),
            keywords=(
                "search",
                "look up",
                "find information",
                "knowledge",
                "research",
                "facts",
                "document",
                "learned",
            ),
            accepts="A question to research or knowledge to store.",
            returns="A summary of the findings with sources.",
            cannot_do=("run commands", "remember personal details"),
        ),
        AgentSpec(
            name="planner",
            description="Plans multi-step work. Uses no tools.",
            instruction="Think the goal through and present the plan for review: "
            "numbered steps, each naming the team member that should do it.",
            keywords=("plan", "steps", "break down", "roadmap", "strategy"),
            accepts="A goal that needs several steps.",
            returns="A numbered plan for review.",
            cannot_do=("carry out any step itself",),
            always_include=True,
        ),
        AgentSpec(
            name="memory_manager",
            description="Handles memory operations: stores, recalls and reflects "
            "on memories of the user and the conversation.",
            instruction="Carry out the memory operation, then report what was stored or retrieved.",
            prefixes=("memory_", "observe_", "reflect_"),
            keywords=(
                "remember",
                "recall",
                "memory",
                "forget",
                "earlier",
                "history",
                "reflect",
                "observe",
            ),
            accepts="Something to remember, or a question about the past.",
            returns="What was stored or retrieved.",
            cannot_do=("run commands", "search general knowledge"),
        ),
    ),
    match_order=("researcher", "memory_manager", "executor"),
    aliases={"memory-manager": "memory_manager", "memorymanager": "memory_manager"},
)
"""executor, researcher, planner, memory_manager (spelled memory-manager in the spec)."""


BUILTIN_TOPOLOGIES: dict[str, Topology] = {
    DEFAULT_TOPOLOGY.name: DEFAULT_TOPOLOGY,
    CLASSIC_TOPOLOGY.name: CLASSIC_TOPOLOGY,
}


class _AgentSpecFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Exact agent name, a Python identifier.")
    description: str = Field(default="", description="The agent's role.")
    instruction: str = ""
    prefixes: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    accepts: str = ""
    returns: str = ""
    cannot_do: list[str] = Field(default_factory=list)
    always_include: bool = False


class _TopologyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    agents: list[_AgentSpecFile] = Field(default_factory=list)
    match_order: list[str] = Field(default_factory=list)


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
    try:
        raw = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot read topology file {str(file)!r}: {exc.strerror}.") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"Topology file {str(file)!r} is not valid YAML: {exc}.") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"Topology file {str(file)!r} must be a mapping with an 'agents' list.")
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
                prefixes=tuple(a.prefixes),
                keywords=tuple(a.keywords),
                accepts=a.accepts,
                returns=a.returns,
                cannot_do=tuple(a.cannot_do),
                always_include=a.always_include,
            )
            for a in parsed.agents
        ),
        match_order=tuple(parsed.match_order),
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
    for index, name in enumerate(topology.match_order):
        if name not in seen:
            raise ConfigError(
                f"{where} is invalid: field 'match_order[{index}]' names {name!r}, which "
                f"is not an agent; use one of {', '.join(sorted(seen))}."
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
