"""The fast-path router: which agent a request is for, before any model is asked.

Every agent is described by an :class:`AgentProfile` taken from the tree
itself (its description and capabilities, keywords, and the descriptions and
parameters of the tools it owns, MCP tools included), so a custom topology
needs no training. Three signals score each agent for a request:

* **semantic**: cosine similarity between the request and the agent's
  phrases under a multilingual sentence encoder (see :mod:`.encoder`);
* **lexical**: the agent's keywords found in the request, tolerating one typo
  in four letters (``lsit teh fiels`` still finds *list* and *files*);
* **structure**: a URL, a back-quoted command, a file path or a
  ``{{secret:NAME}}`` in the request, matched to the agents whose tools take
  that kind of value.

A request whose best agent is ahead by more than the threshold is routed
(``route``); a greeting or thanks is its own class (``greeting``, answered by
the orchestrator's model); anything else is left to the model (``defer``) with
the ranked candidates as a hint. A request made of clauses that belong to
different agents goes to the planning agent when the tree has one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property, lru_cache, partial
from importlib import resources
from typing import Any, Literal

import numpy as np
import yaml
from rapidfuzz.distance import DamerauLevenshtein

from ..prompts import router_hint
from .encoder import Encoder, blas_limited
from .phrase_cache import PhraseCache

DEFAULT_THRESHOLD = 0.75
"""Confidence (see :meth:`Router.confidence`) the best agent needs to be routed
without the model: chosen on the built-in routing set for at least 98%
precision (``troupe bench router`` prints the sweep and a held-out check; see
docs/routing.md)."""

SEMANTIC_WEIGHT = 1.0
LEXICAL_WEIGHT = 0.3
STRUCTURE_WEIGHT = 0.25
NEAREST_SHARE = 0.5
"""An agent's semantic score blends its single closest phrase (this share) with
the mean of its few closest phrases (the rest): one very close phrase counts,
but so does broad agreement."""
DIRECT_MARGIN = 0.1
"""A request closer to a general question than to every agent's closest phrase
by this much, with no URL, command, path or secret in it, is answered by the
orchestrator's model directly (``direct``)."""

REFUSED_MARGIN = 0.15
"""A request closer by this much to something an agent's author says it cannot
do (``cannot_do``) than to any agent's closest phrase is nobody's work, if no
other agent's phrases come near that refusal (:data:`ORPHAN_BELOW`)."""
NOBODY_SLACK = 0.05
"""A request far from every agent (:data:`NOBODY_NEAREST`) is nobody's only if
it comes within this of a refusal or a :data:`WORLD_ACTIONS` entry: one that
is nearer its best agent than that is a paraphrase of the agent's work, left
to the model with that agent as its guess."""
ORPHAN_BELOW = 0.5
"""A refusal this close to another agent's phrase names that agent's work
("browse the web" on the operator, which the navigator does), not a gap."""

DecisionKind = Literal["route", "greeting", "direct", "defer"]

EXAMPLES_FILE = "examples.yaml"
"""The router's examples, in ``troupe/routing/data``: each group with where it came from."""
WORDS_FILE = "words.yaml"
"""Word lists of the router's rules, in ``troupe/routing/data``: each with where it came from."""


@cache
def _data(file: str) -> dict[str, Any]:
    """One of the router's data files, read and parsed once."""
    text = (resources.files("troupe.routing") / "data" / file).read_text("utf-8")
    return dict(yaml.safe_load(text))


def _examples(group: str) -> tuple[str, ...]:
    return tuple(str(item) for item in _data(EXAMPLES_FILE)[group]["examples"])


def _word_list(group: str) -> frozenset[str]:
    return frozenset(str(word) for word in _data(WORDS_FILE)[group]["words"])


_WORD = re.compile(r"\w+", re.U)
WEB_DOMAINS: tuple[str, ...] = (
    *("com", "org", "net", "io", "dev", "gov", "edu", "info", "eu", "de", "fr", "uk", "nl"),
    *("es", "it", "ch", "at", "be", "se", "dk", "fi", "ie", "ca", "au", "nz", "jp", "br"),
)
"""The top-level domains a web address written without its scheme may end in
("tagesschau.de", "apod.nasa.gov"): public and common country domains, none of
which is a usual file extension ("notes.md", "setup.py", "model.pt" stay files).
The offline stand-in reads bare addresses by the same list."""
_URL = re.compile(
    r"\bhttps?://\S+|(?<![@\w.-])(?:[a-z0-9-]+\.)+(?:" + "|".join(WEB_DOMAINS) + r")\b"
    r"(?:/[\w./%?=&#-]*)?",
    re.I,
)
"""A web address; not the domain of an e-mail address ("ops@example.com")."""
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
"""An e-mail address: neither a web address nor a file's name."""
_BACKTICK = re.compile(r"`[^`]+`")
_COMMAND_LINE = re.compile(
    r"(?<![\w./-])(?:"
    + "|".join(sorted((re.escape(w) for w in _word_list("executables")), key=len, reverse=True))
    + r")(?:\s+(?:-{1,2}[A-Za-z][\w-]*|[\w.-]*[/.][\w./-]*\w|'[^']*'|\"[^\"]*\"))"
    r"(?:\s+(?:-{1,2}[A-Za-z][\w-]*|[\w.-]*[/.][\w./-]*\w|\d[\d.]*|'[^']*'|\"[^\"]*\"))*",
)
"""An unquoted command line: a program of ``executables`` (words.yaml) and its
arguments ("python3 tools/abv.py 1.056 1.012", "wc -l"), never "find the
files", "make sure" or "make 2 copies" (its first argument is a flag, a file
or a quoted value; numbers may follow)."""
_COMMAND = re.compile(f"{_BACKTICK.pattern}|{_COMMAND_LINE.pattern}")
_PATH = re.compile(
    r"(?<![\w/])(?:\.{0,2}/)?[\w-]+(?:/[\w.-]+)*\.[a-z][a-z0-9]{0,4}\b|\b[\w-]+/[\w./-]*"
)
"""A file's name with its extension, or a path with a slash; never a number
("reads 0.002 high", "OG 1.056"): an extension starts with a letter."""
_SECRET = re.compile(r"\{\{\s*secret:[^}]+\}\}")

STRUCTURES: dict[str, tuple[re.Pattern[str], tuple[str, ...]]] = {
    "url": (_URL, ("url", "link", "href", "website", "web")),
    "command": (_COMMAND, ("command", "cmd", "shell", "script")),
    "path": (_PATH, ("path", "file", "files", "filename", "folder", "directory")),
    "secret": (_SECRET, ("secret", "secrets")),
}
"""Kind of structure -> (how it looks in a request, words that mark an agent
whose tools take it: in a tool's parameter names, its name or the agent's keywords)."""

_SHAPE_DESCRIBED = re.compile(
    r"(?<![\w-])(?P<prefix>[A-Z]{1,5})-(?:[#X]{3,}|N{3,}|Y{4}-|\\d|\[0-9\]|(?=['\"`\s]|$))"
    r"|\b(?:e\.g\.|for example|such as)\s*:?\s*(?P<example>[A-Z]{1,5})-?\d{3,}\b"
    r"|\b(?:e\.g\.|for example|such as)\s*:?\s*(?P<short>[A-Z]{2,5})-\d{1,2}\b"
    r"|(?<![\w-])(?P<first>[A-Z]{2,5})-\d+\s*(?:\.\.|–|to)\s*(?P=first)-\d+\b"
    r"|\((?P<alone>[A-Z]{2,5})-\d{3,}(?:-\d+)*\)"
    r"|\b(?P<run>[A-Z]{1,5})\s*(?:\+|plus|and|followed by|then)\s*"
    r"(?:\d+|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+digits\b"
)
"""An identifier's shape as a tool's author describes it: "(MT-######)",
"'LF-' and five digits", "its WR- reference", a schema pattern "^SP-\\d{5}$",
a year-first pattern "LN-YYYY-NNN", an example value "e.g. PC-552810" or one
alone in brackets, "a job number (JOB-123456)", "(LN-2025-031)", or letters
the digits follow without a hyphen: "SH + 10 digits", "e.g. BX40217736". Its
letters are what tells one thing's number from another's (a ticket's from a
parcel's); see :func:`described_shapes` for how the two kinds are told apart."""

_SHAPED = re.compile(
    r"(?<![\w-])(?:(?P<prefix>[A-Za-z]{1,5})-\d{3,}|(?P<short>[A-Z]{2,5})-\d{1,2}"
    r"|(?P<joined>[A-Z]{1,5})\d{4,})\b"
)
"""An identifier in a request: letters, a hyphen, digits ("MT-204589"), or
capitals with at least four digits right after them ("BX40217736")."""


def described_shapes(text: str) -> set[str]:
    """The shapes of the identifiers ``text`` describes, as :func:`shapes_in`
    names them: the letters for a hyphenated one ("MT"), the letters and "#"
    for one whose digits follow at once ("SH#" of "SH + 10 digits"), so a
    product's "SH-1102" and a parcel's "SH5509123876" are not one shape."""
    found: set[str] = set()
    for match in _SHAPE_DESCRIBED.finditer(text):
        if match["run"]:
            found.add(match["run"] + "#")
        elif match["example"]:
            joined = not match.group(0).rstrip("0123456789").endswith("-")
            found.add(match["example"] + ("#" if joined else ""))
        else:
            found.add(match["prefix"] or match["alone"] or match["short"] or match["first"])
    return found


def _shape_weight(shape: str) -> float:
    """How telling an identifier of ``shape`` is: one letter ("R-304", "B-204")
    may be a room, a flat or a plane as well as the tool's thing, so it counts
    half of what two letters or more do."""
    return 0.5 if len(shape.rstrip("#")) == 1 else 1.0


def shapes_in(text: str) -> set[str]:
    """The shapes of the identifiers in a request (see :func:`described_shapes`)."""
    return {
        (m["prefix"] or m["short"]).upper() if m["prefix"] or m["short"] else m["joined"] + "#"
        for m in _SHAPED.finditer(text)
    }


GREETINGS: tuple[str, ...] = _examples("greetings")
"""Examples of the greeting class, in the languages the router is measured on."""

WORLD_ACTIONS: tuple[str, ...] = _examples("world_actions")
"""Work no software team does (pay a bill, text someone, print a page): with
the refusals of the team's agents, what a request far from every agent is
held against before it is called nobody's (see :data:`NOBODY_SLACK`)."""

OPEN_QUESTIONS: tuple[str, ...] = _examples("open_questions")
"""Examples of what the orchestrator answers itself: general knowledge and
opinions. A request closer to these than to its best agent is left to the model."""

_GREETING_WORDS = _word_list("greeting_words")
"""Words a greeting or thanks opens with (one of its first three words, a typo allowed)."""
_GREETING_MAX_WORDS = 9

