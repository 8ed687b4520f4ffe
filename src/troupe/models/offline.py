"""The ``offline`` model: a deterministic, rule-based stand-in for an LLM.

It is not a language model. It reads the same requests a real model gets and
answers by rules, so the whole pipeline (routing, transfers, tool calls,
results) runs with no API key, in tests, demos and benchmarks. What it knows
about the team (each member's keywords and description) is given to it as
data by the tree (see :meth:`OfflineModel.serving`), never parsed back out
of the instructions:

* as orchestrator it scores the team's keywords against the request
  and transfers to the best agent, or answers greetings and unmatched
  questions directly;
* as a specialist it picks the tool whose name and description best match,
  fills the arguments from the request (paths, quoted or back-ticked
  commands, URLs), and reports the tool's result;
* when none of its tools fits it answers in the ``[REJECT]`` format, naming
  the team member whose keywords fit;
* asked for a JSON choice (``router.agent_schema``), the orchestrator names
  the agent it would transfer to, or answers, in that JSON;
* as planner holding its team as tools it derives the steps from the request
  and the team's keywords, hands each step to its agent in order (with the
  previous step's result), then reports every step's outcome; asked for a
  plan only, it returns the numbered steps, each with an agent.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Iterable, Sequence
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from typing_extensions import override

from .. import prompts
from .._adk_compat import is_relayed_context, relayed_tool_results
from ..prompts import TRANSFER_ARG, TRANSFER_TOOL
from ..routing.agent_schema import choice_reply, offered_agents
from ..routing.router import (
    AND_THEN,
    BARE_PRONOUN,
    described_shapes,
    is_general_explanation,
    is_open_question,
    shapes_in,
    split_outside_quotes,
    tells_what_happened,
)
from ..tool_results import readable_result
from ._offline_args import (
    argument_evidence,
    fill_arguments,
    find_path,
    find_url,
    named_value,
    shaped_value,
    values_an_error_lists,
    values_an_error_shows,
    without_places,
)
from ._request import system_text, user_texts
from ._text import contains_phrase, phrase_position, stem, stems, words
from .team_view import TeamRoute

OFFLINE_MODEL_NAME = "offline"
OFFLINE_LABEL = "offline (rule-based stand-in, not a language model)"
_RESULT_LIMIT = 2000
_GREETINGS = (
    "hello",
    "hi",
    "hey",
    "good morning",
    "good afternoon",
    "good evening",
    "howdy",
    "greetings",
    "thanks",
    "thank you",
    "bye",
    "goodbye",
)
_QUOTE_LIMIT = 160
"""The longest quote of a request that a refusal repeats."""
_CONDITION = re.compile(r"^(?:if|when|once|unless|in case|as soon as)\b", re.I)
"""A clause that is the condition of the step after it ("if it's down, ...")."""
_SYNONYMS = {
    "look": "search",
    "find": "search",
    "lookup": "search",
    "fetch": "open",
    "save": "write",
    "check": "recall verify",
    "did": "recall",
    "said": "recall",
    "told": "recall",
    # The same verbs in German, Spanish, French and Portuguese.
    "lies": "read",
    "lese": "read",
    "lee": "read",
    "lis": "read",
    "lê": "read",
    "leia": "read",
    "busca": "search",
    "suche": "search",
    "cherche": "search",
    "procura": "search",
    "pesquisa": "search",
    "öffne": "open",
    "abre": "open",
    "ábrela": "open",
    "ouvre": "open",
    "verschlüssele": "encrypt",
    "cifra": "encrypt",
    "chiffre": "encrypt",
    "criptografa": "encrypt",
    "entschlüssele": "decrypt",
    "descifra": "decrypt",
    "déchiffre": "decrypt",
    "descriptografa": "decrypt",
    "captura": "screenshot",
    "salva": "save write",
    "guarda": "save write",
    "speichere": "save write",
    "enregistre": "save write",
}
"""Request verbs and the words a tool's name or description uses for them."""
_SYNONYM_STEMS = {stem(verb): word for verb, word in _SYNONYMS.items()}
_DANGLING = re.compile(r"\s+(?:and|then)$", re.I)
_SEQUENCE_WORDS = (
    r"and\s+then|then|after\s+that|afterwards|und\s+dann|und\s+danach|,\s*dann|,\s*danach"
    r"|y\s+luego|y\s+después|luego|después|et\s+puis|et\s+ensuite|puis|ensuite"
    r"|e\s+depois|e\s+em\s+seguida|depois|em\s+seguida"
    r"|e\s+poi|poi|dopodiché|,\s*daarna|,\s*vervolgens"
)
"""Words that put one step after another, in the languages troupe is measured on.
German and Dutch put "dann", "danach" and "daarna" after the verb too ("und
speichere danach ...", "en schrijf daarna ..."): alone they split only after
a comma, and the "and" before that verb splits (see ``AND_THEN``)."""
_ADDS_A_STEP = (
    r"(?:and|also|then|und|dann|außerdem|ausserdem|et|puis|ensuite|aussi|y|luego|además"
    rf"|e|depois|também|poi|inoltre|{_SEQUENCE_WORDS}),?\s"
)
"""Words that open a sentence after a question with one more step ("What's
happening with claim CLM-46244? And add a note to it", "...? After that,
quote me ..."); a sentence after a question that opens otherwise ("I'm
customer C-35129") tells it more."""
_SPLIT_STEPS = re.compile(
    rf"\s*(?:;|,?\s+(?:{_SEQUENCE_WORDS})\s+|,?\s+{AND_THEN}|\.\s+|\s?[?!]\s+(?={_ADDS_A_STEP}))\s*",
    re.I,
)
# "plan: ..." or "plan the steps to ..." introduces the goal; a colon inside a
# URL ("https://") does not.
_GOAL_COLON = re.compile(r":(?!//|\d)\s*")
_PLAN_LEAD = re.compile(
    r"^(?:please\s+)?(?:make\s+a\s+|write\s+a\s+)?plan\b(?:\s+(?:the|some))?"
    r"(?:\s+steps)?(?:\s+(?:to|for|how\s+to))?\s+",
    re.I,
)