_CONDITION = r"(?:if|wenn|falls|si|se)\b"
"""A sentence that opens with one of these after another sentence makes a step
of it ("Is it in stock? If it is, add one to my order.")."""
_ALSO = r"(?:also|außerdem|ausserdem|además|aussi|também|inoltre|ook)\b"
"""A sentence that opens with one of these after another adds a step ("Is
Riverside open on Saturday? Also apply for a van permit ...")."""
AND_THEN = r"(?:en|und)\s+(?=(?:[^\W\d_]+\s+)?(?:daarna|vervolgens|danach|dann)\b)"
"""The Dutch or German "and" before a step that orders itself after the one
before, its "then" after the verb ("Lees het log en leg daarna de fout vast",
"lies die Datei und speichere danach ...")."""
_CLAUSE_SPLIT = re.compile(
    rf"(?<=[?.!])\s+(?={_CONDITION}|{_ALSO})|\s*(?:;|,?\s+and\s+then\s+|,?\s+then\s+|,?\s+and\s+|,\s+"
    r"|,?\s+und\s+(?:dann\s+)?|,?\s+dann\s+|,?\s+y\s+(?:luego\s+)?|,?\s+luego\s+"
    r"|,?\s+et\s+(?:puis\s+)?|,?\s+puis\s+|,?\s+e\s+(?:depois\s+|poi\s+)?|,?\s+depois\s+"
    # Dutch "en" joins two steps only as AND_THEN does: alone, it is also the
    # French and Spanish "in".
    rf"|,?\s+{AND_THEN})\s*",
    re.I,
)
_SEQUENCE_WORDS = (
    r"\b(?:then|afterwards|after that|dann|danach|luego|después|puis|ensuite|depois"
    r"|daarna|vervolgens|poi|dopodiché)\b"
)
_SEQUENCE = re.compile(rf"{_SEQUENCE_WORDS}|[?.!]\s+{_CONDITION}", re.I)
"""Words that order one step after another: a request with them has steps."""
_PLAN_WORDS = ("plan", "steps", "step by step")
_JOINED = re.compile(
    r";|\b(?:and|also|und|y|et|e)\b|" + _SEQUENCE_WORDS,
    re.I,
)
"""Words that join one step to another, "after that" among them (a comma
alone joins details)."""

_MIN_CLAUSE_WORDS = 2
_OPENING_WORDS = _word_list("opening_words")
"""Words a request may open with before its verb ("please", "need a ...")."""
_EVERYDAY_VERBS = _word_list("everyday_verbs")
"""Verbs of every kind of work ("look", "check", "find"): no stranger's."""
_IDENTIFIED = re.compile(r"\b(?P<label>[^\W\d_]{3,})\s+(?P<id>[A-Za-z]{0,4}[-#]?\d[\w-]*)", re.U)
"""A word, then an identifier with digits: "card EL-251893", "order #48213"."""
SHARED_SHARE = 0.6
"""A word of the parameter names of this share of the team's workers (and at
least three) names something they all work on, not the work itself."""
_WORK_WORDS_LEFT = 2
BARE_PRONOUN = re.compile(
    r"^\s*\w+\s+(?:it|them|this|that)(?:\s+(?:out|up|back|through))?\s*$", re.I
)
"""A step that only does something to what came before ("read it", "cancel
it"): whose work it is depends on what "it" is, so only one of the team's
keywords as its verb says it belongs to someone else."""
_TOP_PHRASES = 3
"""An agent's semantic score looks at its three phrases closest to the request."""
_CLAUSE_LEAD = 0.05
_CLAUSE_MIN = 0.25
_CLAUSE_CLEAR_LEAD = 0.15
"""A clause counts towards a compound request when its own best agent leads by this much."""
SHARED_BY_ALL = 3
"""From this many working agents, a word every one of them is described by
counts for none of them (see :meth:`Router.distinctness`); with two, a word
both share still says the request is the team's."""
DISTINCT_NAME = 0.5
"""A keyword names an agent's work when at most two agents of the team are
described by its words ("refund" on a shop team; not "order", which every
agent that takes an order number is described by)."""
NAMED_SHARE = 2 / 3
"""The share of the threshold a route needs when the request names the best
agent's keyword and no other agent's (0.5 at the default threshold)."""
AGREE_SLACK = 0.03
"""How far the meaning of a request may lean to another agent when it names
the best agent's work in its author's words and no other agent's: on a typo
("any free storge units?") or another language the meaning is faint and
nearly tied, and the words decide. Measured on ten request sets: 21 right
routes added, 1 wrong (0.05 added 28 right and 3 wrong)."""
NOBODY_NEAREST = 0.25
"""Below this, with no keyword and no structure, the best agent is nobody's
guess: the request is left to the model with no agent named. An agent
described only by its role and tools has phrases further from any request
than one with example requests, whose bar is :data:`MIN_NEAREST`."""
MIN_NEAREST = 0.35
"""A route on meaning alone (no keyword, no structure) needs one of the agent's
phrases at least this close: leading a field of strangers is not enough."""
_COMMON_WORDS = _word_list("common_words")
"""Everyday words a request is full of: each is itself, never a typo of a keyword
("from" is not "form")."""
_TOOL_WORDS = _word_list("tool_words")
"""Words of tool names that say nothing of the work (``get``, ``list``, ``info``)."""
_NO_STRANGERS = _COMMON_WORDS | _TOOL_WORDS | _EVERYDAY_VERBS
"""Words a request may open with that are no stranger's verb: everyday words,
words of every tool ("show me ..."), verbs of all work ("look up ...")."""
TRANSLATED_KEYWORD = 0.8
"""A word of a request that is none of the team's words finds the keyword
closest to it in meaning; this close, it counts as that keyword, in any
language ("Flug", "vuelo" and "vol" are *flight*; "Bestellung" and "commande"
are *order*). Single words in other languages came out at 0.8 to 0.95 from
their English keyword under the encoder, and different words at 0.7 or less.
Only for agents without example requests: examples in other languages already
reach an agent by meaning, and on the default team (which has them) the routes
this added were right 3 times in 4 on its dev set, against 17 of the 18 it
added on the two benchmark teams' dev sets."""
_TRANSLATED_MIN_LETTERS = 4
ENOUGH_EXAMPLES = 8
"""Example requests an agent needs to be one "with examples" for the rules
that treat those apart (:data:`TRANSLATED_KEYWORD`, :data:`NOBODY_NEAREST`,
the verb nobody is described by): a set that covers its work in the
languages it is asked in. The default team's agents have 10 to 16. Three to
six, on four outside teams' held-out halves, made 8 to 13 wrong routes where
the rules of an agent known by its role made 3 to 5 (docs/routing.md)."""
_WORD_VECTORS_KEPT = 20_000
TERM_SHARE = 0.5
"""What a word of an agent's tool names or capabilities counts for in the
lexical signal, against one of its keywords."""


@dataclass(frozen=True)
class AgentProfile:
    """What the router knows about one agent."""

    name: str
    phrases: tuple[str, ...] = ()
    """Texts the semantic signal compares with: description, capabilities,
    what it accepts, tool descriptions."""
    keywords: tuple[str, ...] = ()
    """Words and short phrases the lexical signal looks for."""
    structures: frozenset[str] = frozenset()
    """Keys of :data:`STRUCTURES` this agent's tools take."""
    plans: bool = False
    """This agent breaks multi-step requests into steps (gets compound requests)."""
    fragments: tuple[str, ...] = ()
    """Request fragments the lexical signal looks for too, but the semantic one
    never compares with: alone they mean little ("i told you")."""
    terms: tuple[str, ...] = ()
    """Words that name its work in its tools' names and its capabilities
    (``track_parcel``: track, parcel): weaker evidence than a keyword."""
    vocabulary: frozenset[str] = frozenset()
    """The stems of every word it is described by (texts, keywords, tools and
    their parameters): how the router tells a word that singles it out from
    one the whole team shares (see :meth:`Router.distinctness`)."""
    inputs: frozenset[str] = frozenset()
    """The words of its tools' parameter names (``card_number``: card, number):
    the things its work takes."""
    has_examples: bool = False
    """Its author gave enough example requests (:data:`ENOUGH_EXAMPLES`): a
    request it serves comes closer to its phrases than to a role description
    alone (see :data:`NOBODY_NEAREST`)."""
    refusals: tuple[str, ...] = ()
    """What its author says it cannot do (``cannot_do``): where such a thing is
    no teammate's work either, a request for it is nobody's (see
    :data:`REFUSED_MARGIN`)."""
    reach: tuple[tuple[str, float], ...] = ()
    """For each structure it takes, the share of its tools that take it (a
    path: most of the file agent's tools, one of the browser's); empty when its
    tools are not known, and then every structure counts fully."""
    shapes: frozenset[str] = frozenset()
    """The letters of the identifiers its tools describe ("MT" of "MT-######"):
    a request with such an identifier names a thing its tools take, as a URL
    names the browser's (see :data:`_SHAPE_DESCRIBED`)."""
    parameters: frozenset[str] = frozenset()
    """The names of its tools' parameters."""
    shape_parameters: frozenset[tuple[str, str]] = frozenset()
    """(shape, parameter name) for each identifier parameter of a tool that
    describes that shape: a teammate whose tools have a parameter of the same
    name takes such identifiers too, though it does not say how they look."""

    @property
    def lexical_keywords(self) -> tuple[str, ...]:
        """Everything the lexical signal looks for."""
        return (*self.keywords, *self.fragments)

    @classmethod
    def build(
        cls,
        name: str,
        *,
        texts: Iterable[str] = (),
        keywords: Iterable[str] = (),
        tool_names: Iterable[str] = (),
        parameter_names: Iterable[str] = (),
        fragments: Iterable[str] = (),
        capabilities: Iterable[str] = (),
        plans: bool | None = None,
        examples: Iterable[str] = (),
        names: Iterable[str] = (),
        parameter_texts: Iterable[str] = (),
        refusals: Iterable[str] = (),
        tool_parameters: Iterable[Iterable[str]] = (),
        shape_parameters: Iterable[tuple[str, str]] = (),
    ) -> AgentProfile:
        """A profile from an agent's texts, keywords, capabilities and tools.

        Which structures it takes is read from the words of those same
        inputs, and the shapes of its identifiers from its texts and its
        tools' parameter descriptions and patterns (``parameter_texts``);
        whether it plans, from ``plans`` or else its keywords.
        """
        texts = tuple(texts)
        tool_names = tuple(tool_names)
        parameter_names = tuple(parameter_names)
        capabilities = tuple(c for c in capabilities if c and c.strip())
        # A tool's name read as words ("track parcel", "cancel order") is what
        # a request asks for, in fewer words than its description.
        named = tuple(" ".join(_tokens(n)) for n in tool_names if len(_tokens(n)) > 1)
        examples = tuple(e for e in examples if e and e.strip())
        phrases = tuple(
            dict.fromkeys(
                t.strip() for t in (*texts, *examples, *capabilities, *named) if t and t.strip()
            )
        )
        words = tuple(dict.fromkeys(k.strip().lower() for k in keywords if k and k.strip()))
        marks = {w for text in (*words, *tool_names, *parameter_names) for w in _tokens(text)}
        structures = frozenset(
            kind for kind, (_, markers) in STRUCTURES.items() if marks & set(markers)
        )
        if plans is None:
            plans = any(p in words for p in _PLAN_WORDS)
        bits = tuple(dict.fromkeys(f.strip().lower() for f in fragments if f and f.strip()))
        keyword_words = {t for k in (*words, *bits) for t in _tokens(k)}
        terms = tuple(
            dict.fromkeys(
                t
                for source in (*tool_names, *capabilities, *names)
                for t in _tokens(source)
                if _names_work(t) and t not in keyword_words
            )
        )
        described = (*phrases, *words, *bits, *tool_names, *parameter_names, *names)
        vocabulary = frozenset(_stem(t) for text in described for t in _tokens(text))
        inputs = frozenset(t for n in parameter_names for t in _tokens(n) if _names_work(t))
        shapes = frozenset(
            shape for text in (*texts, *parameter_texts) if text for shape in described_shapes(text)
        )
        per_tool = [
            {w for text in (tool, *params) for w in _tokens(text)}
            for tool, params in zip(tool_names, tuple(tool_parameters), strict=False)
        ]
        reach = tuple(
            (kind, sum(1 for m in per_tool if m & set(STRUCTURES[kind][1])) / len(per_tool))
            for kind in sorted(structures)
            if per_tool
        )
        return cls(
            name,
            phrases,
            words,
            structures,
            plans,
            bits,
            terms,
            vocabulary,
            inputs,
            len(examples) >= ENOUGH_EXAMPLES,
            tuple(dict.fromkeys(r.strip() for r in refusals if r and r.strip())),
            reach,
            shapes,
            frozenset(parameter_names),
            frozenset(shape_parameters),
        )


@dataclass(frozen=True)
class Candidate:
    """One agent's score for a request."""

    name: str
    score: float
    semantic: float = 0.0
    lexical: float = 0.0
    structure: float = 0.0
    nearest: float = 0.0
    """Similarity to the agent's single closest phrase."""
    keyword: bool = False
    """One of the agent's own keywords (or match phrases) is in the request."""
    named: bool = False
    """One of the agent's own keywords (or match phrases) that singles it out
    on the team is in the request: the request names its work in its author's
    words (see :data:`DISTINCT_NAME`)."""


@dataclass(frozen=True)
class RouteDecision:
    """What the router made of one request."""

    kind: DecisionKind
    """``route``: transfer to ``agent`` now; ``greeting`` and ``direct`` (a
    general question): the orchestrator's model answers it itself; ``defer``:
    the model decides, with ``candidates`` as a hint."""
    agent: str | None
    """The agent routed to, or the router's best guess when it defers."""
    confidence: float
    """How sure the router is of ``agent`` (see :meth:`Router.confidence`);
    for ``direct``, how much closer the request is to a general question."""
    candidates: tuple[Candidate, ...] = ()
    """Agents best first."""
    compound: bool = False
    """The request's clauses belong to different agents."""
    nobody: bool = False
    """No agent's words, structure or close meaning is in the request: it
    looks like work nobody on the team does (``agent`` is None)."""
    bar: float = 1.0
    """The share of the threshold this decision's confidence had to reach
    (:data:`NAMED_SHARE` when the request names the agent's work)."""
    steps: bool = False
    """The request orders steps ("..., then ...") that lean to different
    agents, but not clearly enough for the router to name each step's (a
    deferred decision only)."""

    def hint(self, limit: int = 3) -> str:
        """The candidates as a section of the orchestrator's instruction."""
        shown = [(c.name, c.score) for c in self.candidates[:limit]]
        direct = self.agent is None and not self.nobody
        return router_hint(
            shown, compound=self.compound, direct=direct, nobody=self.nobody, steps=self.steps
        )


def _tokens(text: str) -> list[str]:
    return [t for t in _WORD.findall(text.lower().replace("_", " ")) if t]


def _stem(token: str) -> str:
    """A word's first five letters: ``orders`` and ``order``, ``delivery`` and
    ``deliver`` meet; enough to count which agents a word describes."""
    return token[:5]


def _names_work(token: str) -> bool:
    """A word of a tool's name or a capability that says what the work is about
    (``parcel``, ``refund``), not a function word or a generic tool verb."""
    return (
        len(token) >= 3
        and not token.isdigit()
        and token not in _COMMON_WORDS
        and token not in _TOOL_WORDS
    )


@lru_cache(maxsize=8192)
def _keyword_tokens(keyword: str) -> tuple[str, ...]:
    """A keyword's words, worked out once: every request checks every keyword."""
    return tuple(_tokens(keyword))


@lru_cache(maxsize=65536)
def _fuzzy_equal(token: str, word: str) -> bool:
    if token == word or (len(word) >= 6 and token.startswith(word)):
        return True  # a long word also as the stem of a longer one: "document(ation)"
    if token in _COMMON_WORDS:
        return False
    if len(word) < 4 or abs(len(token) - len(word)) > 2:
        # Short words must match exactly, or as the start of a longer word
        # ("file" in "files"), never as a typo: "pay" is not "day".
        return len(word) >= 3 and _inflected(token, word)
    if _inflected(token, word):
        return True
    if len(token) < 4 and word.startswith(token) and word != f"{token}s":
        return False  # a keyword cut short is a word of its own: "fin", "car", "not"
    if token[0] != word[0]:
        return False  # typos seldom hit the first letter; other words often differ there
    allowed = 1 if len(word) < 9 else 2
    if DamerauLevenshtein.distance(token, word, score_cutoff=allowed) > allowed:
        return False
    # In a short word one changed letter makes another word ("wrote" is not
    # "write"): only a swap, a missing or an extra letter counts as a typo.
    return len(word) > 5 or sorted(token) == sorted(word) or len(token) != len(word)


_ENDINGS = _word_list("word_endings")
"""What a short word's longer forms add to it ("files", "edited", "booking",
"buchen"); a longer word it starts is another word ("edition" is not "edit",
"passenger" not "pass")."""


def _inflected(token: str, word: str) -> bool:
    """``token`` is ``word`` with an ending of :data:`_ENDINGS`."""
    return token.startswith(word) and token[len(word) :] in _ENDINGS


def _keyword_found(
    tokens: Sequence[str], keyword: str, known: frozenset[str] = frozenset()
) -> bool:
    """``keyword`` is in ``tokens``, one typo allowed per word. A token that is
    itself one of the team's own words (``known``) is that word: it meets a
    keyword only as written or as its longer form, never as a typo of another
    ("order" is not "ordner" on a team that has both)."""
    parts = _keyword_tokens(keyword)
    if not parts:
        return False

    def meets(token: str, part: str) -> bool:
        if token in known and token != part:
            return token.startswith(part) and len(token) - len(part) <= 3
        return _fuzzy_equal(token, part)

    n = len(parts)
    # Every way a token meets a word starts with the word's first letter, so
    # only the places whose token does are tried (most requests, most keywords:
    # none).
    first = parts[0][0]
    if n == 2:
        # Two words a few apart, in either order: "stolen bin" in "the bin
        # has been stolen", "order status" in "the status of my order".
        at = [i for i, t in enumerate(tokens) if t[:1] == first and meets(t, parts[0])]
        return any(
            meets(tokens[k], parts[1])
            for i in at
            for k in range(max(0, i - _KEYWORD_SPAN), min(len(tokens), i + _KEYWORD_SPAN + 1))
            if k != i
        )
    starts = [i for i in range(len(tokens) - n + 1) if tokens[i][:1] == first]
    return any(all(meets(tokens[i + j], parts[j]) for j in range(n)) for i in starts)


_KEYWORD_SPAN = 3
"""How far apart the two words of a keyword may be in a request (either order)."""
_PLACE_WORDS = frozenset({"at", "from", "zum", "zur", "vom", "beim", "desde", "depuis", "au"})
"""Prepositions after which a keyword names where something is, not the work
("rent me a car at Lisbon airport", "pay it from my account")."""
_DETERMINERS = frozenset({"the", "a", "an", "my", "our", "your", "his", "her", "their", "this"})


def _only_as_a_place(
    words: str,
    keywords: Sequence[str],
    known: frozenset[str],
    spoken: Mapping[str, set[str]] | None = None,
) -> bool:
    """Every one of ``keywords`` found in ``words`` (as written, or as one of
    the words ``spoken`` for it in another language) follows "at", "from" or
    their like (with only a determiner or a name between): the request names
    the agent's subject as a place or a source, not as what it wants done."""
    if not keywords:
        return False
    spoken = spoken or {}
    cased = _WORD.findall(words.replace("_", " "))
    tokens = [t.lower() for t in cased]
    for keyword in keywords:
        parts = _keyword_tokens(keyword)
        seen = False
        for i in range(len(tokens) - len(parts) + 1):
            said = tokens[i] in spoken.get(keyword, ())
            if not said and not all(
                _keyword_found([tokens[i + j]], parts[j], known) for j in range(len(parts))
            ):
                continue
            seen = True
            j = i - 1
            while j >= 0 and (tokens[j] in _DETERMINERS or cased[j][:1].isupper()):
                j -= 1
            if j < 0 or tokens[j] not in _PLACE_WORDS:
                return False
        if not seen:  # said in other words ("Flug" for flight): no place known
            return False
    return True


def lexical_score(
    text: str,
    keywords: Sequence[str],
    *,
    terms: Sequence[str] = (),
    weight: Callable[[str], float] = lambda _: 1.0,
    known: frozenset[str] = frozenset(),
    also: frozenset[str] = frozenset(),
) -> float:
    """0..1: how much of an agent's vocabulary ``text`` uses, typos tolerated.

    A multi-word keyword counts twice; three single-word hits saturate. A
    word of a tool's name or capability (``terms``) counts :data:`TERM_SHARE`
    of a keyword. ``weight`` scales each by how much it singles the agent out
    (see :meth:`Router.distinctness`); by default every word counts fully.
    Keywords in ``also`` count as found (said in another language).
    """
    tokens = _tokens(text)
    hits = sum(
        len(_keyword_tokens(k)) * weight(k)
        for k in keywords
        if k in also or _keyword_found(tokens, k, known)
    )
    hits += sum(TERM_SHARE * weight(t) for t in terms if _keyword_found(tokens, t, known))
    return min(1.0, hits / 3)


def structures_in(text: str) -> set[str]:
    """The kinds of :data:`STRUCTURES` that appear in ``text`` (a URL's path is
    not a file path, nor is a secret's placeholder, nor a command's argument)."""
    rest = _SECRET.sub(" ", _URL.sub(" ", _EMAIL.sub(" ", text)))
    searched = {"url": text, "secret": text, "command": rest}
    no_commands = _COMMAND.sub(" ", rest)
    return {
        kind
        for kind, (pattern, _) in STRUCTURES.items()
        if pattern.search(searched.get(kind, no_commands))
    }


def is_greeting_shaped(text: str) -> bool:
    """A short message that opens with a greeting or thanks word."""
    tokens = _tokens(text)
    if not 0 < len(tokens) <= _GREETING_MAX_WORDS:
        return False
    return any(_fuzzy_equal(t, w) for t in tokens[:3] for w in _GREETING_WORDS)


_QUESTION_OPENERS = _word_list("question_openers")
"""Words a question about the world opens with ("what is", "warum", "comment"),
within its first :data:`_OPENER_WITHIN` words ("could you explain ...")."""
_OPENER_WITHIN = 4
_CHANNEL_WORDS = _word_list("channels")
_CHANNELS = frozenset(w for w in _CHANNEL_WORDS if " " not in w)
"""Ways to reach outside the machine few teams have a tool for (SMS, a printer)."""
_CHANNEL_PHRASES = tuple(tuple(w.split()) for w in _CHANNEL_WORDS if " " in w)
"""Channels said in more than one word ("text message", "phone call")."""
_CHANNEL_KINDS = tuple(
    frozenset(str(w) for w in kind) for kind in _data(WORDS_FILE)["channels"]["kinds"]
)
"""The channels' words grouped by channel, each in the languages it is said in."""


def _same_channel(word: str) -> frozenset[str]:
    """``word`` and the words of the same channel in other languages
    ("stampante": printer, drucker, ...)."""
    return next((kind for kind in _CHANNEL_KINDS if word in kind), frozenset({word}))