def _usage(request: LlmRequest, reply: str) -> types.GenerateContentResponseUsageMetadata:
    # Four characters a token is the usual rule of thumb; the offline model has
    # no tokenizer, and its counts only need to be stable and comparable.
    prompt_chars = len(str(request.config.system_instruction or ""))
    for content in request.contents:
        for part in content.parts or []:
            prompt_chars += len(part.text or "")
    prompt = max(1, prompt_chars // 4)
    out = max(1, len(reply) // 4)
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt, candidates_token_count=out, total_token_count=prompt + out
    )


def _declarations(request: LlmRequest) -> list[types.FunctionDeclaration]:
    decls: list[types.FunctionDeclaration] = []
    for tool in request.config.tools or []:
        decls.extend(getattr(tool, "function_declarations", None) or [])
    return decls


def _schema(decl: types.FunctionDeclaration) -> dict[str, Any]:
    if decl.parameters_json_schema:
        return dict(decl.parameters_json_schema)
    if decl.parameters is not None:
        dumped = decl.parameters.model_dump(exclude_none=True, mode="json")
        props = {
            k: {**v, "type": str(v.get("type", "")).lower()}
            for k, v in (dumped.get("properties") or {}).items()
        }
        return {"properties": props, "required": dumped.get("required") or []}
    return {}


def _is_user_request(text: str) -> bool:
    return not is_relayed_context(text)


def latest_request(request: LlmRequest) -> str:
    """The newest thing the user asked, skipping corrections and relayed context."""
    fallback = ""
    for content in reversed(request.contents):
        if content.role != "user":
            continue
        for part in content.parts or []:
            text = (part.text or "").strip()
            if not text or not _is_user_request(text):
                continue
            if prompts.is_system_note(text):
                fallback = fallback or text
                continue
            return text
    return fallback


def _last_function_responses(request: LlmRequest) -> list[types.FunctionResponse]:
    if not request.contents:
        return []
    last = request.contents[-1]
    return [p.function_response for p in last.parts or [] if p.function_response]


def _latest_note(request: LlmRequest) -> str | None:
    """The newest user-role text when it is a troupe system note."""
    for text in reversed(user_texts(request)):
        if not _is_user_request(text):
            continue
        return text if prompts.is_system_note(text) else None
    return None


def _excluded_agents(request: LlmRequest) -> set[str]:
    """Agents a note or a failed transfer said not to use again."""
    texts = [t for t in user_texts(request) if prompts.is_system_note(t)][-1:]
    for response in _last_function_responses(request):
        texts.append(str((response.response or {}).get("error", "")))
    excluded: set[str] = set()
    for text in texts:
        excluded |= prompts.declined_agents(text)
    return excluded


def _last_result_in_history(request: LlmRequest) -> str:
    results = [found for text in user_texts(request) for found in relayed_tool_results(text)]
    if not results:
        return "No result was produced for this request."
    tool, result = results[-1]
    return f"Result of {tool}:\n{result.strip()}"


def _greeting_reply(text: str) -> str:
    lowered = " ".join(words(text))
    if lowered.startswith(("thanks", "thank you")):
        return "You're welcome! (troupe's offline model, a rule-based stand-in)"
    if lowered.startswith(("bye", "goodbye")):
        return "Goodbye! (troupe's offline model, a rule-based stand-in)"
    return (
        "Hello! I am troupe's offline model, a rule-based stand-in: ask me to list "
        "files, run a command or read a page, and I will hand it to the right agent."
    )


def _score(text: str, route: TeamRoute) -> tuple[int, int]:
    """(strength, -position of the first matching keyword) of ``route`` for ``text``.

    Multi-word keywords are stronger evidence than single words, a request
    that opens with a keyword ("plan ...", "run ...") names its verb, and
    keywords that stem alike ("http", "https") count once. Between equally
    strong routes, the one named earlier in the request wins.
    """
    seen: set[tuple[str, ...]] = set()
    score, first_at = 0, 10**6
    # A word inside an address or a path ("website/shop.html") names no work.
    said = without_places(text)
    for keyword in route.keywords:
        key = tuple(stem(w) for w in words(keyword))
        at = phrase_position(said, keyword)
        if key not in seen and at is not None:
            seen.add(key)
            score += len(key) * 2
            first_at = min(first_at, at)
    first = words(said)[:1]
    if first and any(contains_phrase(first[0], k) for k in route.keywords if " " not in k):
        score += 3
    # An address or a file path in the request is an instance of the keyword
    # that names its kind ("url", "file"), written or not. An address names
    # where the work happens ("look up the prices on https://..."): it weighs
    # more than any one phrase.
    for kind, found, weight in (("url", find_url, 5), ("file", find_path, 2)):
        if kind in route.keywords and found(text) is not None:
            score += weight
            first_at = min(first_at, 10**5)
    return score, -first_at


def best_route(text: str, routes: Iterable[TeamRoute]) -> TeamRoute | None:
    """The route whose keywords match ``text`` best (see :func:`_score`)."""
    best: TeamRoute | None = None
    best_score = (0, 0)
    for route in routes:
        score = _score(text, route)
        if score[0] > 0 and (best is None or score > best_score):
            best, best_score = route, score
    return best


def _described_route(text: str, team: Sequence[TeamRoute]) -> TeamRoute | None:
    """The team member whose description and capabilities share the most
    words with ``text``."""
    asked = {w for w in stems(text) if len(w) > 3}
    overlap = [(len(asked & stems(" ".join((r.text, *r.abilities)))), r) for r in team]
    count, route = max(overlap, key=lambda pair: pair[0], default=(0, None))
    return route if count else None


def _shaped_route(text: str, team: Sequence[TeamRoute]) -> TeamRoute | None:
    """The one team member whose description gives the form of an identifier
    in ``text`` ("a booking number (BD-#####)" for "BD-51873"), or None when
    no member, or more than one, takes it."""
    found = shapes_in(text)
    if not found:
        return None
    takers = [r for r in team if found & described_shapes(r.text)]
    return takers[0] if len(takers) == 1 else None


def _opens_with(step: str, route: TeamRoute) -> bool:
    """``step`` opens with one of ``route``'s keywords: its verb is that member's work."""
    return any(phrase_position(step, k) == 0 for k in route.keywords)


def _does(route: TeamRoute, step: str) -> bool:
    """``step``'s verb (its first word) is one ``route``'s description names."""
    first = words(step)[:1]
    return bool(first) and stem(first[0]) in stems(route.text)


def _owner_after(
    step: str, before: TeamRoute | None, team: Sequence[TeamRoute]
) -> TeamRoute | None:
    """The member whose keywords name ``step``, when ``before`` did the step
    before it. A later step mentions what the earlier one made ("hash the
    file, then post the checksum on our page"): the earlier member's words
    there are its product, and another member named in the step does the
    work, unless the step's verb is the earlier member's: its keyword, or a
    verb its description names on a thing it names ("read the page")."""
    route = best_route(step, team)
    if before is None or route is None:
        return route
    if _opens_with(step, before) or (_does(before, step) and _score(step, before)[0] > 0):
        return before  # "open the page, then read the page": its own work
    if route is before:
        return best_route(step, [r for r in team if r is not before]) or before
    return route


def _bare_step_owner(
    step: str, before: TeamRoute | None, team: Sequence[TeamRoute]
) -> TeamRoute | None:
    """The member for a step that only does something to what came before
    ("encrypt it", "read it"): the one whose keyword is its verb, unless the
    member before does that too ("open the page and read it"), or None."""
    route = best_route(step, team)
    if route is None or not _opens_with(step, route):
        return None
    if before is not None and (_does(before, step) or _opens_with(step, before)):
        return before
    return route


def _step_owners(
    steps: Sequence[str], goal: str, team: Sequence[TeamRoute]
) -> list[tuple[str, str]]:
    """Each step with the team member that should do it: by its keywords (see
    :func:`_owner_after`), else by its description; a step that names neither
    ("tag it") continues the step before it (or the next one that has an
    owner). Only team members are named, never the orchestrator, which does
    no work itself."""
    fallback = best_route(goal, team) or _described_route(goal, team) or team[0]
    owners: list[TeamRoute] = []
    for i, step in enumerate(steps):
        before = owners[-1] if owners else None
        if BARE_PRONOUN.match(step):
            route = _bare_step_owner(step, before, team)
        else:
            route = (
                _owner_after(step, before, team)
                or _shaped_route(step, team)
                or _described_route(step, team)
            )
        if route is None:
            later = (best_route(s, team) or _described_route(s, team) for s in steps[i + 1 :])
            route = before or next((r for r in later if r is not None), None) or fallback
        owners.append(route)
    return [(step, route.name) for step, route in zip(steps, owners, strict=True)]


def _ask_for(tool: str, missing: Sequence[str]) -> str:
    """What to say when the request does not write out a required argument."""
    said = ", ".join(f"`{name}`" for name in missing)
    return (
        f"To run {tool} I need {said}, and the request does not say it in so many "
        'words: give it as a quoted value or after its name ("named DB_PASS"). '
        "(offline rule-based model)"
    )


def _is_greeting(text: str) -> bool:
    lowered = " ".join(words(text))
    return any(lowered == g or lowered.startswith(g + " ") for g in _GREETINGS)


def _name_hits(request_stems: set[str], name_stems: set[str]) -> int:
    """Request words that are a tool-name word or extend one ('execute' -> exec).
    A word of two letters names no work: "look up" is not ``set_up_payment_plan``."""
    return sum(
        1
        for word in request_stems
        if len(word) > 2
        and (word in name_stems or any(len(n) >= 4 and word.startswith(n) for n in name_stems))
    )


_PLAN_ONLY = re.compile(
    r"\b(?:plan only|only (?:a |the )?plan|just (?:give me |make |write )?(?:a |the )?plan|"
    r"(?:do not|don't) (?:run|do|execute|carry out))\b",
    re.I,
)
_PLAN_COLON = re.compile(r"^(?:please\s+)?(?:make\s+a\s+|write\s+a\s+)?plan\s*:", re.I)
_PREVIOUS_STEP = "\n\nResult of the previous step:\n"
_STEP_COMMA = re.compile(
    r"\s*(?:,(?!\d)\s*(?:(?:and|und|y|et|e)\s+)?|\s+(?:and|und|y|et|e)\s+)\s*",
    re.I,
)
"""'and' and commas between steps (also in German, Spanish, French,
Portuguese); never the comma inside a number ("1,000 points")."""
_PLAN_GOAL = re.compile(r"\b(?:plan|steps|goal|roadmap|milestones)\b", re.I)
"""Words before a colon that introduce the goal after it ("plan: ...")."""


_PRONOUN = re.compile(r"\b(?:it|them)\b", re.I)
_REFERENT_LEAD = "it: "
_STORY_LEAD = "told: "
_REFERENT_NOTE = re.compile(r"\s*\((?:it|told): ([^()]*)\)")
"""What a plan step adds to say what its "it" stands for, or the story told
before it: they fill its arguments, but its own words choose its tool and
alone may ask for an effect that cannot be taken back."""
_OBJECT = re.compile(
    r"^\s*\w+\s+((?:the|my|our|this|that)\s+[\w-]+(?:\s+[\w-]+){0,2}?)"
    r"(?=\s+(?:in|from|of|to|into|with|as|on|at|and)\b|\s*$)",
    re.I,
)


def _referent(step: str, earlier: Sequence[str]) -> str | None:
    """What 'it' in ``step`` stands for: the object of the nearest earlier step
    that names one ('encrypt the database password in it', then 'store it')."""
    if not _PRONOUN.search(step):
        return None
    for text in reversed(earlier):
        if (match := _OBJECT.match(text)) is not None:
            return match.group(1)
    return None


def _asks_plan_only(text: str) -> bool:
    """'just give me a plan ...', 'plan: ...', 'plan the steps to ...': the user
    asked for a plan to review, not for the work."""
    return bool(_PLAN_ONLY.search(text) or _PLAN_LEAD.match(text) or _PLAN_COLON.match(text))


def _plan(text: str, team: Sequence[TeamRoute]) -> list[tuple[str, str]]:
    """The request's steps, each with the team member that should do it."""
    if not team:
        return []
    parts = _GOAL_COLON.split(text, maxsplit=1)
    introduced = len(parts) == 2 and parts[1].strip() and _PLAN_GOAL.search(parts[0])
    goal = parts[1] if introduced else _PLAN_LEAD.sub("", text)
    goal, shared = _shared_detail(goal)
    steps = [c for c in map(_clause, split_outside_quotes(_SPLIT_STEPS, goal)) if c]
    if len(steps) == 1:
        steps = [c for c in map(_clause, split_outside_quotes(_STEP_COMMA, goal)) if c]
    else:
        steps = [part for step in steps for part in _split_if_shared(step, team)]
    steps = _with_details(_with_conditions(steps))
    if shared:
        steps = [f"{step} ({shared})" for step in steps]
    steps, stories = _without_stories(steps)
    owned = _step_owners(steps, goal, team)
    # The story goes with the steps it is told for, after their owners are chosen.
    return [(_with_story(s, stories.get(i)), o) for i, (s, o) in enumerate(owned)]


def _with_story(step: str, story: str | None) -> str:
    """``step`` with the story told before it as a note (see :data:`_REFERENT_NOTE`)."""
    return f"{step} ({_STORY_LEAD}{story})" if story else step


def _without_stories(steps: Sequence[str]) -> tuple[list[str], dict[int, str]]:
    """``steps`` without those that only tell what happened ("My car WX21 ZPA
    was towed. Find out which pound has it, then …"), and, by the index of
    each step after them, the story told so far: it is what those steps are
    about, never a step of its own, and the stand-in runs no tool for it."""
    kept: list[str] = []
    stories: dict[int, str] = {}
    told: list[str] = []
    for i, step in enumerate(steps):
        if i < len(steps) - 1 and tells_what_happened(step):
            told.append(step)
            continue
        if told:
            stories[len(kept)] = "; ".join(told)
        kept.append(step)
    return kept, stories


_LAST_SENTENCE = re.compile(r"^(.*[.?!])\s+([^.?!]+?)[.?!]?\s*$", re.S)


def _shared_detail(goal: str) -> tuple[str, str]:
    """``goal`` without a last sentence that is only a detail of the whole
    request ("… from 10:00 to 11:00. M-2041"), and that detail: every step
    is about it (the member a guest and a room are booked for)."""
    match = _LAST_SENTENCE.match(goal)
    if match is None or not _is_detail(match.group(2)):
        return goal, ""
    return match.group(1), match.group(2).strip()


def _is_detail(part: str) -> bool:
    """One word at most and a number or an e-mail address: "born 1979-10-30",
    "M-2041", "lucia@example.com". A word with a hyphen or an apostrophe is a
    word ("inscrivez-moi à l'événement EV-333" is a step)."""
    named = [
        w
        for w in part.split()
        if any(c.isalpha() for c in w) and not any(c.isdigit() or c == "@" for c in w)
    ]
    return len(named) <= 1 and any(c.isdigit() or c == "@" for c in part)


def _split_if_shared(step: str, team: Sequence[TeamRoute]) -> list[str]:
    """``step`` split at its 'and's and commas when its parts name different
    members ("hash the dump and record the hash in our wiki"), else whole."""
    parts = [c for c in map(_clause, split_outside_quotes(_STEP_COMMA, step)) if c]
    owners: list[TeamRoute] = []
    for part in parts:
        route = _owner_after(part, owners[-1] if owners else None, team)
        owners += [route] if route is not None else []
    return parts if len({r.name for r in owners}) > 1 else [step]


_LEADING_SEQUENCE = re.compile(rf"^(?:{_SEQUENCE_WORDS}),?\s+", re.I)
"""A sequence word that opens a step's sentence ("After that, quote me ...")."""


def _clause(text: str) -> str:
    """A step's words without the punctuation, the dangling 'and' and the
    opening sequence word around them."""
    return _LEADING_SEQUENCE.sub("", _DANGLING.sub("", text.strip(" .,")).strip(" .,"))


def _with_conditions(steps: Sequence[str]) -> list[str]:
    """Join each condition clause to the step it guards: one step, one owner."""
    out: list[str] = []
    pending = ""
    for i, step in enumerate(steps):
        if _CONDITION.match(step) and i + 1 < len(steps):
            pending += f"{step}, "
            continue
        out.append(pending + step)
        pending = ""
    return out


def _with_details(steps: Sequence[str]) -> list[str]:
    """Join a detail written between commas ("Pieter Jansen, born 1979-10-30,
    and ..."): one word and a number, to the step before it."""
    out: list[str] = []
    for step in steps:
        if out and _is_detail(step):
            out[-1] = f"{out[-1]}, {step}"
        else:
            out.append(step)
    return out


def _plan_text(owners: Sequence[tuple[str, str]]) -> str:
    lines = ["Plan for review:"]
    lines += [f"{i}. {step} -> {owner}" for i, (step, owner) in enumerate(owners, 1)]
    return "\n".join(lines)


_DESTRUCTIVE = (
    "cancel", "delete", "remove", "refund", "overwrite", "drop", "destroy", "revoke",
    "erase", "purge", "wipe", "close", "terminate", "unsubscribe", "deactivate",
)  # fmt: skip
"""Words in a tool's name that mark an effect that cannot be taken back."""


_CHANGES = (
    "set", "store", "save", "write", "create", "add", "update", "edit", "put", "append",
    "move", "rename", "book", "send", "post", "pay", "transfer", "change", "redeem", "issue",
    "new", "register", "renew", "extend", "join", "reserve", "assign", "submit", "enrol",
    "enroll", "upgrade",
)  # fmt: skip
"""Words in a tool's name that mark a change to something kept: asked a
question ("show me which contracts I have"), the stand-in never calls one
(``new_contract`` would take a contract out)."""


def _may_call(tool: str, request: str) -> bool:
    """Whether the stand-in may call ``tool`` for ``request``. A tool whose name
    says it cancels, deletes or refunds is called only when the request asks
    for that very thing in so many words, and never to answer a question
    ("where is my order 10422?" does not cancel it), nor to what is told as
    done ("my booking got cancelled by mistake"); a question about the world
    or the user's things ("which secrets are saved?") changes nothing."""
    parts = set(words(tool.replace("_", " ")))
    effects = [w for w in _DESTRUCTIVE if w in parts]
    asked = words(request)
    if effects:
        if "?" in request or is_open_question(request) or _asks_what(request):
            return False
        return any(
            w.startswith(effect) and not w.endswith("ed") for effect in effects for w in asked
        )
    return not (parts & set(_CHANGES) and _asks_what(request))


_EFFECTS = frozenset((*_CHANGES, *_DESTRUCTIVE))
"""Every word of a tool's name that marks an effect (see :func:`_reads`)."""


def _reads(tool: str) -> bool:
    """``tool``'s name says no change: no word of :data:`_CHANGES` or
    :data:`_DESTRUCTIVE` ("lookup_order", not "change_order_item")."""
    return not _EFFECTS.intersection(words(tool.replace("_", " ")))


def _says_name(request: str, tool: str) -> bool:
    """``request`` says ``tool``'s name, or its name after its prefix, as a
    phrase of two words or more ("check in" for ``lend_check_in``)."""
    parts = tool.lower().split("_")
    return any(contains_phrase(request, " ".join(parts[i:])) for i in range(len(parts) - 1))


def _asks_what(request: str) -> bool:
    """A question that asks for something, opening with a question word
    ("which secrets are saved?") or asking to be shown or told one ("show me
    what card EL-248193 owes", "show me my membership details"), not a
    request put as one ("can you save ...?")."""
    lead = words(request)[:4]
    if lead[:1] == ["show"] or lead[:2] == ["tell", "me"]:
        return True  # "Show me my membership details (M-2115)": to be read, not changed
    if lead[:1] and lead[0] in _SHOW_WORDS:
        lead = lead[2:] if lead[1:2] == ["me"] else lead[1:]
    return bool(lead) and lead[0] in _QUESTION_WORDS


_SHOW_WORDS = frozenset(("show", "tell", "give"))


_QUESTION_WORDS = frozenset(
    ("what", "whats", "which", "where", "when", "who", "whose", "how", "why", "is", "are", "do",
     "does", "did", "was", "were", "has", "have")
)  # fmt: skip


def _own_steps(text: str) -> list[str]:
    """``text``'s ordered steps ("read notes.txt, then write ..."), quotes kept
    whole; the story told before them goes with each (:func:`_without_stories`)."""
    steps, stories = _without_stories(
        [c for c in map(_clause, split_outside_quotes(_SPLIT_STEPS, text)) if c]
    )
    return [_with_story(s, stories.get(i)) for i, s in enumerate(steps)]


def _turn_results(request: LlmRequest) -> list[types.FunctionResponse]:
    """The tool results this agent got since the user's last message, in order
    (a transfer's is not a tool's), the last one for each call: a call that
    waited for approval is answered twice, first with the request for it."""
    found: list[types.FunctionResponse] = []
    for content in reversed(request.contents):
        if content.role == "user" and any(p.text and p.text.strip() for p in content.parts or []):
            break
        for part in reversed(content.parts or []):
            response = part.function_response
            if response is not None and response.name != TRANSFER_TOOL:
                found.append(response)
    last: dict[str, types.FunctionResponse] = {}
    for index, response in enumerate(reversed(found)):
        last[response.id or str(index)] = response
    return list(last.values())


def _error(response: types.FunctionResponse) -> Any:
    """The error a tool's result carries, or None when it ran without one."""
    payload = response.response
    return (payload.get("error") if isinstance(payload, dict) else None) or None


def _settled(results: list[types.FunctionResponse]) -> list[types.FunctionResponse]:
    """``results`` without a failed call that was tried again (see
    :func:`_corrected_call`): the call that followed it stands for both."""
    return [
        r
        for i, r in enumerate(results)
        if _error(r) is None or not any(later.name == r.name for later in results[i + 1 :])
    ]


def _call_of(request: LlmRequest, response: types.FunctionResponse) -> types.FunctionCall | None:
    """The call ``response`` answers: the one with its id, else the last of its tool."""
    calls = [
        p.function_call
        for content in request.contents
        for p in content.parts or []
        if p.function_call is not None and p.function_call.name == response.name
    ]
    same = [c for c in calls if response.id and c.id == response.id]
    return (same or calls)[-1] if calls else None


def _corrected_call(
    text: str, request: LlmRequest, tools: dict[str, types.FunctionDeclaration]
) -> types.FunctionCall | None:
    """The last call again, once, when its tool refused an argument whose
    accepted values its error lists and the request names one of them
    ("method 'Pay the 17.91 by card' is not one of: bancontact, bank
    transfer, card" -> card), or whose shape its error shows by an example
    the request writes a value in ("learner_id 'practical' is not valid,
    e.g. LR-40317" -> LR-31507): what the stand-in guessed from the
    request's words, the tool's own answer corrects. None otherwise."""
    done = _turn_results(request)
    last = done[-1] if done else None
    error = _error(last) if last is not None else None
    if last is None or not isinstance(error, str) or last.name not in tools:
        return None
    if sum(r.name == last.name for r in done) > 1:
        return None  # tried again once already
    call = _call_of(request, last)
    if call is None or call.name is None:
        return None
    own_words = _REFERENT_NOTE.sub("", text.split(_PREVIOUS_STEP, 1)[0])
    args = dict(call.args or {})
    fixed_any = False
    for name, value in list(args.items()):
        if not isinstance(value, str):
            continue
        listed = values_an_error_lists(error, value)
        # Arguments that took the same words take the values the request names
        # in turn ("von Inchkeel nach Ardmore": from_port, then to_port).
        others = [v for n, v in args.items() if n != name]
        fixed = named_value(listed, own_words, others) or shaped_value(
            values_an_error_shows(error, value), own_words, others
        )
        if fixed is not None and fixed != value:
            args[name] = fixed
            fixed_any = True
    return types.FunctionCall(name=call.name, args=args) if fixed_any else None


def _payload(response: types.FunctionResponse) -> Any:
    payload = response.response or {}
    if isinstance(payload, dict) and set(payload) == {"result"}:
        return payload["result"]
    return payload


def _step_results(request: LlmRequest, team_tools: set[str]) -> list[tuple[str, str]]:
    """(agent, result) of each step already run in this request, in order."""
    found: list[tuple[str, str]] = []
    for content in request.contents:
        for part in content.parts or []:
            response = part.function_response
            if response is None or response.name not in team_tools:
                continue
            payload = _payload(response)
            if _unfinished(payload):
                continue  # called again (see _step_again): the next result is the step's
            found.append((str(response.name), readable_result(payload, _RESULT_LIMIT)))
    return found


def _unfinished(payload: Any) -> bool:
    """A step's result that says it stopped to ask for one more approval."""
    return isinstance(payload, dict) and bool(payload.get("needs_approval"))


def _step_again(request: LlmRequest, team_tools: set[str]) -> types.FunctionCall | None:
    """The last step's call once more, when its result says it stopped for one
    more approval (a step whose call needs a second one): asked again, it asks
    for it, and what already ran does not run again."""
    last = next(
        (
            part.function_response
            for content in reversed(request.contents)
            for part in reversed(content.parts or [])
            if part.function_response is not None and part.function_response.name in team_tools
        ),
        None,
    )
    if last is None or not _unfinished(_payload(last)):
        return None
    call = _call_of(request, last)
    return types.FunctionCall(name=call.name, args=call.args) if call is not None else None


class OfflineModel(BaseLlm):
    """Deterministic rule-based model; see the module docstring.

    It reads its team from data, never from the prompt: :meth:`serving` gives
    each agent of a tree its own view (the agent's name and the team's
    routes), which :func:`troupe.build_agent_tree` does for every agent.
    Unbound, it has no team: it picks and calls tools, or answers.
    """

    model: str = OFFLINE_MODEL_NAME
    agent: str | None = None
    """The agent this view serves (None: not bound to a tree)."""
    team: tuple[TeamRoute, ...] = ()
    """Every specialist of the tree, in the routing table's order."""

    def serving(self, agent: str, team: Sequence[TeamRoute]) -> OfflineModel:
        """This model as ``agent`` of a team whose members are ``team``."""
        return self.model_copy(update={"agent": agent, "team": tuple(team)})

    def _is_root(self) -> bool:
        return bool(self.team) and self.agent not in {r.name for r in self.team}

    def _peers(self) -> list[TeamRoute]:
        return [r for r in self.team if r.name != self.agent]

    def _own_keywords(self) -> tuple[str, ...]:
        return next((r.keywords for r in self.team if r.name == self.agent), ())

    @classmethod
    @override
    def supported_models(cls) -> list[str]:
        return [OFFLINE_MODEL_NAME]

    @override
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        parts = self.decide(llm_request)
        reply_text = " ".join(p.text or "" for p in parts)
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=_usage(llm_request, reply_text),
            turn_complete=True,
        )

    def decide(self, request: LlmRequest) -> list[types.Part]:
        """The parts of the model's reply to ``request``."""
        text = latest_request(request)
        decls = {d.name: d for d in _declarations(request) if d.name}
        # The planner holds its team as tools named after them.
        team_tools = {r.name for r in self._peers()} & set(decls)
        if team_tools:
            return self._run_plan(text, request, team_tools)
        results = _last_function_responses(request)
        failed_transfer = bool(results) and all(r.name == TRANSFER_TOOL for r in results)
        if results and not failed_transfer:
            tools = {n: d for n, d in decls.items() if n != TRANSFER_TOOL}
            if (retry := _corrected_call(text, request, tools)) is not None:
                return [types.Part(function_call=retry)]
            if (step := self._next_step(text, request, tools)) is not None:
                return step
            return [types.Part(text=self._report(_settled(_turn_results(request)) or results))]
        offered = offered_agents(request.config.response_schema)
        if self._is_root() and offered is not None:
            return [types.Part(text=self._choose(text, offered, request))]
        if self._is_root() and TRANSFER_TOOL in decls:
            return self._orchestrate(text, list(self.team), request)
        tools = {n: d for n, d in decls.items() if n != TRANSFER_TOOL}
        if tools:
            # Ordered steps of one request are this agent's one call at a time
            # (see _next_step): the first call is the first step's.
            steps = [] if _PREVIOUS_STEP in text else _own_steps(text)
            return self._act(steps[0] if len(steps) > 1 else text, tools)
        return [types.Part(text=self._reason(text))]

    def _orchestrate(
        self, text: str, routes: list[TeamRoute], request: LlmRequest
    ) -> list[types.Part]:
        note = _latest_note(request)
        if note and (target := prompts.delegate_target(note)):
            call = types.FunctionCall(name=TRANSFER_TOOL, args={TRANSFER_ARG: target})
            return [types.Part(function_call=call)]
        if note and prompts.asks_direct_answer(note):
            return [
                types.Part(
                    text="I could not complete this request: the agents whose "
                    "roles fit it declined it. (offline rule-based model)"
                )
            ]
        if note and prompts.asks_report(note):
            return [types.Part(text=_last_result_in_history(request))]
        excluded = _excluded_agents(request)
        system = system_text(request)
        hinted = prompts.router_candidates(system)
        # Where the router scored the team and saw one step, its reading of
        # the request stands; only a request that asks for a plan goes to the
        # planner then. Where it saw parts that lean to different agents, the
        # stand-in's own reading of the steps decides.
        one_step = (
            bool(hinted)
            and not prompts.router_says_compound(system)
            and not prompts.router_says_steps(system)
        )
        if (planner := self._planner_for(text, excluded, one_step=one_step)) is not None:
            call = types.FunctionCall(name=TRANSFER_TOOL, args={TRANSFER_ARG: planner.name})
            return [types.Part(function_call=call)]
        if hinted is not None:
            # The router already scored the team: follow its best candidate,
            # or, when it names none, answer without one.
            known = {r.name for r in routes} - excluded
            route = next((r for r in routes for n, _ in hinted[:1] if r.name == n), None)
            if route is None or route.name not in known:
                return [types.Part(text=self._no_agent(text))]
        else:
            route = best_route(text, [r for r in routes if r.name not in excluded])
        if route is None:
            return [types.Part(text=self._no_agent(text))]
        call = types.FunctionCall(name=TRANSFER_TOOL, args={TRANSFER_ARG: route.name})
        return [types.Part(function_call=call)]

    def _choose(self, text: str, offered: list[str], request: LlmRequest) -> str:
        """The JSON choice asked for by ``router.agent_schema``: the agent the
        orchestrator would transfer to, if offered, else its own answer."""
        parts = self._orchestrate(text, [r for r in self.team if r.name in offered], request)
        call = parts[0].function_call if parts else None
        target = str((call.args or {}).get(TRANSFER_ARG, "")) if call else ""
        if target in offered:
            return choice_reply(target)
        return choice_reply(None, " ".join(p.text for p in parts if p.text) or self._no_agent(text))

    def _planner_for(
        self, text: str, excluded: set[str], *, one_step: bool = False
    ) -> TeamRoute | None:
        """The team's planner, when ``text`` opens by asking for a plan ("plan:
        ...") or, unless the router saw ``one_step``, has steps for different
        members."""
        planner = next((r for r in self.team if r.plans and r.name not in excluded), None)
        if planner is not None and (_PLAN_LEAD.match(text) or _PLAN_COLON.match(text)):
            return planner
        if planner is None or one_step or _asks_plan_only(text) or is_general_explanation(text):
            return None
        owners = {owner for _, owner in _plan(text, [r for r in self.team if not r.plans])}
        return planner if len(owners) > 1 else None

    def _no_agent(self, text: str) -> str:
        """The answer when no team member takes ``text``: a greeting's reply; for
        a question about the world, that the stand-in knows nothing of it; for
        anything else, that nobody on the team can do it, quoting what was
        asked and saying what the team can do."""
        if _is_greeting(text):
            return _greeting_reply(text)
        if is_open_question(text):
            return (
                "I am troupe's offline model, a rule-based stand-in without general "
                "knowledge, so I cannot answer questions like this one myself. Configure "
                "a real model with --model for open questions."
            )
        abilities = ", ".join(dict.fromkeys(a for r in self.team for a in r.abilities))
        offer = f" The team can help with {abilities}." if abilities else ""
        asked = " ".join(text.split())
        asked = asked if len(asked) <= _QUOTE_LIMIT else asked[: _QUOTE_LIMIT - 1] + "…"
        return (
            f"I cannot do that: nobody on this team has a tool for “{asked}”.{offer} "
            "(troupe's offline model, a rule-based stand-in)"
        )

    def _next_step(
        self, text: str, request: LlmRequest, tools: dict[str, types.FunctionDeclaration]
    ) -> list[types.Part] | None:
        """The call for the next of ``text``'s ordered steps ("read notes.txt, then
        write 'done' to out.txt") when they are all this agent's, the steps
        before it ran without an error, and one remains; else None (report)."""
        if not tools or _PREVIOUS_STEP in text:
            return None  # a plan step is one step: the planner orders the rest
        steps = _own_steps(text)
        done = _settled(_turn_results(request))
        if len(steps) < 2 or len(done) >= len(steps):
            return None
        if any(_error(r) is not None for r in done):
            return None
        previous = readable_result(_payload(done[-1]), _RESULT_LIMIT)
        parts = self._act(f"{steps[len(done)]}{_PREVIOUS_STEP}{previous}", tools)
        return parts if any(p.function_call for p in parts) else None

    def _act(self, text: str, tools: dict[str, types.FunctionDeclaration]) -> list[types.Part]:
        # A plan step's own words pick the agent and the tool; the previous
        # step's result it carries, and what "it" stands for, only fill the
        # arguments.
        own_words = _REFERENT_NOTE.sub("", text.split(_PREVIOUS_STEP, 1)[0])
        if (peer := self._better_peer(own_words)) is not None:
            return [types.Part(text=self._reject_to(peer))]
        request_stems = stems(own_words)
        request_stems |= stems(" ".join(_SYNONYM_STEMS.get(w, "") for w in request_stems))
        request, _, previous = text.partition(_PREVIOUS_STEP)
        request = _REFERENT_NOTE.sub(r" (\1)", request)  # what "it" is fills arguments
        best_name, best_score = None, 0.0
        # A question ("... Can you check on it?") that says no effect in so
        # many words ("cancel my held job" says one; "booking" does not).
        asks_to_read = ("?" in own_words or _asks_what(own_words)) and not _EFFECTS.intersection(
            words(own_words)
        )
        for name, decl in tools.items():
            if not _may_call(name, own_words):
                continue
            name_stems = stems(name.replace("_", " "))
            desc_stems = stems(decl.description or "")
            score: float = 3 * _name_hits(request_stems, name_stems)
            score += len(request_stems & desc_stems)
            if _says_name(own_words, name):
                score += 3  # its name in so many words: "check in", not "check out"
            # The values the step itself writes: an e-mail or an amount in
            # the previous step's result is no sign of what this step does.
            score += argument_evidence(_schema(decl), request, decl.description, previous)
            if score > 0 and _reads(name) and asks_to_read:
                # Between two tools a question fits as well, the one that
                # changes nothing ("check on order 44120": look it up, not
                # change its items).
                score += 0.5
            if score > best_score:
                best_name, best_score = name, score
        if best_name is None:
            if _is_greeting(text) and not self.team:
                return [types.Part(text=_greeting_reply(text))]
            return [types.Part(text=self._reject(own_words))]
        schema = _schema(tools[best_name])
        args = fill_arguments(schema, request, previous or None, tools[best_name].description)
        if missing := [p for p in schema.get("required") or [] if p not in args]:
            # A call without them only fails: say what to write instead.
            return [types.Part(text=_ask_for(best_name, missing))]
        return [types.Part(function_call=types.FunctionCall(name=best_name, args=args))]

    def _better_peer(self, text: str) -> TeamRoute | None:
        """A team member whose keywords fit the request more strongly than this agent's own."""
        own = self._own_keywords()
        peer = best_route(text, self._peers())
        if not own or peer is None:
            return None
        # Stronger evidence only: where a peer's word merely comes first ("add
        # the checksum to the wiki"), the request names this agent's work too.
        mine = _score(text, TeamRoute(name="", keywords=own, text=""))
        return peer if _score(text, peer)[0] > mine[0] else None

    def _reject(self, text: str) -> str:
        target = best_route(text, self._peers())
        if target is None:
            return "I cannot do this with my tools, and no team member clearly fits it."
        return self._reject_to(target)

    @staticmethod
    def _reject_to(target: TeamRoute) -> str:
        return prompts.reject_line(target.name, "it matches their role, not mine.")

    def _reason(self, text: str) -> str:
        team = self._peers()
        if not team:
            return f"(offline model) I have no tools for this request: {text}"
        return _plan_text(_plan(text, team))

    def _run_plan(self, text: str, request: LlmRequest, team_tools: set[str]) -> list[types.Part]:
        """As planner holding its team as tools: one step per call, in order, each
        given the previous step's result; then one answer with every outcome. A
        request for a plan only gets the plan, and nothing runs."""
        team = [r for r in self._peers() if r.name in team_tools]
        steps = _plan(text, team)
        if _asks_plan_only(text) or not steps or self._asks_for_a_plan(text, steps):
            return [types.Part(text=_plan_text(steps))]
        if (again := _step_again(request, team_tools)) is not None:
            return [types.Part(function_call=again)]
        done = _step_results(request, team_tools)
        if len(done) < len(steps):
            step, owner = steps[len(done)]
            referent = _referent(step, [s for s, _ in steps[: len(done)]])
            if referent is not None:
                step = f"{step} ({_REFERENT_LEAD}{referent})"
            ask = step if not done else f"{step}{_PREVIOUS_STEP}{done[-1][1]}"
            call = types.FunctionCall(name=owner, args={"request": ask})
            return [types.Part(function_call=call)]
        lines = ["Done, step by step:"]
        for i, ((step, owner), (_, result)) in enumerate(zip(steps, done, strict=False), 1):
            lines.append(f"{i}. {step} ({owner}): {result}")
        return [types.Part(text="\n".join(lines))]

    def _asks_for_a_plan(self, text: str, steps: Sequence[tuple[str, str]]) -> bool:
        """One goal, no steps to run, in the planner's own words ("break the
        newsletter launch down into steps", "a roadmap for learning Rust"):
        the answer is the plan; handing the goal to one member does not
        make it."""
        own = TeamRoute(name="", keywords=self._own_keywords(), text="")
        return len(steps) == 1 and _score(text, own)[0] > 0

    def _report(self, results: list[types.FunctionResponse]) -> str:
        lines = []
        for result in results:
            payload = result.response or {}
            if isinstance(payload, dict) and payload.get("error"):
                error = readable_result(payload["error"], _RESULT_LIMIT)
                lines.append(f"{result.name} failed: {error}")
                continue
            if isinstance(payload, dict) and set(payload) == {"result"}:
                payload = payload["result"]
            lines.append(f"Result of {result.name}:\n{readable_result(payload, _RESULT_LIMIT)}")
        return "\n\n".join(lines)