_SENDING_WORDS = _word_list("sending_words")
_MAIL_WORDS = _word_list("mail_words")
_CALLING_WORDS = _word_list("calling_words")
_SINGLE_QUOTED = re.compile(r"(?<!\w)'[^']+'(?!\w)")
_NAMED_THING = frozenset({"it", "them", "this", "that", "me", "him", "her"})
"""After a calling verb, what is being named ("call it …"), not rung up."""
_ADDRESSEES = frozenset({"my", "me", "him", "her", "them", "us", "our", "the", "everyone", "all"})
"""Whom a message is for, right after "email" used as the verb ("Email my family …")."""
_COURTESIES = _word_list("opening_courtesies")
_SENT_WITHIN = 3
"""An e-mail is a channel when a sending word comes at most this many words before it."""
_FOR_WORDS = frozenset({"for", "für", "pour", "para"})
"""Paid "for a taxi": the channel is a thing the request is about, not its work."""
_NAME_LIKE = re.compile(r"\S*[\w.-][_/@.][\w]\S*")
"""A name, a path or an address ("twitter_token", "ops@example.com"): no channel."""
_PLANNED_WITHIN = 3
"""What a request asks to plan is within this many words after the plan word."""
_WHICH_WORDS = _word_list("which_words")
"""Words that ask which one of several things someone has ("what plan am I on")."""
_NAMING_WORDS = _word_list("naming_words")
_BACK_REFERENCES = _word_list("back_references")
_FOLLOW_UP_MAX_WORDS = 5
"""The most words a question that only refers back (:data:`_BACK_REFERENCES`)
has: "how much are they?"; a longer one may name its own thing."""
_NAMING_MAX_WORDS = 5
"""The most words a part that only says what an identifier is has ("and my
member number is KC1946682")."""
_HYPHENATED_WORD = re.compile(r"[\w-]+")
"""A word with its hyphens, so that an identifier ("RES-788920") stays one."""
_PERSONAL_WORDS = _word_list("personal_words")
"""Words that tie a request to the user, their team, this machine or this
conversation: a question with one of them is about something troupe can act on.
The assistant itself ("you") is not among them: "what do you think of X?"
asks about the world."""


def _faint(candidate: Candidate) -> bool:
    """Only meaning points to ``candidate``, and not closely (see :data:`MIN_NEAREST`)."""
    return candidate.structure == 0 and candidate.lexical == 0 and candidate.nearest < MIN_NEAREST


def is_open_question(text: str) -> bool:
    """A question about the world in general: a question word among its first
    :data:`_OPENER_WITHIN` words, and nothing of the user's (no "my", "our",
    "this", in five languages). "What is a knowledge graph?" is one; "what is
    in our knowledge base?" is not."""
    tokens = _tokens(text)
    return any(t in _QUESTION_OPENERS for t in tokens[:_OPENER_WITHIN]) and not _names_their_own(
        text
    )


def _names_their_own(text: str) -> bool:
    """``text`` has one of :data:`_PERSONAL_WORDS` ("my", "unser", "mi"),
    not written in capitals in a sentence that is not: "EU" and "US" are
    places, not the Portuguese "eu" or the English "us"."""
    shouted = text.isupper()
    return any(
        w.lower() in _PERSONAL_WORDS
        for w in _WORD.findall(text.replace("_", " "))
        if shouted or not (len(w) > 1 and w.isupper())
    )


_EXPLANATION_WORDS = _word_list("explanation_words")
"""Words that ask for an explanation of something in general ("why",
"difference", "define", "meaning"), in the languages the router is measured on."""
_EXPLANATION = re.compile(
    r"^(?:\W*\w+\W+){0,3}?(?:"
    r"what(?:'s| is| are)\s+(?:an?|the\s+(?:point|idea|purpose))\b"
    r"|how\s+(?:do|does|dose|did|can|could|would)\b|what\s+makes\b|walk\s+me\s+through"
    r"|what\s+(?:does|do)\b.*\b(?:mean|do|stand\s+for)\b"
    r"|was\s+(?:ist|sind)\s+(?:ein|eine)\b|wie\s+funktioniert"
    r"|qu[ée]\s+es\s+(?:un|una|el|la)\b|c[óo]mo\s+funciona"
    r"|qu'est-ce\s+qu|comment\s+fonctionne"
    r"|o\s+que\s+[ée]\s+(?:um|uma|o|a)\b|como\s+funciona)",
    re.I,
)


def asks_for_explanation(text: str) -> bool:
    """A question that asks what something is, why, or how it works in general
    ("what is a knowledge graph?", "how does a browser render a page?", "why
    sign a file?"), as opposed to one that asks for the state of something
    ("what's the status of order 48213?")."""
    tokens = _tokens(text)[: _OPENER_WITHIN + 2]
    return any(t in _EXPLANATION_WORDS for t in tokens) or bool(_EXPLANATION.search(text))


def is_general_explanation(text: str) -> bool:
    """An open question that asks for an explanation ("what's the difference
    between a hold and a renewal?"): it may name two agents' work and asks
    for neither, so it is one question, never steps for a plan."""
    return is_open_question(text) and asks_for_explanation(text)


_QUOTED_SPAN = re.compile(r"`[^`]*`|\"[^\"]*\"|“[^”]*”")
"""A back-quoted command or a double-quoted value: one piece, whatever is inside."""


def split_outside_quotes(pattern: re.Pattern[str], text: str) -> list[str]:
    """``pattern.split(text)``, never inside a back-quoted or double-quoted span
    ("run `sleep 1; echo x`" is one step, not two)."""
    spans: list[str] = []

    def hide(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    hidden = _QUOTED_SPAN.sub(hide, text)
    parts = pattern.split(hidden)
    return [
        re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], part)
        for part in parts
        if part is not None
    ]


_PAYLOAD = re.compile(r"^(?P<ask>[^:\n]{8,}?)\s*:\s+(?P<payload>\S.*)$", re.S)
"""An instruction, then a colon, then what it is to work on."""
_ANY_QUOTED = re.compile(rf"{_QUOTED_SPAN.pattern}|(?<!\w)'[^'\n]*'(?!\w)")
"""A quoted span, single quotes too (not an apostrophe: "what's")."""
_ONLY_A_COMMAND = re.compile(r"^`[^`]+`[\s.!?]*$")
"""A payload that is a back-quoted command and nothing else: what to run."""


@lru_cache(maxsize=4096)
def instruction_of(text: str) -> str:
    """The part of a request that asks for the work: before a colon that
    introduces what to work on ("add to the knowledge base: the staging url is
    http://..."), the whole request otherwise. What follows such a colon is
    content; its words and addresses do not say whose work it is. A colon of
    an address ("https://"), a time ("10:30") or a quoted value ("write
    'cakes: 30% deposit' into notes.txt") introduces nothing, nor does one
    right after an identifier ("member KC6102747: how many points have I?"),
    which says who asks."""
    stripped = text.strip()
    hidden = _ANY_QUOTED.sub(lambda m: "x" * len(m.group(0)), stripped)
    match = _PAYLOAD.match(hidden)
    if match is None:
        return text
    ask, payload = stripped[: match.end("ask")], stripped[match.start("payload") :]
    if len(_tokens(ask)) < 2:
        return text
    if _SEQUENCE.search(payload):
        return text  # "...: xoxb-123. Then write ..." goes on with a step of its own
    if _ONLY_A_COMMAND.match(payload):
        return text  # "Count the lines: `wc -l data.csv`": the command is the work
    if _SHAPED.fullmatch(_HYPHENATED_WORD.findall(ask)[-1]):
        return text  # "soy socia del club, KC6102747: ¿cuántos puntos tengo?": who asks
    return ask


_NARRATIVE_WORDS = _word_list("narrative_words")
_JOINING_WORDS = frozenset(
    {"and", "then", "und", "dann", "et", "puis", "y", "luego", "e", "depois"}
)
_CONTENT_OPENERS = _word_list("content_openers")
_TOPIC_WORDS = _word_list("topic_words")
_DETAIL_WORDS = 4
"""At most this many words make a part a detail of a step (:func:`_only_which`,
:func:`_only_if`) rather than a step."""
_ASK_WORDS = 6
"""At most this many words ask for the work before what it is to keep
(:meth:`Router._asked_for`)."""


def _after_joining(words: list[str]) -> list[str]:
    """``words`` without the joining words they open with ("and then ...")."""
    start = 0
    while start < len(words) and words[start].lower() in _JOINING_WORDS:
        start += 1
    return words[start:]


def tells_what_happened(part: str) -> bool:
    """A part of a request that tells what happened ("the ticket machine was
    broken", "i coudnt buy one"): the story behind the request, not a step.
    Its first word does not count: "was kostet der Versand?" asks, in German,
    and "was it delivered?" asks too. Nor do the words of what a step is to
    record ("log an event that Doris was sluggish"): after a word that opens
    such content, the story is the step's argument."""
    tokens = _after_joining(_tokens(part))[1:]
    content = next((i for i, token in enumerate(tokens) if token in _CONTENT_OPENERS), None)
    return any(
        token in _NARRATIVE_WORDS or (len(token) > 5 and _fuzzy_equal(token, "couldnt"))
        for token in tokens[:content]
    )


_FEW_WORDS = 3
"""A request with at most this many words beside its file, address or
command ("Open recipes/croissants.md", "Show me suppliers.md") says too
little for its meaning to weigh against what its structure says."""


def _structure_first(text: str, ranked: list[Candidate]) -> list[Candidate]:
    """``ranked`` led by the agent that takes the request's structure most
    fully, when the request has only a few words beside it and none of them
    is any agent's: a verb such as "open" means little alone, and what it
    means near one agent's phrases is chance."""
    if any(c.lexical > 0 for c in ranked) or not any(c.structure > 0 for c in ranked):
        return ranked
    if len(_tokens(_without_addresses(instruction_of(text), quotes=True))) > _FEW_WORDS:
        return ranked
    return sorted(ranked, key=lambda c: (-c.structure, -c.score))


def _only_which(part: str) -> bool:
    """A part that only says which thing the next one is about ("For booking
    BK-31877, could we have seats C7 and C8?"): a word of :data:`_TOPIC_WORDS`,
    an identifier and at most a word or two more; no step of its own."""
    tokens = _tokens(part)
    return (
        0 < len(tokens) <= _DETAIL_WORDS
        and tokens[0] in _TOPIC_WORDS
        and _IDENTIFIED.search(part) is not None
    )


def _only_if(part: str) -> bool:
    """A short condition after a step ("..., if they are free", "…, se
    estiverem livres"): when the step before is to be done, not a step."""
    tokens = _tokens(part)
    return 0 < len(tokens) <= _DETAIL_WORDS and re.match(_CONDITION, tokens[0], re.I) is not None


_REPORTING_OPENERS = _word_list("reporting_openers")
_PAGE_READING_OPENERS = _word_list("page_reading_openers")
_READ_FOR = frozenset({"me", "mir", "moi", "mi", "please", "pls", "also"})
"""Words before a reading word ("me diz", "also find") that change nothing."""
_WHERE_WORDS = _PLACE_WORDS | {"on", "in", "auf", "im", "en", "sur", "dans", "em", "na", "no"}


def _without_addresses(text: str, *, quotes: bool = False) -> str:
    """``text`` with its web addresses and file paths (and, with ``quotes``,
    its quoted spans) blanked out: their letters ("…/moon/phases/", "docs")
    are names, not words of the request."""
    if quotes:
        text = _QUOTED_SPAN.sub(" ", text)
    return _PATH.sub(" ", _URL.sub(" ", text))


def _only_where(part: str) -> bool:
    """A part that only says where the next one happens ("On example.com"):
    a preposition and a web address or a file, no step of its own."""
    if not (_URL.search(part) or _PATH.search(part)):
        return False
    tokens = _tokens(_without_addresses(part))
    return 0 < len(tokens) <= 2 and tokens[0] in _WHERE_WORDS


def _only_a_thing(part: str) -> bool:
    """A part that is only a file or a web address ("Pull up the plan for
    episode 44, episodes/ep044-outline.md"): the thing the part before names,
    not a step."""
    return not _tokens(_without_addresses(part))


def _only_names_an_identifier(part: str) -> bool:
    """A short part that only says what an identifier is ("… and the booking
    is RES-788920", "I'm KC1946682"): a detail of the request, not a step,
    however plainly its words name an agent's thing (:data:`_NAMING_WORDS`)."""
    words = _after_joining(_HYPHENATED_WORD.findall(part))
    if not 1 < len(words) <= _NAMING_MAX_WORDS or not _SHAPED.fullmatch(words[-1]):
        return False
    return any(w.lower() in _NAMING_WORDS for w in words[:-1])


def _opens_with_a_number(part: str) -> bool:
    """A part that opens with a number ("… a roll of packing tape and 20
    medium boxes"): the next of the things the step before lists, since a
    step opens with its verb."""
    words = _after_joining(_WORD.findall(part))
    return bool(words) and words[0].isdigit()


def _asks_about_it(part: str, ranked: Sequence[Candidate]) -> bool:
    """A question after a step that names nothing of its own ("can u chek my
    bookng SV-51034, whats the date and how many kids did we say"): no file,
    address or identifier, no name or number, and none of any agent's
    keywords, or, in a few words, a word that refers back ("… and how much
    are they?"); it asks about the thing the step before looks up."""
    cased = _after_joining(_WORD.findall(part))
    if not cased or cased[0].lower() not in _QUESTION_OPENERS or structures_in(part):
        return False
    if any(w[:1].isupper() or w[:1].isdigit() for w in cased[1:]):
        return False
    refers = len(cased) <= _FOLLOW_UP_MAX_WORDS and any(
        w.lower() in _BACK_REFERENCES for w in cased[1:]
    )
    return refers or not any(c.keyword for c in ranked)


def _steps(parts: Sequence[str]) -> list[str]:
    """The parts of a request that may be steps: the first, and each later one
    that is more than a thing the one before names (:func:`_only_a_thing`)."""
    return [part for j, part in enumerate(parts) if j == 0 or not _only_a_thing(part)]


_RANGE = re.compile(
    rf"\b((?:{'|'.join(_word_list('range_words'))})\s+(?:\w+\s+)?[\w:.]+)"
    r"\s+(?:and|und|y|et|e|en|och)\s+",
    re.I,
)
"""The joining word of a range ("between 2 and 5pm", "entre el 3 y el 5")."""


def _ranges_joined(text: str) -> str:
    """``text`` with the "and" inside each range of two values written as a
    dash ("between 2 - 5pm"): the ends of one detail, not two steps."""
    return _RANGE.sub(r"\1 - ", text)


def split_clauses(text: str) -> list[str]:
    """The parts of a request joined by 'and', 'then', commas (and their
    German, Spanish, French and Portuguese forms), each with two words or more;
    a back-quoted command, a quoted value or a range ("between 2 and 5pm") is
    never split."""
    parts = [p.strip(" .,;") for p in split_outside_quotes(_CLAUSE_SPLIT, _ranges_joined(text))]
    return [p for p in parts if len(_tokens(p)) >= _MIN_CLAUSE_WORDS]


@dataclass
class Router:
    """Scores the agents of one tree for a request; see the module docstring."""

    profiles: Sequence[AgentProfile]
    encoder: Encoder | None = None
    """None: lexical and structural signals only."""
    threshold: float = DEFAULT_THRESHOLD
    cache: PhraseCache | None = None
    """Where the phrase vectors are kept between runs (encoders with a ``cache_id``)."""
    _matrix: Any = field(default=None, init=False, repr=False)
    _owners: list[int] = field(default_factory=list, init=False, repr=False)
    _greeting_rows: int = field(default=0, init=False, repr=False)
    _keyword_rows: list[tuple[int, str]] = field(default_factory=list, init=False, repr=False)
    _word_vectors: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    _spread: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _words: frozenset[str] | None = field(default=None, init=False, repr=False)
    _said: frozenset[str] | None = field(default=None, init=False, repr=False)
    _shared: frozenset[str] | None = field(default=None, init=False, repr=False)
    _phrases: frozenset[str] | None = field(default=None, init=False, repr=False)
    _takers: dict[str, frozenset[str]] | None = field(default=None, init=False, repr=False)
    _reach_most: dict[str, float] | None = field(default=None, init=False, repr=False)
    _orphans: tuple[Any, ...] = field(default=(), init=False, repr=False)
    _own_orphans: tuple[Any, ...] = field(default=(), init=False, repr=False)
    """Per agent, the rows of its refusals among ``_orphans``' first."""

    @property
    def _team_words(self) -> frozenset[str]:
        """Every word of the team's keywords, match phrases and tool terms."""
        if self._words is None:
            self._words = frozenset(
                t
                for profile in self.profiles
                for phrase in (*profile.lexical_keywords, *profile.terms)
                for t in _keyword_tokens(phrase)
            )
        return self._words

    @property
    def _described_by(self) -> frozenset[str]:
        """Every word the team's agents are described by: their texts,
        keywords and tool terms, word for word."""
        if self._said is None:
            self._said = frozenset(
                t
                for profile in self.profiles
                for text in (*profile.phrases, *profile.lexical_keywords, *profile.terms)
                for t in _tokens(text)
            )
        return self._said

    def _names_a_channel_it_has(self, word: str) -> bool:
        """Some agent of the team is described by ``word`` in this or another
        form or language: the two share their first six letters ("calendario"
        on a team with a calendar), or one is the other with a word ending
        ("printer" where one prints), or it is the same channel in another
        language ("stampante" where one prints). Five letters and another
        tail ("correo", mail, and "corre", run) are chance."""
        return any(
            kin == said
            or _inflected(kin, said)
            or _inflected(said, kin)
            or (len(kin) >= 6 and said.startswith(kin[:6]))
            for kin in _same_channel(word)
            for said in self._described_by
        )

    def distinctness(self, phrase: str) -> float:
        """How much ``phrase`` singles one agent out on this team: 1 over the
        number of agents described by its most telling word. "refund" on
        a team where only one agent mentions refunds counts fully; "order" on
        a team where orders, returns and shipping all take an order number
        counts a third: a word the team shares is an entity, not the work."""
        parts = _keyword_tokens(phrase)
        if not parts:
            return 0.0
        spread = self._word_spread
        # A phrase is as telling as its most telling word ("tracking number").
        fewest = min(max(1, spread.get(_stem(p), 1)) for p in parts)
        if fewest >= self._doers >= SHARED_BY_ALL:
            # Every member that does work is described by it ("claim" on a
            # claims team whose every desk takes a claim number): it names
            # what they all work on, so it tells none of them apart.
            return 0.0
        return 1 / fewest

    @cached_property
    def _doers(self) -> int:
        """How many agents do work themselves (all but the planning ones):
        asked for every keyword of every request, counted once."""
        return sum(1 for profile in self.profiles if not profile.plans)

    @property
    def _word_spread(self) -> dict[str, int]:
        """How many agents each stem of the team's words describes."""
        if not self._spread:
            counts: dict[str, int] = {}
            for profile in self.profiles:
                for stem in profile.vocabulary:
                    counts[stem] = counts.get(stem, 0) + 1
            self._spread = counts or {"": 1}
        return self._spread

    def _structure_signal(self, profile: AgentProfile, found: set[str], shaped: set[str]) -> float:
        """The structure signal for ``profile``: the share of the request's
        structures (a URL, a path, a command, a secret) it takes, so that of
        "count the lines of log.csv with wc -l" the agent that runs commands
        and reads files takes both, one that only hashes files half; or, when
        more, 1 over the number of the team's agents that take the most
        telling identifier shape of the request it takes too. A member number
        that four desks take counts a quarter, so it does not outweigh the
        words of the request."""
        taken = len(found & profile.structures) / len(found) if found else 0.0
        if taken and profile.reach:
            # Of the agents that take a thing, the one most of whose tools take
            # it is the one it is for: a file is the file agent's, less the
            # browser's that can save a screenshot to one.
            taken *= min(self._reach_share(profile, kind) for kind in found & profile.structures)
        if taken == 1.0:
            return taken
        takers = self._shape_takers()
        return max(
            [
                taken,
                *(
                    _shape_weight(s) / len(takers[s])
                    for s in shaped
                    if profile.name in takers.get(s, ())
                ),
            ]
        )

    def _shape_takers(self) -> dict[str, frozenset[str]]:
        """Shape -> the agents whose tools take identifiers of that shape: those
        that describe it, and those with a parameter of the same name as one
        that does ("tracking_number" of a claims tool, when the tracking tool
        says a tracking number is "KV followed by 10 digits"), unless that
        name takes another shape somewhere in the team."""
        if self._takers is None:
            takers: dict[str, set[str]] = {}
            for profile in self.profiles:
                for shape in profile.shapes:
                    takers.setdefault(shape, set()).add(profile.name)
            shapes_of: dict[str, set[str]] = {}
            for other in self.profiles:
                for shape, parameter in other.shape_parameters:
                    shapes_of.setdefault(parameter, set()).add(shape)
            for shape, names in takers.items():
                # A name that takes two shapes in the team ("booking_id": a
                # kennel's BK- and a groomer's GR-) says nothing of either.
                named = {p for p, shapes in shapes_of.items() if shapes == {shape}}
                names.update(p.name for p in self.profiles if p.parameters & named)
            self._takers = {shape: frozenset(names) for shape, names in takers.items()}
        return self._takers

    def _reach_share(self, profile: AgentProfile, kind: str) -> float:
        """``profile``'s share of tools taking ``kind`` over the largest such
        share in the team (1 for the agent most given to it)."""
        if self._reach_most is None:
            most: dict[str, float] = {}
            for other in self.profiles:
                for taken, share in other.reach:
                    most[taken] = max(most.get(taken, 0.0), share)
            self._reach_most = most
        top = self._reach_most.get(kind, 0.0)
        mine = dict(profile.reach).get(kind, 1.0)
        return 1.0 if top <= 0 else min(1.0, mine / top)

    def _asks_for_the_result(self, part: str, *, ordered: bool) -> bool:
        """A part that only asks to be told what the step before found ("tell
        me what comes up", "y dime el porcentaje"): it opens with a word of
        ``reporting_openers`` and holds no structure and no name or number;
        "sag mir, ob Riverside Möbel annimmt" asks something new. Joined by
        "and" alone, it asks about the thing the step before looks up, whatever
        its words ("look up booking TK-408215 and tell me which seats I have");
        ``ordered`` after it by "then", a word of the team's own makes it a new
        question ("… and then tell me what a dental cleaning costs")."""
        cased = _after_joining(_WORD.findall(part))
        tokens = [t.lower() for t in cased]
        if not tokens or tokens[0] not in _REPORTING_OPENERS or structures_in(part):
            return False
        # "I" is no name ("… which seats I have").
        named = any((w[:1].isupper() and w != "I") or w[:1].isdigit() for w in cased[1:])
        if not ordered:
            return not named
        team = self._team_words
        own = [t for t in tokens[1:] if len(t) > 2 and t not in _COMMON_WORDS]
        # A team word as written or with an ending ("costs" where one says cost).
        return not named and not any(t in team or any(_inflected(t, w) for w in team) for t in own)

    def _reads_what_it_opened(
        self, before: str, part: str, ranked: Sequence[Candidate], text: str
    ) -> bool:
        """A part after one that opens a web address, which only reads
        something off that page ("Open https://… and find their events contact
        email", "Abre o site … e me diz quais eventos há"): it opens with a
        word of ``page_reading_openers``, has no structure of its own, is not
        ordered after it ("then") and names at most one keyword of its best
        agent; "… then list the files in the folder" is a step of its own."""
        if "url" not in structures_in(before) or structures_in(part) or _SEQUENCE.search(text):
            return False
        tokens = _tokens(part)
        first = next((t for t in tokens if t not in _READ_FOR), None)
        if first is None or not any(
            first == w or (len(w) > 3 and _fuzzy_equal(first, w)) for w in _PAGE_READING_OPENERS
        ):
            return False
        profile = self._profile(ranked[0].name)
        named = [k for k in profile.lexical_keywords if _keyword_found(tokens, k, self._team_words)]
        return len(named) <= 1

    def _shared_inputs(self) -> frozenset[str]:
        """Words of the parameter names that most of the team's workers share
        (see :data:`SHARED_SHARE`): things they all take, like a card number."""
        if self._shared is None:
            workers = [p for p in self.profiles if not p.plans]
            counts: dict[str, int] = {}
            for profile in workers:
                for word in profile.inputs:
                    counts[word] = counts.get(word, 0) + 1
            enough = max(3.0, len(workers) * SHARED_SHARE)
            self._shared = frozenset(w for w, n in counts.items() if n >= enough)
        return self._shared

    def _about_the_work(self, text: str) -> str:
        """``text`` without the things the whole team takes, named by an
        identifier ("card EL-251893" where every agent takes a card number):
        what the request asks to have done, for the semantic signal. A thing
        every agent works on says nothing of whose work it is, yet its word
        pulls the request towards the one agent whose role is that thing (the
        membership desk for "renew item 39417762 for card EL-251893"). The
        word stays where it is part of the work's own name ("cancel order
        76510", a tool's name), and the whole text stays when too little of
        it would be left to say what to do ("the status of order 48213")."""
        shared = self._shared_inputs()
        if not shared:
            return text

        def drop(match: re.Match[str]) -> str:
            label = match.group("label").lower()
            before = _tokens(text[: match.start()])[-1:]
            named = before and f"{before[0]} {label}" in self._team_phrases
            return match.group(0) if label not in shared or named else " "

        kept = _IDENTIFIED.sub(drop, text)
        if kept == text:
            return text
        rest = [t for t in _tokens(kept) if len(t) > 2 and t.isalpha() and t not in _COMMON_WORDS]
        return " ".join(kept.split()) if len(rest) >= _WORK_WORDS_LEFT else text

    @property
    def _team_phrases(self) -> frozenset[str]:
        """The team's keywords and tool names of two words or more, as words."""
        if self._phrases is None:
            self._phrases = frozenset(
                " ".join(_keyword_tokens(k))
                for p in self.profiles
                for k in (*p.lexical_keywords, *p.phrases)
                if 1 < len(_keyword_tokens(k)) <= 3
            )
        return self._phrases

    def with_threshold(self, threshold: float) -> Router:
        """The same router (sharing its encoded phrases) with another threshold."""
        other = Router(self.profiles, self.encoder, threshold, self.cache)
        other._matrix = self._phrase_matrix()
        other._owners, other._greeting_rows = self._owners, self._greeting_rows
        other._keyword_rows, other._word_vectors = self._keyword_rows, self._word_vectors
        other._spread, other._words = self._spread, self._words
        other._shared, other._phrases = self._shared, self._phrases
        other._orphans = self._orphans  # found with the matrix, not after it
        other._own_orphans = self._own_orphans
        return other

    def _phrase_matrix(self) -> Any:
        if self._matrix is None and self.encoder is not None:
            texts: list[str] = []
            owners: list[int] = []
            keyword_rows: list[tuple[int, str]] = []
            for index, profile in enumerate(self.profiles):
                for phrase in profile.phrases:
                    texts.append(phrase)
                    owners.append(index)
                for keyword in profile.keywords:
                    if not profile.has_examples:  # see TRANSLATED_KEYWORD
                        keyword_rows.append((len(texts), keyword))
                    texts.append(keyword)
                    owners.append(index)
            self._keyword_rows = keyword_rows
            texts.extend(GREETINGS)
            texts.extend(OPEN_QUESTIONS)
            refusals = [(i, r) for i, p in enumerate(self.profiles) for r in p.refusals]
            refusals += [(-1, action) for action in WORLD_ACTIONS]
            texts.extend(r for _, r in refusals)
            self._greeting_rows = len(GREETINGS)
            self._owners = owners
            matrix = self._encode_phrases(texts)
            start = len(owners) + len(GREETINGS) + len(OPEN_QUESTIONS)
            orphans = start + self._orphan_refusals(matrix, start, [i for i, _ in refusals])
            world = start + sum(1 for i, _ in refusals if i >= 0)
            self._orphans = (orphans[orphans < world], orphans[orphans >= world])
            refusers = np.asarray([i for i, _ in refusals], dtype=int)[self._orphans[0] - start]
            self._own_orphans = tuple(
                self._orphans[0][refusers == index] for index in range(len(self.profiles))
            )
            self._matrix = matrix
        return self._matrix

    def _orphan_refusals(self, matrix: Any, start: int, refused_by: Sequence[int]) -> Any:
        """Which refusals (the rows of ``matrix`` from ``start``, as offsets)
        no other agent's phrases come near (:data:`ORPHAN_BELOW`): work the
        author says one agent cannot do and no teammate is described by
        ("reset app passwords"), unlike a refusal that points to a teammate
        ("browse the web"); and the :data:`WORLD_ACTIONS` no agent of the team
        comes near (``refused_by`` -1), so a shop keeps its "buy something
        online"."""
        if not refused_by:
            return np.zeros(0, dtype=int)
        owners = np.asarray(self._owners)
        refusers = np.asarray(refused_by)
        with blas_limited():
            sims = matrix[start : start + len(refusers)] @ matrix[: len(owners)].T
        sims[refusers[:, None] == owners[None, :]] = -1.0  # an agent's own phrases
        near = sims.max(axis=1, initial=-1.0)
        return np.flatnonzero(near < ORPHAN_BELOW)

    def _encode_phrases(self, texts: list[str]) -> Any:
        assert self.encoder is not None
        encoder_id = getattr(self.encoder, "cache_id", None)
        if self.cache is None or not isinstance(encoder_id, str):
            return self.encoder.encode(texts)
        vectors = self.cache.load(encoder_id, texts)
        if vectors is None:
            vectors = self.encoder.encode(texts)
            self.cache.store(encoder_id, texts, vectors)
        return vectors

    def _semantic(
        self,
        texts: Sequence[str],
        words: Sequence[str] = (),
        vectors_of: dict[str, Any] | None = None,
    ) -> tuple[
        np.ndarray[Any, Any],
        np.ndarray[Any, Any],
        np.ndarray[Any, Any],
        np.ndarray[Any, Any],
        np.ndarray[Any, Any],
    ]:
        """Per text: each agent's score (its closest phrases, see
        :data:`NEAREST_SHARE`) and nearest phrase, and the similarity to a
        greeting and to an open question. ``words`` are encoded in the same
        pass, added to ``vectors_of`` and kept for later decisions."""
        count = len(self.profiles)
        matrix = self._phrase_matrix()
        if matrix is None or self.encoder is None:
            zeros = np.zeros(len(texts))
            nothing = np.zeros((len(texts), count))
            return nothing, nothing, zeros, zeros, np.zeros((len(texts), 2 + count))
        vectors = self.encoder.encode([*texts, *words])
        for word, vector in zip(words, vectors[len(texts) :], strict=True):
            self._word_vectors[word] = vector
            if vectors_of is not None:
                vectors_of[word] = vector
        with blas_limited():  # a small product: a BLAS pool would only spin
            sims = vectors[: len(texts)] @ matrix.T
        rows = len(self._owners)
        per_agent = np.full((len(texts), count), -1.0)
        nearest = np.full((len(texts), count), -1.0)
        owners = np.asarray(self._owners)
        for index in range(count):
            columns = np.flatnonzero(owners == index)
            if columns.size:
                top = np.sort(sims[:, columns], axis=1)[:, -_TOP_PHRASES:]
                nearest[:, index] = top[:, -1]
                per_agent[:, index] = NEAREST_SHARE * top[:, -1] + (1 - NEAREST_SHARE) * top.mean(
                    axis=1
                )
        greeting = sims[:, rows : rows + self._greeting_rows].max(axis=1)
        asked = rows + self._greeting_rows
        question = np.sort(sims[:, asked : asked + len(OPEN_QUESTIONS)], axis=1)[:, -_TOP_PHRASES:]
        question_score = question.mean(axis=1)
        # The author's refusals no teammate is described by, then the work no
        # team does, then each agent's own such refusals.
        refused = np.zeros((len(texts), 2 + count))
        for column, kept in enumerate(self._orphans):
            if len(kept):
                refused[:, column] = sims[:, kept].max(axis=1)
        for index, own in enumerate(self._own_orphans):
            if len(own):
                refused[:, 2 + index] = sims[:, own].max(axis=1)
        return (
            np.clip(per_agent, 0.0, 1.0),
            np.clip(nearest, 0.0, 1.0),
            greeting,
            question_score,
            refused,
        )

    def _other_words(self, text: str) -> set[str]:
        """The words of ``text`` that may mean one of the team's keywords
        without being one of its words (see :data:`TRANSLATED_KEYWORD`)."""
        if self.encoder is None:
            return set()
        # As written: the encoder reads "Wetter" as weather more surely than "wetter".
        written = _WORD.findall(_URL.sub(" ", instruction_of(text)).replace("_", " "))
        return {
            t
            for t in written
            if len(t) >= _TRANSLATED_MIN_LETTERS
            and t.isalpha()
            and t.lower() not in _COMMON_WORDS
            and t.lower() not in self._team_words
        }

    def _translated(
        self, words_of: Sequence[set[str]], vectors_of: Mapping[str, Any]
    ) -> list[dict[str, set[str]]]:
        """Per set of words (:meth:`_other_words` of a text, with their vectors
        in ``vectors_of``), the team's keywords they mean, each with the words
        (lower case) that mean it."""
        matrix = self._phrase_matrix()
        if matrix is None or not self._keyword_rows:
            return [{} for _ in words_of]
        wanted = sorted(set().union(*words_of))
        if not wanted:
            return [{} for _ in words_of]
        keywords = matrix[[row for row, _ in self._keyword_rows]]
        with blas_limited():  # every word against every keyword, in one product
            sims = keywords @ np.stack([vectors_of[word] for word in wanted]).T
        best = sims.argmax(axis=0)
        means = {
            word: self._keyword_rows[int(best[i])][1]
            for i, word in enumerate(wanted)
            if sims[best[i], i] >= TRANSLATED_KEYWORD
        }
        out = []
        for words in words_of:
            found: dict[str, set[str]] = {}
            for word in words & means.keys():
                found.setdefault(means[word], set()).add(word.lower())
            out.append(found)
        return out

    def _candidates(
        self,
        text: str,
        semantic: Sequence[float],
        nearest: Sequence[float],
        translated: Mapping[str, set[str]] | None = None,
    ) -> list[Candidate]:
        translated = translated or {}
        asked = self._asked_for(text)
        found = structures_in(asked)
        shaped = shapes_in(asked)
        # An address or a path is structure; its letters ("http", "docs") are
        # not words of the request as well.
        words = _without_addresses(asked)
        tokens = _tokens(words)
        out = []
        for profile, sem, near in zip(self.profiles, semantic, nearest, strict=True):
            lex = lexical_score(
                words,
                profile.lexical_keywords,
                terms=profile.terms,
                weight=self.distinctness,
                known=self._team_words,
                also=frozenset(translated),
            )
            found_words = [
                k
                for k in profile.lexical_keywords
                if lex
                and self.distinctness(k) > 0
                and (k in translated or _keyword_found(tokens, k, self._team_words))
            ]
            # A keyword that only says where ("a car at the airport") is no sign
            # of the work, unless a word of the agent's tools says what to do or
            # the meaning comes close.
            if found_words and near < MIN_NEAREST:
                said = [t for t in profile.terms if _keyword_found(tokens, t, self._team_words)]
                if _only_as_a_place(words, [*found_words, *said], self._team_words, translated):
                    found_words = []
            named = any(self.distinctness(k) >= DISTINCT_NAME for k in found_words)
            struct = self._structure_signal(profile, found, shaped)
            total = SEMANTIC_WEIGHT * sem + LEXICAL_WEIGHT * lex + STRUCTURE_WEIGHT * struct
            out.append(
                Candidate(
                    profile.name,
                    round(float(total), 4),
                    float(sem),
                    lex,
                    struct,
                    float(near),
                    bool(found_words),
                    named,
                )
            )
        out.sort(key=lambda c: -c.score)
        return out

    def _asked_for(self, text: str) -> str:
        """What ``text`` asks for (:func:`instruction_of`), and, where its first
        few words name one of the team's keywords and a word of
        ``content_openers`` follows them ("Remember that my editor wants stems
        as WAV files", "Create a skill called totals that runs python3 …"),
        only those words: what comes after is what to keep or make, and its
        words and files say nothing of whose work it is."""
        asked = instruction_of(text)
        if asked != text:
            return asked
        # The words that join a step to the one before ("puis note dans le
        # journal que …") do not count among its first few.
        found = list(_WORD.finditer(text))
        lead = len(found) - len(_after_joining([m.group(0) for m in found]))
        for index, match in enumerate(found):
            if index > _ASK_WORDS + lead:
                break
            if index <= lead or match.group(0).lower() not in _CONTENT_OPENERS:
                continue
            before = text[: match.start()]
            tokens = _tokens(before)
            if any(
                _keyword_found(tokens, k, self._team_words)
                for profile in self.profiles
                for k in profile.lexical_keywords
            ):
                return before
            break
        return text

    def decide(self, text: str) -> RouteDecision:
        """The router's decision for one request."""
        return self.decide_many([text])[0]

    def decide_many(self, texts: Sequence[str]) -> list[RouteDecision]:
        """Decisions for several requests, encoded as one batch."""
        if not self.profiles:
            return [RouteDecision("defer", None, 0.0) for _ in texts]
        clauses = [split_clauses(instruction_of(t)) for t in texts]
        flat = [*texts, *(c for parts in clauses for c in parts)]
        words_of = [self._other_words(t) for t in flat]
        wanted = set().union(*words_of)
        if len(self._word_vectors) + len(wanted) > _WORD_VECTORS_KEPT:
            # A long-lived server meets ever new words: start afresh, before
            # this batch's words are looked up.
            self._word_vectors.clear()
        # This batch's own copy of the vectors it uses: another thread's decision
        # may empty the shared cache meanwhile without this one missing a word.
        known = {w: v for w in wanted if (v := self._word_vectors.get(w)) is not None}
        new = sorted(wanted - known.keys())
        semantic, nearest, greeting, question, refused = self._semantic(
            [self._about_the_work(t) for t in flat], new, known
        )
        translated = self._translated(words_of, known)
        decisions = []
        offset = len(texts)
        for i, text in enumerate(texts):
            ranked = _structure_first(
                text, self._candidates(text, semantic[i], nearest[i], translated[i])
            )
            parts = clauses[i]
            # Steps ordered by "then" are steps; parts joined by "and" alone may
            # be one ask in several words.
            ordered = bool(_SEQUENCE.search(text))
            owners = set()
            elsewhere = another = False
            before: str | None = None
            for j, part in enumerate(parts if len(parts) > 1 else ()):
                top = self._candidates(
                    part, semantic[offset + j], nearest[offset + j], translated[offset + j]
                )
                if self._argument_of(before, part, top):
                    continue  # "... and save it as lpmap.png": the step before's file
                if BARE_PRONOUN.match(part) and not top[0].keyword:
                    continue  # "cancel it": the step before's thing, maybe its work
                if j > 0 and tells_what_happened(part):
                    continue  # "..., it got cancelled and nothing came back": the story
                if 0 < j == len(parts) - 1 and self._asks_for_the_result(part, ordered=ordered):
                    continue  # "... and tell me what comes up": the step before's report
                if j > 0 and self._reads_what_it_opened(parts[j - 1], part, top, text):
                    continue  # "Open https://… and find their events email": off the page
                if j < len(parts) - 1 and (_only_where(part) or _only_which(part)):
                    continue  # "On example.com, type ...": where the next step happens
                if j > 0 and _only_if(part):
                    continue  # "..., if they are free": when the step before is done
                if before is not None and _asks_about_it(part, top):
                    continue  # "check booking SV-51034, whats the date": of the same thing
                if j > 0 and _only_a_thing(part):
                    continue  # "..., episodes/ep044-outline.md": what the step before names
                if j > 0 and _opens_with_a_number(part):
                    continue  # "a roll of tape and 20 boxes": the next item, not a step
                if self._detail_of(before, top, ordered=ordered):
                    continue  # "the running time and age guidance for PF-1243": one ask
                if j > 0 and _only_names_an_identifier(part):
                    continue  # "... and the booking is RES-788920": a detail
                # A step of its own names its agent's words or structure;
                # meaning alone, which a story has too ("there are five of us
                # in the house"), only says the parts may not be one agent's.
                if self._owns_clause(top) and (top[0].lexical > 0 or top[0].structure > 0):
                    owners.add(top[0].name)
                    before = top[0].name
                nobodys = self.encoder is not None and _faint(top[0])
                # A part whose leader has only meaning while another agent's
                # words are in it ("… and then remember how many lines it has")
                # leans to that agent.
                meaning_only = top[0].lexical == 0 and top[0].structure == 0
                named_elsewhere = meaning_only and any(
                    c.lexical > 0 and c.name != ranked[0].name for c in top
                )
                elsewhere = elsewhere or top[0].name != ranked[0].name or nobodys or named_elsewhere
                another = another or (
                    top[0].name != ranked[0].name and self._owns_clause(top) and not nobodys
                )
            offset += len(parts)
            # Parts joined only by commas are details of one request ("a room in
            # Nice, budget 120 a night"); steps are joined by "and", "then", ";".
            joined = bool(_JOINED.search(_ranges_joined(text))) and len(parts) > 1
            # "plan the release: write the changelog, then tag it" asks for a
            # plan of the steps after its colon, which are content otherwise.
            compound = (len(owners) > 1 and joined) or self._asks_for_a_plan(
                _steps(parts) if len(parts) > 1 else split_clauses(text)
            )
            if compound and is_general_explanation(text):
                compound = False
            # Ordered steps ("..., then ...") of which one is another agent's, or
            # nobody's: one agent would not do them all.
            # Parts joined by "and" of which one clearly leans to another agent
            # are not one agent's either ("find me a flight, and tell me what
            # 200 euros are in pounds").
            ordered_elsewhere = elsewhere and ordered
            steps_elsewhere = ordered_elsewhere or (another and joined)
            # A greeting's words that mean a keyword in another language ("good
            # morning": a matinee; "falar": speaks) are small talk: whether it
            # is a greeting is read from the words as written.
            as_written = (
                self._candidates(text, semantic[i], nearest[i])[0]
                if translated[i] and is_greeting_shaped(text)
                else None
            )
            decision = self._judge(
                text,
                ranked,
                float(greeting[i]),
                float(question[i]),
                compound,
                steps_elsewhere=steps_elsewhere,
                stranger=partial(self._opens_with_a_stranger, text, translated[i]),
                refused=(float(refused[i, 0]), float(refused[i, 1])),
                own_refusal={p.name: float(refused[i, 2 + k]) for k, p in enumerate(self.profiles)},
                as_written=as_written,
            )
            if ordered_elsewhere and decision.kind == "defer" and not decision.nobody:
                # Ordered steps that lean to different agents, though not
                # clearly enough to name each step's: the model may split them.
                decision = replace(decision, steps=True)
            decisions.append(decision)
        return decisions

    @staticmethod
    def _argument_of(before: str | None, part: str, ranked: Sequence[Candidate]) -> bool:
        """A part that names no agent's work, only a thing (a file, an address)
        that the agent of the step before takes too ("take a screenshot of
        https://… and save it as lpmap.png"): where that step puts its
        result, not a step of its own. An identifier is no such place ("…,
        and then list what's in my mail tray. KC-1904")."""
        if before is None or any(c.lexical > 0 for c in ranked) or ranked[0].structure == 0:
            return False
        if not structures_in(part) & {"path", "url"}:
            return False
        return any(c.name == before and c.structure > 0 for c in ranked)

    @staticmethod
    def _detail_of(before: str | None, ranked: Sequence[Candidate], *, ordered: bool) -> bool:
        """A part joined by "and" alone whose leader is named by none of its
        words, whose only structure the agent of the step before takes too
        ("the running time and age guidance for performance PF-1243"): more of
        what that step asks, not a step of its own. One ordered after it ("…,
        and then list what's in my mail tray. KC-1904") is a step."""
        if before is None or ordered or ranked[0].lexical > 0:
            return False
        return any(c.name == before and c.structure > 0 for c in ranked)

    def _opens_with_a_stranger(self, text: str, translated: Mapping[str, set[str]]) -> bool:
        """``text`` opens with a word no agent of the team is described by,
        in any language the router reads (see :data:`TRANSLATED_KEYWORD`),
        and is no question: an instruction whose verb is nobody's work."""
        tokens = _tokens(instruction_of(text))
        while tokens and tokens[0] in _OPENING_WORDS:
            tokens = tokens[1:]
        # Another language (its letters, or a word that means one of the
        # team's keywords in other letters: "Flug" for flight, not "members"
        # for membership): the team's words say nothing of its verbs.
        foreign = not text.isascii() or any(
            word[:4] not in {part[:4] for part in _keyword_tokens(keyword)}
            for keyword, said in translated.items()
            for word in said
        )
        if not tokens or "?" in text or foreign:
            return False
        first = tokens[0]
        if not first.isalpha() or len(first) < 3 or first in _NO_STRANGERS:
            return False
        if _stem(first) in self._word_spread:
            return False
        # A typo of one of the team's words or of a question word ("cancle", "wats").
        return not any(_fuzzy_equal(first, w) for w in (*self._team_words, *_QUESTION_OPENERS))

    def _profile(self, agent: str) -> AgentProfile:
        return next(p for p in self.profiles if p.name == agent)

    def _role_only_distance(self, candidate: Candidate) -> float:
        """How much further every request sits from ``candidate``'s phrases
        than from a general question's examples because its author gave no
        example requests, only its role and tools (see :data:`NOBODY_NEAREST`):
        comparisons with the general questions make up for it."""
        if self._profile(candidate.name).has_examples:
            return 0.0
        return MIN_NEAREST - NOBODY_NEAREST

    def _nobody_below(self, agent: str) -> float:
        """How close a request must come to ``agent``'s phrases, on meaning
        alone, to be its guess at all (see :data:`NOBODY_NEAREST`)."""
        return MIN_NEAREST if self._profile(agent).has_examples else NOBODY_NEAREST

    @property
    def _planners(self) -> set[str]:
        return {p.name for p in self.profiles if p.plans}

    def _opens_with_plan(self, text: str) -> bool:
        """``text`` asks for the planning agent's work ("plan the release: ...",
        "can you plan my trip ...", "I need a roadmap for ..."), rather than
        mentioning someone's plans ("our plans changed, ...")."""
        planner = next((p for p in self.profiles if p.plans), None)
        if planner is None:
            return False
        # A plan word inside an address, a path or a quote ("…/moon/phases/")
        # is part of a name, not a request for a plan.
        tokens = _tokens(_without_addresses(text, quotes=True))
        for keyword in planner.lexical_keywords:
            parts = _keyword_tokens(keyword)
            for i in range(len(tokens) - len(parts) + 1):
                found = all(_fuzzy_equal(tokens[i + j], parts[j]) for j in range(len(parts)))
                if (
                    found
                    and (i == 0 or tokens[i - 1] not in _PERSONAL_WORDS)
                    and not self._plans_its_own_work(
                        tokens[i + len(parts) :][:_PLANNED_WITHIN], parts, tokens[i - 1 : i]
                    )
                ):
                    return True
        return False

    def _plans_its_own_work(
        self, tokens: Sequence[str], plan: Sequence[str], before: Sequence[str] = ()
    ) -> bool:
        """Another member plans its own work in the team's words ("plan a trip"
        is a keyword of the journeys agent) and what is to be planned, the words
        right after the plan word (``tokens``), names that work with a keyword of
        its own ("plan a journey from Westbury"; not "plan my Monday: check the
        timetable, then ..."); or the word right ``before`` it is one of that
        member's keywords' words, which makes the plan its thing ("What
        maintenance plans do you offer?" to a contracts desk with the keywords
        "plan" and "maintenance contract"), or a word asking which one
        (:data:`_WHICH_WORDS`: "What plan am I on", "¿qué plan tengo
        contratado?" to a membership desk with the keyword "plan")."""
        for profile in self.profiles:
            if profile.plans:
                continue
            keywords = profile.lexical_keywords
            if not any(set(plan) <= set(_keyword_tokens(k)) for k in keywords):
                continue
            others = [k for k in keywords if not set(plan) & set(_keyword_tokens(k))]
            if any(_keyword_found(tokens, k, self._team_words) for k in others):
                return True
            if before and any(before[0] in _keyword_tokens(k) for k in others):
                return True
            if before and before[0] in _WHICH_WORDS:
                return True
        return False

    def _through_a_missing_channel(self, text: str) -> bool:
        """``text`` asks for a way of reaching outside that no agent of the team
        is described by (:data:`_CHANNELS`; an e-mail only after a sending
        word), quoted text and names ("twitter_token") aside: "Schick dem Gast
        eine SMS", "print it on the office printer", "send an email to
        ops@example.com". One that pays "for a taxi" names it as a thing, not
        as the work."""
        asked_for = _NAME_LIKE.sub(" ", _QUOTED_SPAN.sub(" ", instruction_of(text)))
        tokens = _tokens(asked_for)
        at = next((i for i, t in enumerate(tokens) if t not in _COURTESIES), len(tokens))
        verb, after = [*tokens, None, None][at : at + 2]
        # "call it 'notes'", "call the new skill 'resize'": a name, not a ring.
        naming = after in _NAMED_THING or bool(
            _QUOTED_SPAN.search(text) or _SINGLE_QUOTED.search(text)
        )
        if (
            verb in _CALLING_WORDS
            and not naming
            and not self._works_by(verb)
            and not structures_in(text)
        ):
            return True  # "Phone the record office and book me a seat"
        for i, token in enumerate(tokens):
            before = tokens[max(0, i - _SENT_WITHIN) : i]
            if token in _CHANNELS:
                asked = not _FOR_WORDS.intersection(before[-2:])
            elif token in _MAIL_WORDS:
                # "send an email to …", or the word as the verb: "Email my
                # family that the internet will be off".
                asked = any(word in _SENDING_WORDS for word in before) or (
                    i == at and len(tokens) > i + 1 and tokens[i + 1] in _ADDRESSEES
                )
            else:
                continue
            if asked and not self._names_a_channel_it_has(token):
                return True
        for phrase in _CHANNEL_PHRASES:
            n = len(phrase)
            said = any(tuple(tokens[i : i + n]) == phrase for i in range(len(tokens) - n + 1))
            if said and not self._describes(" ".join(phrase)):
                return True
        return False

    def _works_by(self, word: str) -> bool:
        """Some agent's keywords or tools' names have ``word`` (a team with a
        phone desk has "call" among them; "se llama" in an example does not count)."""
        return any(
            word in _keyword_tokens(k) for p in self.profiles for k in p.lexical_keywords
        ) or any(word in p.terms for p in self.profiles)

    def _describes(self, phrase: str) -> bool:
        """Some agent of the team is described by ``phrase`` (its texts,
        keywords or tools), word for word."""
        return any(
            phrase in text.lower()
            for p in self.profiles
            for text in (*p.phrases, *p.lexical_keywords)
        )

    def _asks_for_a_plan(self, parts: Sequence[str]) -> bool:
        """Several steps whose first one opens by asking for the planning agent's
        work ("plan the release: write the changelog, then tag it")."""
        return len(parts) > 1 and self._opens_with_plan(parts[0])

    def _owns_clause(self, ranked: list[Candidate]) -> bool:
        """The best agent of a clause clearly owns it: it leads, it is not the
        planning agent, and its words or structure say so (or its meaning leads by far)."""
        best, second = ranked[0], ranked[1] if len(ranked) > 1 else None
        lead = best.score - (second.score if second else 0.0)
        if best.score < _CLAUSE_MIN or lead < _CLAUSE_LEAD:
            return False
        if any(p.plans and p.name == best.name for p in self.profiles):
            return False
        return best.lexical > 0 or best.structure > 0 or lead >= _CLAUSE_CLEAR_LEAD

    @staticmethod
    def confidence(ranked: Sequence[Candidate], question: float) -> float:
        """How far the best agent stands out: its lead over the runner-up as a
        share of its lead over the field's average.

        The field is every agent plus the orchestrator answering itself (scored
        by the request's closeness to a general question). 1.0 means the
        runner-up is no better than the average; 0.0, a tie. Being relative,
        it holds for requests whose similarities are all low (other languages,
        typos) as well as for plain ones.
        """
        best = ranked[0].score
        field = [c.score for c in ranked[1:]] + [question]
        runner_up = max(field)
        spread = best - (best + sum(field)) / (len(field) + 1)
        if spread <= 0:
            return 0.0
        return round(max(0.0, best - runner_up) / spread, 4)

    @staticmethod
    def lexical_confidence(ranked: Sequence[Candidate]) -> float:
        """Without an encoder: the best agent's lead over the runner-up as a
        share of the most that words and structure can score. One keyword
        makes an agent stand out among agents with none, so the relative
        :meth:`confidence` would overrate it; this asks for a lot of evidence."""
        lead = ranked[0].score - (ranked[1].score if len(ranked) > 1 else 0.0)
        return round(max(0.0, lead) / (LEXICAL_WEIGHT + STRUCTURE_WEIGHT), 4)

    def _judge(
        self,
        text: str,
        ranked: list[Candidate],
        greeting: float,
        question: float,
        compound: bool,
        *,
        steps_elsewhere: bool = False,
        stranger: Callable[[], bool] = lambda: False,
        refused: tuple[float, float] = (0.0, 0.0),
        own_refusal: Mapping[str, float] | None = None,
        as_written: Candidate | None = None,
    ) -> RouteDecision:
        """The decision for ``text`` from its ranked candidates and the
        request's closeness to a greeting, a general question and (``refused``)
        the team's refusals and the work no team does. ``as_written``: the best
        candidate by the words as written, where other words were read as
        keywords in another language."""
        if not compound and self._planners and not self._opens_with_plan(text):
            # The planning agent orders steps; a request of one step that does
            # not ask for a plan is some other member's, whatever its words.
            ranked = [c for c in ranked if c.name not in self._planners] + [
                c for c in ranked if c.name in self._planners
            ]
        best = ranked[0]
        said = as_written or best
        shape = is_greeting_shaped(text)
        if shape and not said.keyword and said.structure == 0 and greeting >= said.semantic:
            return RouteDecision("greeting", None, 1.0, tuple(ranked))
        if not compound and self._through_a_missing_channel(text):
            # An SMS, a printer, a taxi: nobody's work, whatever subject it names.
            return RouteDecision("defer", None, 0.0, tuple(ranked), nobody=True)
        by_author = refused[0]
        if (
            not compound
            and best.structure == 0
            and by_author >= max(c.nearest for c in ranked) + REFUSED_MARGIN
        ):
            # What the team's author wrote that it cannot do, and no teammate
            # is described by: nobody's work.
            return RouteDecision("defer", None, 0.0, tuple(ranked), nobody=True)
        own = (own_refusal or {}).get(best.name, 0.0)
        if not compound and best.structure == 0 and own >= best.nearest + NOBODY_SLACK:
            # Closer to what the best agent's own author says it cannot do (and
            # no teammate is described by) than to anything it is described
            # by: "a bank loan to finance the heat pump" to the billing desk
            # that "cannot arrange loans or financing".
            return RouteDecision("defer", None, 0.0, tuple(ranked), nobody=True)
        planner = next((p.name for p in self.profiles if p.plans), None)
        if compound and planner is not None:
            # Steps for different agents: the planning agent orders them.
            plan_first = tuple(sorted(ranked, key=lambda c: c.name != planner))
            return RouteDecision("route", planner, 1.0, plan_first, compound=True)
        structure = any(c.structure for c in ranked)
        closest = max(ranked, key=lambda c: c.nearest)
        closer = question - closest.nearest
        margin = DIRECT_MARGIN + self._role_only_distance(closest)
        # One that names an agent's keyword about the user's own things ("how
        # much is outstandng on my acount?") asks the team, however its
        # misspelt words read.
        theirs = best.keyword and _names_their_own(text)
        if self.encoder is not None and not structure and closer >= margin and not theirs:
            return RouteDecision("direct", None, round(closer, 4), tuple(ranked))
        confidence = (
            self.confidence(ranked, question - self._role_only_distance(best))
            if self.encoder is not None
            else self.lexical_confidence(ranked)
        )
        if best.structure == 0 and best.lexical == 0 and question > best.nearest:
            # Closer to a general question than to any agent: no agent guessed.
            return RouteDecision("defer", None, confidence, tuple(ranked), compound=compound)
        # A request that names the agent's work in its author's own words, and
        # no other agent's, needs less of a lead: the words agree with the meaning.
        alone = best.named and not any(c.named for c in ranked[1:])
        # The meaning must agree: words or structure alone never carry a route.
        slack = AGREE_SLACK if alone else 0.0
        disagree = (
            self.encoder is not None and best.semantic < max(c.semantic for c in ranked) - slack
        )
        # Meaning alone must come close to the agent, not just lead the others.
        faint = self.encoder is not None and _faint(best)
        # A question about the world names an agent's subject, not its work:
        # the model answers it unless it sees an agent's work in it. One that
        # names the work in the team's own words ("what's the weather in Lyon
        # tomorrow?" to a team with a weather agent) is the team's, unless it
        # asks for an explanation ("what is a knowledge graph?").
        world = best.structure == 0 and is_open_question(text)
        if world and (not best.keyword or asks_for_explanation(text)):
            # Unless its meaning is the agent's work by far more than a
            # question's or small talk's ("what day are bins collected on
            # Orchard Lane?"): then the agent is the model's guess.
            small_talk = max(question, greeting)
            mine = not asks_for_explanation(text) and best.nearest >= small_talk + DIRECT_MARGIN
            guess = best.name if mine else None
            return RouteDecision("defer", guess, confidence, tuple(ranked), compound=compound)
        if (
            faint
            and best.nearest < self._nobody_below(best.name)
            and max(refused) >= best.nearest - NOBODY_SLACK
            and not compound
        ):
            # Meaning alone, far from every agent and about as close to work
            # nobody on the team does: nobody's, as far as the team's own
            # words say. The model decides, told so.
            return RouteDecision("defer", None, confidence, tuple(ranked), nobody=True)
        bar = NAMED_SHARE if alone else 1.0
        # An agent described only by its role and tools, and no example request,
        # is too far from any request for meaning alone to single it out.
        unsure = (
            not best.keyword and best.structure == 0 and not self._profile(best.name).has_examples
        )
        # An agent known only by its role, asked for work in a verb nobody on
        # the team is described by ("send an SMS to all members"): its
        # subject is named, not its work.
        unsure = unsure or (
            best.structure == 0 and not self._profile(best.name).has_examples and stranger()
        )
        if disagree or faint or unsure or steps_elsewhere or confidence < self.threshold * bar:
            return RouteDecision(
                "defer", best.name, confidence, tuple(ranked), compound=compound, bar=bar
            )
        return RouteDecision(
            "route", best.name, confidence, tuple(ranked), compound=compound, bar=bar
        )
