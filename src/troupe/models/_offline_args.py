"""Fill a tool call's arguments from the words of a request."""

from __future__ import annotations

import datetime
import functools
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from ..routing.router import WEB_DOMAINS

_URL = re.compile(r"https?://[^\s'\"`<>)]+")
_BACKTICK = re.compile(r"`([^`]+)`")
_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']+)'")
# A file with an extension (which starts with a letter: "0.002" is a number),
# a path from /, ./, ../ or ~/, or a directory written with a trailing slash
# ("docs/", "src/troupe/"), or a relative path of several parts ("jobs/x/target").
_PATH = re.compile(
    r"(?<![\w/.])((?:\.{1,2}/|/|~/)?[\w.-]+(?:/[\w.-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}"
    r"|(?:\.{1,2}|~)?/[\w./-]*"
    r"|[\w.-]+(?:/[\w.-]+)*/(?![\w-]|\.[\w./])"
    r"|[A-Za-z_.][\w.-]*(?:/[\w.-]+)+(?![\w/]))"
)
_WHOLE = re.compile(r"(?<![\w.,-])\d+(?![\w-]|[.,]\d)")
"""A whole number written on its own: not part of "SYS-54312" or of "2.5"."""
_IDENTIFIER = re.compile(
    r"(?<![\w@.-])#?((?:[A-Za-z]{1,4}-)*[A-Za-z]{0,4}-?\d[\w-]*\d|\d{3,})(?![\w@])"
)
"""An order number, a booking reference, a flight number or a course code
written inline ("order 48213", "HB-204517", "#19385", "LH1172", "SPA-B1-01")."""
_SHORTEST_NUMBER_ID = 3
"""An identifier of digits alone has at least this many ("order 48213");
fewer are a quantity ("reserve to 10 %")."""
_ID_SUFFIXES = ("_id", "id", "_number", "_no", "_ref", "reference", "code")
"""Parameter names that take such an identifier."""

_PATH_PARAMS = {"path", "file", "filename", "file_path", "filepath", "dir", "directory", "folder"}
_COMMAND_PARAMS = {"command", "cmd", "shell_command", "script"}
_URL_PARAMS = {"url", "link", "href", "page"}
_TEXT_PARAMS = {
    "text",
    "content",
    "contents",
    "data",
    "query",
    "message",
    "value",
    "note",
    "fact",
    "body",
    "input",
    "question",
    "topic",
    "description",
    "memory",
}


def quoted(text: str) -> list[str]:
    """Back-ticked or quoted spans of ``text``, in order."""
    spans = [m.group(1) for m in _BACKTICK.finditer(text)]
    spans += [m.group(1) or m.group(2) for m in _QUOTED.finditer(text)]
    return [s for s in spans if s]


_DOMAIN = re.compile(
    r"(?<![\w@/.-])((?:[a-z0-9-]+\.)+(?:" + "|".join(WEB_DOMAINS) + r")"
    r"(?:/[^\s'\"`<>)]*)?)(?![\w-])",
    re.I,
)
"""A web address written without its scheme ("python.org", "status.example.com/x"):
a host ending in one of the router's :data:`~troupe.routing.router.WEB_DOMAINS`,
so that file names ("notes.md", "setup.py") are not taken for one."""


def find_url(text: str) -> str | None:
    """A URL in ``text``: one with its scheme, else a bare web address, given https."""
    match = _URL.search(text)
    if match:
        return match.group(0).rstrip(".,;")
    bare = _DOMAIN.search(text)
    return f"https://{bare.group(1).rstrip('.,;')}" if bare else None


def _is_path(found: str) -> bool:
    """Whether a match of ``_PATH`` names a file or folder: "and/or", "km/h"
    are none, a bare relative path needs a name."""
    named = any(len(part) >= 4 for part in found.split("/"))
    return named or "." in found or found.startswith(("/", "~")) or found.endswith("/")


def _without_urls(text: str) -> str:
    """``text`` with its web addresses, bare domains among them, blanked out."""
    return _DOMAIN.sub(" ", _URL.sub(" ", text))


@functools.lru_cache(maxsize=256)
def find_path(text: str) -> str | None:
    """A file or directory path named in ``text``; '.' when it says 'here'."""
    without_urls = _without_urls(text)
    for span in quoted(without_urls):
        if "/" in span or ("." in span.strip(".") and " " not in span):
            return span
    for match in _PATH.finditer(without_urls):
        found = match.group(1).rstrip(".,;:")
        if _is_path(found):
            return found
    return None


@functools.lru_cache(maxsize=256)
def without_places(text: str) -> str:
    """``text`` with its web addresses and file paths blanked out: the words
    inside them ("website/shop.html", "https://notes.example.com") name a
    place, not the work asked for."""
    return _PATH.sub(
        lambda m: " " if _is_path(m.group(1).rstrip(".,;:")) else m.group(0), _without_urls(text)
    )


def find_command(text: str) -> str | None:
    """A command in back-ticks or quotes, else the words after 'run'/'execute'."""
    spans = quoted(text)
    if spans:
        return spans[0]
    match = re.search(r"\b(?:run|execute|exec)\s+(?:the\s+command\s+)?(.+)$", text, re.I)
    return match.group(1).strip().rstrip(".") if match else None


def _quoted_values(text: str) -> list[str]:
    """Quoted spans of ``text`` that are values, not a path or an address."""
    return [s for s in quoted(text) if find_path(s) != s and find_url(s) is None]


def _remainder(text: str) -> str:
    spans = quoted(text)
    if spans:
        return spans[-1]
    # What a colon introduces ("save this: ..."); never the minutes of a time
    # ("at 14:00") or the rest of an address.
    match = re.search(r"(?<!\d):(?!\d|//)\s*(.+)$", text)
    if match:
        return match.group(1).strip()
    # "remember that X", "search the notes for X": the subject is what follows.
    lead = _LEADING_VERB.match(text)
    return text[lead.end() :].strip() if lead else text.strip()


_LEADING_VERB = re.compile(
    r"^\s*(?:please\s+)?(?:remember|note|save|store|search|find|look\s+up|recall|log|record)\b"
    r"[^.?!]*?\b(?:that|for|about)\s+",
    re.I,
)


_RUN_VERB = re.compile(r"\b(?:run|execute|exec)\b", re.I)


def argument_evidence(
    schema: dict[str, Any] | None,
    text: str,
    described: str | None = None,
    previous: str | None = None,
) -> int:
    """How strongly ``text`` supplies this tool's distinctive arguments.

    A back-ticked span is a command; a run/execute verb names one; a URL is a
    URL. Tools whose command or URL parameter the request fills this way beat
    tools that merely share a word with it ("run `ls`" is exec, not skill_run).
    In a plan, an identifier the previous step's result gives under the
    parameter's name (``previous``) counts as :func:`fill_arguments` takes it.
    """
    props: dict[str, Any] = (schema or {}).get("properties") or {}
    required = set((schema or {}).get("required") or [])
    shaped = tool_shapes(described, props)
    score = 0
    used: dict[str, list[Any]] = {}
    for name in props:
        key = name.lower()
        if key in _URL_PARAMS or key.endswith("url"):
            score += 4 if find_url(text) else 0
        elif key in _COMMAND_PARAMS:
            if _BACKTICK.search(text):
                score += 5
            elif _RUN_VERB.search(text):
                score += 4
            elif name in required:
                score -= 2  # no command given: another tool does what it asks
        elif (kind := _kind(name, props[name], shaped)) is not None:
            # A tool whose typed arguments the request gives (an order number,
            # an e-mail) beats one that would be called without them; one
            # value fills one parameter ("AC-47018" is not two postcodes).
            values = _values(kind, text, shapes=_shapes(name, props[name], shaped))
            fresh = [v for v in values if v not in used.get(kind, [])]
            if fresh:
                used.setdefault(kind, []).append(fresh[0])
                score += 2
            elif kind == "id" and _step_before_gives(previous, name):
                score += 2
            elif name in required:
                score -= 2
        elif (
            name in required
            and (shown := example_values(name, props[name], described, text)) is not None
            # "username such as mk2291": the request writes one, or the step
            # before gave one under the parameter's name.
            and (bool(shown) or _step_before_gives(previous, name))
        ):
            score += 2
    return score


def _step_before_gives(previous: str | None, name: str) -> bool:
    """The previous step's result (``previous``) gives a value under ``name``."""
    if not previous:
        return False
    return _result_field(previous, name) is not None


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (
    r"(january|february|march|april|may|june|july|august|september|october|november"
    r"|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b\.?"
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_WORD_DATE = re.compile(
    rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+(\d{{4}})\b)?"
    rf"|\b{_MONTH}\s+{_DAY}\b(?:,?\s+(\d{{4}})\b)?",
    re.I,
)
"""A date written with the month's English name: "5 February 2026", "Feb 5th,
2026"; without a year ("17 March"), one in the current year."""
_DAY_RANGE = re.compile(
    rf"\b{_DAY}\s*(?:-|–|to|until|till)\s*\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}"
    rf"(?:,?\s+(\d{{4}})\b)?",
    re.I,
)
"""The first day of a range that names its month once: "from 6 to 10 April
2026", "3-7 May" (the last day is a date of its own)."""
_DOTTED_DATE = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})\b")
"""A day-first date with dots: "21.02.2026"."""
_TIME = re.compile(r"(?<![\d:.])([01]?\d|2[0-3])[:h]([0-5]\d)\b")
"""A time on the 24-hour clock: "14:00", "9:30", "10h00"."""
_CODE = re.compile(r"\b[A-Z]{3}\b")
_AMOUNT = re.compile(r"(?<![\w.-])\d+(?:[.,]\d+)?(?![\w-]|[.,]\d)")
"""An amount: a number that is not part of an identifier ("EL-248193")."""


_DESCRIBED_SHAPE = re.compile(
    r"(?:\b(?:such as|e\.g\.|eg|like|for example|example|z\. ?b\.|p\. ?ej\.|par ex\.?)\s+"
    r"|(?<![\w-])(?=[A-Z]{1,4}-?#{2,}))"
    r"([A-Z]{1,4})-?(?:\d{2,}|#{2,})(?![\w#])"
)
"""An identifier a parameter's description gives as an example ("event
number such as EV-305", "PK-#### (parcel)"): its letters are the shape of
the values it takes."""


_TOOL_SHAPE = re.compile(
    r"(?<![\w-])([A-Z]{1,4})-(?:\d|#{2,}|X{2,}|(?=\s*(?:id|ids|and|\+|number|reference)\b))"
)
"""An identifier a tool's description shows for one of its parameters, short
ones included: "room id (RM-1..RM-5)", "an engineer (id such as EN-4)",
"an item (GR- id)", "a booking (BK- and four digits)"."""
_SHAPE_REACH = 6
"""How many words before such an identifier the parameter's name may be."""


_DATE_FORMAT = re.compile(r"\bYYYY-MM-DD\b")
"""A description that gives a date's format: the parameter takes a date
whatever its name ("check_in": "A date written YYYY-MM-DD")."""
_DATE_BOUND = re.compile(r"date_(?:from|to|start|end)")
"""A parameter named as one end of a range of dates (``date_from``): a date,
never the request's words."""
_TIME_FORMAT = re.compile(r"\bHH:MM\b|\b24-hour clock\b", re.I)
"""A description that gives a time's format ("Start time on a 24-hour clock")."""


_FENCE = re.compile(r"<<<(?:BEGIN|END)_[A-Z_]+>>>")
"""The markers ADK puts around an MCP server's descriptions, which it does not
trust: the words between them are still the description."""


def _unfenced(text: str) -> str:
    """``text`` without ADK's markers around it."""
    return _FENCE.sub("", text).strip()


def _description(prop: Any) -> str:
    """A parameter's description in its JSON schema, or ""."""
    description = prop.get("description") if isinstance(prop, dict) else None
    return _unfenced(description) if isinstance(description, str) else ""


_NOTE_END = re.compile(r";\s|(?<!\be\.g)(?<!\bi\.e)\.(?:\s|$)|\n\s*\n")
"""Where a parameter's note in a tool's description ends: at a semicolon, the
end of its sentence (not the point of "e.g." or "i.e.") or a blank line."""


def _note_end(body: str) -> int:
    """Where the note that ``body`` opens ends (see ``_NOTE_END``): not inside
    brackets ("car_trailer (a car towing a caravan; give its length)")."""
    depth = 0
    for i, char in enumerate(body):
        depth += (char == "(") - (char == ")" and depth > 0)
        if depth == 0 and _NOTE_END.match(body, i):
            return i
    return len(body)


def parameter_notes(described: str | None, names: Sequence[str]) -> dict[str, str]:
    """What a tool's description says about each parameter it names before a
    colon, the way docstrings describe arguments ("vehicle_type: car, van or
    bicycle", "arrival / departure: YYYY-MM-DD", "Args:" lines): the words
    after the colon, up to a semicolon, the end of the sentence or the next
    parameter's note. A parameter named together with others ("length_m,
    height_m: metres") shares their note."""
    text = _unfenced(described or "")
    if not names or not text:
        return {}
    name = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    head = re.compile(
        rf"(?<![\w-])((?:{name})(?:\s*(?:,|/|\band\b|\bor\b)\s*(?:{name}))*)"
        rf"\s*(?:\([^)]*\))?\s*:(?!//)"
    )
    heads = list(head.finditer(text))
    notes: dict[str, str] = {}
    for i, match in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[match.end() : stop]
        note = " ".join(body[: _note_end(body)].split()).strip(" ,")
        if not note:
            continue
        for named in re.findall(r"[\w-]+", match.group(1)):
            if named in names:
                notes.setdefault(named, note)
    return notes


def described_shapes(prop: Any) -> frozenset[str]:
    """The letters of the identifiers a parameter's description shows, in
    lower case ("ev" for "event number such as EV-305")."""
    return frozenset(m.group(1).lower() for m in _DESCRIBED_SHAPE.finditer(_description(prop)))


def tool_shapes(described: str | None, props: dict[str, Any]) -> dict[str, frozenset[str]]:
    """The identifier shapes a tool's description gives its parameters: each
    shape goes to the parameter named nearest before it in the same sentence
    ("Book a room for a client: room id (RM-1..RM-5)" gives ``room`` "rm"), when
    that word names one parameter only."""
    text = _unfenced(described or "")
    labels = {name: _label_words(name) for name in props}
    found: dict[str, set[str]] = {}
    for match in _TOOL_SHAPE.finditer(text):
        sentence = re.split(r"[.;:!?](?:\s|$)", text[: match.start()])[-1]
        for word in reversed(re.findall(r"[^\W\d_]+", sentence)[-_SHAPE_REACH:]):
            named = [n for n, mine in labels.items() if _plain_letters(word)[:4] in mine]
            if named:
                if len(named) == 1:
                    found.setdefault(named[0], set()).add(match.group(1).lower())
                break
    return {name: frozenset(shapes) for name, shapes in found.items()}


_EXAMPLE = re.compile(
    r"\b(?:such as|e\.g\.|eg|for example|like)\s+"
    r"(?![\"'])([A-Za-z0-9]+(?:[:.-][A-Za-z0-9]+)*(?: [A-Z0-9]{2,4}(?![\w.:-]))?)(?![\w])"
)
"""A value a description shows as an example ("username such as mk2291",
"MAC address, e.g. 3C:22:FB:9A:10:7E", a number plate "e.g. SK21 FRY")."""
_EXAMPLE_REACH = 3
"""How many words before an example in a tool's description the parameter's
name may be ("a university account (username such as mk2291)")."""


def _example_pattern(example: str) -> str | None:
    """A pattern for values written like ``example``: each part between its
    separators keeps its runs of letters and of digits, give or take one
    character each ("mk2291": two letters and four digits, so "tob1156"
    too); a part of one or two characters is any such letters or digits
    ("3C:22:FB" for a MAC address). An example with no digit names a word,
    not a shape, and gives none."""
    if not any(c.isdigit() for c in example) or len(example) < 4:
        return None
    pieces = []
    for part in re.split(r"([:. -])", example):
        if part == " ":
            pieces.append(r"\s?")  # "SK21 FRY" is written "SK21FRY" too
        elif part in (":", ".", "-"):
            pieces.append(re.escape(part))
        elif len(part) <= 2:
            pieces.append(f"[A-Za-z0-9]{{{len(part)}}}")
        else:
            for run in re.findall(r"[A-Za-z]+|\d+", part):
                cls = "\\d" if run[0].isdigit() else "[A-Za-z]"
                pieces.append(f"{cls}{{{max(1, len(run) - 1)},{len(run) + 1}}}")
    return r"(?<![\w:.-])" + "".join(pieces) + r"(?![\w:-]|\.\w)"


def example_values(name: str, prop: Any, described: str | None, text: str) -> list[str] | None:
    """The values ``text`` writes in the shape of the example the parameter's
    description gives, or its tool's description beside its name ("username
    such as mk2291"); None when neither shows one."""
    labels = _label_words(name)
    patterns = [
        p for m in _EXAMPLE.finditer(_description(prop)) if (p := _example_pattern(m.group(1)))
    ]
    tool_text = _unfenced(described or "")
    for m in _EXAMPLE.finditer(tool_text):
        before = re.findall(r"[^\W\d_]+", tool_text[: m.start()])[-_EXAMPLE_REACH:]
        named = labels and any(_plain_letters(w)[:4] in labels for w in before)
        if named and (pattern := _example_pattern(m.group(1))):
            patterns.append(pattern)
    if not patterns:
        return None
    return [v.group(0) for pattern in patterns for v in re.finditer(pattern, text)]


def _value_kind(key: str, prop: Any) -> str | None:
    """Which kind of value a parameter takes, read from its name, type and
    description: an identifier, an e-mail, a date, a time, a currency code,
    an amount, or None."""
    kind = (prop or {}).get("type") if isinstance(prop, dict) else None
    if "mail" in key:
        return "email"
    if key.endswith(_ID_SUFFIXES) and kind != "integer":
        return "id"
    if kind in (None, "string") and described_shapes(prop):
        return "id"
    written = _description(prop)
    named_date = key == "date" or key.endswith(("_date", "date")) or _DATE_BOUND.fullmatch(key)
    if named_date or _DATE_FORMAT.search(written):
        return "date"
    named_time = key == "time" or key.endswith(("_time", "time"))
    if (named_time or _TIME_FORMAT.search(written)) and kind in (None, "string"):
        return "time"
    if "currency" in key:
        return "code"
    if kind == "number":
        return "amount"
    return None


def _plain_letters(text: str) -> str:
    """``text`` in lower case without accents: "événement" meets "event"."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _label_words(key: str) -> set[str]:
    """What a parameter's name calls its value ("card" for ``card_number``)."""
    parts = [p for p in re.split(r"[_\W]+", key.lower()) if len(p) > 2]
    named = [p for p in parts if p not in ("number", "num", "ref", "reference")]
    return {p[:4] for p in named} if named else set()


def _names_itself(value: str, labels: set[str]) -> bool:
    """Whether an identifier's letters say what it is: "INV-33648-1" is an
    invoice's, "ST-90215" a student's, "DOG-7048" a dog's."""
    lead = re.match(r"[A-Za-z]{2,4}(?=-)", value)
    return lead is not None and any(label.startswith(lead.group(0).lower()) for label in labels)


def _shaped(value: str, shapes: frozenset[str]) -> bool:
    """``value``'s letters are one of ``shapes`` ("EV-305" for "ev")."""
    lead = re.match(r"#?([A-Za-z]{1,4})-?\d", value)
    return lead is not None and lead.group(1).lower() in shapes


def _identifiers(
    key: str, text: str, others: set[str], shapes: frozenset[str] = frozenset()
) -> list[str]:
    """The identifiers ``text`` gives for parameter ``key``, best first: one
    written after the word the parameter's name calls it by ("card EL-214387"
    for ``card_number``) or whose letters name it ("INV-33648-1" for
    ``invoice_id``), then those not written after another parameter's word.
    A parameter whose description shows the identifiers' shape (``shapes``:
    "such as EV-305") takes only those of that shape."""
    if shapes:
        letters = "|".join(sorted(map(re.escape, shapes), key=len, reverse=True))
        # Those of a described shape count however few their digits ("RM-2").
        shaped = rf"(?<![\w@.-])#?((?:{letters})-?(?:[A-Za-z]{{1,4}}-?)?\d(?:[\w-]*\d)?)(?![\w@])"
        return [m.group(1) for m in re.finditer(shaped, text, re.I)]
    mine = _label_words(key)
    found = []
    for match in _IDENTIFIER.finditer(text):
        if match.group(1).isdigit() and len(match.group(1)) < _SHORTEST_NUMBER_ID:
            continue  # "to 10 %", "for 2 nights": a quantity, not a reference
        if _ISO_DATE.fullmatch(match.group(1)):
            continue  # "on 2026-04-28": a date, which no reference is written as
        before = re.findall(r"[^\W\d_]+", text[: match.start()])[-1:]
        found.append((_plain_letters(before[0])[:4] if before else "", match.group(1)))
    named = [v for word, v in found if word in mine or _names_itself(v, mine)]
    rest = [v for word, v in found if word not in others and v not in named]
    return named + rest


def _word_date(day: str, month: str, year: str | None) -> str | None:
    """A date written with its month's name as YYYY-MM-DD, or None when it is
    no date: a day past 31, or, without a year, a month not written as a name
    ("may 5 people"). Without a year it falls in the current one."""
    if not 1 <= int(day) <= 31 or (year is None and not month[:1].isupper()):
        return None
    number = _MONTHS.index(month.lower()[:3]) + 1
    return f"{year or datetime.date.today().year}-{number:02d}-{int(day):02d}"


def _dates(text: str) -> list[str]:
    """Every date ``text`` writes, as YYYY-MM-DD, in order."""
    found: list[tuple[int, str]] = [(m.start(), m.group(0)) for m in _ISO_DATE.finditer(text)]
    for m in _WORD_DATE.finditer(text):
        day, month, year = (m.group(1), m.group(2), m.group(3))
        if day is None:
            month, day, year = m.group(4), m.group(5), m.group(6)
        if (date := _word_date(day, month, year)) is not None:
            found.append((m.start(), date))
    for m in _DAY_RANGE.finditer(text):
        if (date := _word_date(m.group(1), m.group(2), m.group(3))) is not None:
            found.append((m.start(), date))
    for m in _DOTTED_DATE.finditer(text):
        if 1 <= int(m.group(2)) <= 12:
            found.append((m.start(), f"{m.group(3)}-{int(m.group(2)):02d}-{int(m.group(1)):02d}"))
    return [value for _, value in sorted(found)]


def _values(
    kind: str,
    text: str,
    key: str = "",
    others: set[str] | None = None,
    shapes: frozenset[str] = frozenset(),
) -> list[Any]:
    """The values of ``kind`` written in ``text``, in the order a parameter
    ``key`` should take them (for an identifier, see :func:`_identifiers`)."""
    if kind == "id":
        return _identifiers(key, text, others or set(), shapes)
    if kind == "date":
        return _dates(text)
    if kind == "time":
        return [f"{int(m.group(1)):02d}:{m.group(2)}" for m in _TIME.finditer(text)]
    if kind == "amount":
        return [float(m.group(0).replace(",", ".")) for m in _AMOUNT.finditer(text)]
    pattern = {"email": _EMAIL, "code": _CODE}[kind]
    return [m.group(0) for m in pattern.finditer(text)]


_UNITS = {
    "m": ("m", "metre", "metres", "meter", "meters", "metro", "metros", "mètres"),
    "cm": ("cm", "centimetre", "centimetres", "centimeter", "centimeters"),
    "km": ("km", "kilometre", "kilometres", "kilometer", "kilometers"),
    "t": ("t", "tonne", "tonnes", "tonnen", "toneladas"),
    "kg": ("kg", "kilo", "kilos", "kilogram", "kilograms", "kilogramme", "kilogrammes"),
    "l": ("l", "litre", "litres", "liter", "liters"),
    "min": ("min", "mins", "minute", "minutes", "minuten", "minutos"),
    "h": ("h", "hr", "hrs", "hour", "hours", "stunden", "horas", "heures"),
}
"""Units of measure by the words that write them ("12 m", "18 tonnes")."""
_UNIT_OF = {word: unit for unit, words in _UNITS.items() for word in words}
_MEASURE = re.compile(r"(?<![\w.-])(\d+(?:[.,]\d+)?)\s?([^\W\d_]+)?")


def unit_of(name: str, prop: Any) -> str | None:
    """The unit a number parameter is measured in: its name's last part
    ("weight_t", "length_m", "duration_minutes") or, else, a unit its
    description names ("gross weight in tonnes")."""
    last = re.split(r"[_\W]+", name.lower())[-1]
    if last in _UNIT_OF:
        return _UNIT_OF[last]
    if not isinstance(prop, dict) or prop.get("type") not in ("number", "integer"):
        return None
    words = re.findall(r"[^\W\d_]{3,}", _description(prop).lower())
    units = {_UNIT_OF[w] for w in words if w in _UNIT_OF}
    return units.pop() if len(units) == 1 else None


def measured_amounts(text: str, unit: str | None, others: set[str]) -> list[float]:
    """The numbers ``text`` writes for a parameter measured in ``unit``:
    those written with that unit first, then those written with none; never
    one written with the unit another parameter takes ("12 m, 18 tonnes":
    12 to ``length_m``, 18 to ``weight_t``)."""
    mine: list[float] = []
    bare: list[float] = []
    for m in _MEASURE.finditer(text):
        if not _AMOUNT.match(text, m.start(1)):
            continue
        value = float(m.group(1).replace(",", "."))
        written = _UNIT_OF.get((m.group(2) or "").lower().rstrip("."))
        if unit is not None and written == unit:
            mine.append(value)
        elif written is None or written not in others:
            bare.append(value)
    return mine + bare


_PAIR = re.compile(r"^\s*([\w.-]+):\s+(.+?)\s*$")
_REFERENT = re.compile(r"\(([^()]+)\)\s*$")
_DETERMINERS = {"the", "a", "an", "my", "our", "this", "that", "your"}
_NOT_A_VALUE = {"path", "format", "key", "input", "note", "total", "truncated", "name"}


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 4}


def _result_field(result: str, name: str) -> str | None:
    """The value an earlier step's result gives under the key ``name``
    ("course_code: GER-A2-01" for the next step's ``course_code``)."""
    wanted = name.lower()
    # An identifier's key may add what it is to the parameter's name
    # ("member_id: M-2115" for ``member``), or drop it.
    keys = {wanted, *(f"{wanted}{suffix}" for suffix in ("_id", "_number", "_no", "_code"))}
    keys |= {wanted.removesuffix(suffix) for suffix in ("_id", "_number", "_no", "_code")}
    for line in result.splitlines():
        match = _PAIR.match(line)
        if match is not None and match.group(1).lower() in keys:
            return match.group(2)
    return None


def value_in_result(result: str, request: str) -> str | None:
    """The value in an earlier step's ``result`` that ``request`` is about.

    A result reads as ``key: value`` lines (``content: db_password: hunter2``):
    the value whose key shares a word with the request wins ("the database
    password" picks ``db_password``); else the first value that is not a
    detail about the result (its path, format or key).
    """
    pairs: list[tuple[str, str]] = []
    for line in result.splitlines():
        rest = line
        while (match := _PAIR.match(rest)) is not None:
            pairs.append((match.group(1), match.group(2)))
            rest = match.group(2)
    wanted = _words(request)
    for key, value in pairs:
        if _words(key.replace("_", " ")) & wanted and not _PAIR.match(value):
            return value
    plain = [(k, v) for k, v in pairs if k.lower() not in _NOT_A_VALUE]
    return plain[0][1] if plain else (result.strip() or None)


_NAMED = re.compile(
    r"\b(?:named|called|titled|labell?ed|name\s+it|call\s+it)\s+[\"'`“]?([\w.@-]+)", re.I
)
"""A name given in so many words: "a secret named DB_PASS", "a file called notes.md"."""
_AS_NAME = re.compile(
    r"\bas\s+(?:the\s+|a\s+|my\s+)?(?:secret|key|token|password)\s+"
    r"[\"'`“]?([A-Z][A-Z0-9_]{2,}|[A-Za-z][\w.-]*_[\w.-]*)\b"
    r"|\bas\s+[\"'`“]?([A-Za-z][A-Za-z0-9]*_[\w-]*)(?![\w-]|\.\w)"
)
"""A name written as a constant after what it is ("as the secret
RIKSARKIVET_PASSWORD"), or one in snake case after "as" alone ("store the
password in the vault as hosting_sftp")."""
_NAME_PARAMS = {"name", "title", "label", "secret_name", "key_name"}
"""Parameters that take the name of what a call creates or finds."""


def given_name(request: str) -> str | None:
    """The name a request gives in so many words ("named X", "called X"), else None."""
    match = _NAMED.search(request) or _AS_NAME.search(request)
    found = next((g for g in match.groups() if g), None) if match else None
    return found.rstrip(".,;:!?") if found else None


def name_for(request: str) -> str | None:
    """A name the request gives ("named X", "called X", quoted), or one made of
    what it refers to: 'store it as a secret (the database password)' ->
    ``database_password``."""
    if (named := given_name(request)) is not None:
        return named
    spans = quoted(request)
    if spans:
        return spans[0]
    match = _REFERENT.search(request)
    if match is None:
        return None
    words = [
        w for w in re.findall(r"[A-Za-z0-9]+", match.group(1)) if w.lower() not in _DETERMINERS
    ]
    return "_".join(w.lower() for w in words) or None


def _choice(choices: list[Any], text: str, taken: Sequence[Any] = ()) -> Any:
    """The allowed value ``text`` names first, of those another parameter has
    not taken ("from Ardmore to Inchkeel" gives ``from_port`` Ardmore, then
    ``to_port`` Inchkeel), else None."""
    said = _plain_letters(text).replace("_", " ")
    named = []
    for choice in choices:
        if choice in taken:
            continue
        words = str(choice).replace("_", " ").lower()
        if found := re.search(rf"\b{re.escape(_plain_letters(words))}\b", said):
            named.append((found.start(), choice))
    return min(named, key=lambda pair: pair[0])[1] if named else None


_LINKS = {"at", "in", "on", "for", "to", "from", "is", "of", "the", "a", "an", ":"}


def _labelled_word(key: str, text: str) -> str | None:
    """The word ``text`` gives after the word a parameter's name calls its
    value by ("pickup at Northgate" for ``pickup_branch``), else None."""
    labels = _label_words(key)
    tokens = re.findall(r"[\w.@-]+|:", text)
    for i, token in enumerate(tokens[:-1]):
        if _plain_letters(token)[:4] not in labels:
            continue
        rest = [t for t in tokens[i + 1 : i + 4] if t.lower() not in _LINKS]
        # A name or a number: "at Northgate", "room 5"; not "pickup would be nice".
        if rest and (rest[0][:1].isupper() or any(c.isdigit() for c in rest[0])):
            return rest[0].rstrip(".,;")
    return None


_LISTED_VALUE = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w-])")
"""A value written the way a program takes it ("child_seat", "hot_desk")."""


_WORDED_LIST = re.compile(
    r"(?:one of:?\s+)?(?P<items>[a-z][a-z_ -]*(?:,\s*[a-z][a-z_ -]*)+,?\s+or\s+[a-z][a-z_ -]*)"
    r"|one of:?\s+(?P<listed>[a-z][a-z_ -]*(?:,\s*[a-z][a-z_ -]*)+)"
)
"""A description that is only a list of plain words, "or" before the last:
"card, cash, bank transfer or paypal", "bath and brush, nail trim or de-shedding"."""
_BRACKETED_NAMES = re.compile(
    r"\((?P<items>[A-Z][\w -]*(?:,\s*[A-Z][\w -]*){2,}(?:,?\s+or\s+[A-Z][\w -]*)?)\)"
)
"""Names a description lists in brackets, each capitalised: "port names or
codes (Ardmore, Inchkeel, Skarra)"."""
_WORDED_ITEM_WORDS = 3
"""The most words one value of such a list has ("bath and brush")."""


_ERROR_LIST_LEAD = re.compile(
    r"(?:\bone of\b[^:]*?:?|\bsuch as\b|\b(?:are|is|use|try|give)\b|:)\s+", re.I
)
"""Where a tool's error starts listing the values it takes: "is not one of:
card, cash", "the rooms are Maple, Hazel", "use great-barn, orangery"."""
_ERROR_LIST_END = re.compile(r"\s*(?:\(server said|\.\s|\.$|;)", re.I)
_ERROR_ITEM_WORDS = 4


def _after_rejected(error: str, rejected: str) -> str | None:
    """What a tool's ``error`` says after quoting the value it refused,
    ``rejected``; None when it quotes no such value."""
    quoted = [f"{q}{rejected}{q}" for q in ("'", '"', "`")] if rejected else []
    at, found = next(((error.find(q), q) for q in quoted if q in error), (-1, ""))
    return error[at + len(found) :] if at >= 0 else None


def values_an_error_lists(error: str, rejected: str) -> list[str]:
    """The values a tool's ``error`` lists for the argument it refused,
    ``rejected`` ("method 'by card please' is not one of: card, cash or bank
    transfer"): the items of the list after the refused value, quoted, or
    none when the error does not quote it or lists nothing."""
    tail = _after_rejected(error, rejected)
    if tail is None:
        return []  # the error quotes another value: not this argument's
    comma = tail.find(",")
    # The list starts after the last lead before its first comma: "is not
    # one of: card, cash" lists from "card".
    leads = [m for m in _ERROR_LIST_LEAD.finditer(tail) if comma < 0 or m.end() <= comma]
    if comma < 0 or not leads:
        return []
    listed = _ERROR_LIST_END.split(tail[leads[-1].end() :], maxsplit=1)[0]
    items = [
        i.strip(" '\"`")
        for i in re.split(r",\s*(?:or\s+|and\s+)?|\s+or\s+", listed)
        if i.strip(" '\"`")
    ]
    if len(items) > 1 and all(len(i.split()) <= _ERROR_ITEM_WORDS for i in items):
        return items
    return []


def values_an_error_shows(error: str, rejected: str) -> list[str]:
    """The values in the shape of the example a tool's ``error`` gives for the
    argument it refused, ``rejected`` ("learner_id 'practical' is not valid:
    it looks like LR- and 5 digits, e.g. LR-40317"), as patterns to find in a
    request; none when the error does not quote the value or shows no
    example."""
    tail = _after_rejected(error, rejected)
    if tail is None:
        return []
    return [p for m in _EXAMPLE.finditer(tail) if (p := _example_pattern(m.group(1)))]


def shaped_value(patterns: Sequence[str], text: str, taken: Sequence[Any] = ()) -> str | None:
    """The first value ``text`` writes in one of the shapes ``patterns`` give,
    of those no other argument holds, else None."""
    for pattern in patterns:
        for match in re.finditer(pattern, text):
            if match.group(0) not in taken:
                return match.group(0)
    return None


_GLOSSED = re.compile(r"^(\S+)\s+\(([^()]+)\)$")
"""A listed value with what it stands for: "BUS (Business School)"."""


def named_value(values: Sequence[str], text: str, taken: Sequence[Any] = ()) -> str | None:
    """The one of ``values`` that ``text`` names first, written with spaces,
    hyphens or underscores alike ("the Great Barn" for ``great-barn``), of
    those not ``taken`` by another argument, else None. A value listed with
    what it stands for ("BUS (Business School)") is named by either, and is
    the value before the brackets."""
    said = f" {' '.join(re.findall(r'[a-z0-9]+', _plain_letters(text)))} "
    named = []
    for value in values:
        glossed = _GLOSSED.match(value)
        value = glossed.group(1) if glossed else value
        if value in taken:
            continue
        for name in (value, glossed.group(2)) if glossed else (value,):
            spoken = " ".join(re.findall(r"[a-z0-9]+", _plain_letters(name)))
            if spoken and (at := said.find(f" {spoken} ")) >= 0:
                named.append((at, value))
    return min(named, key=lambda pair: pair[0])[1] if named else None


def listed_values(description: str | None) -> list[str]:
    """The values a description lists for a parameter to take: two or more
    written in snake case ("child_seat, booster_seat or sat_nav"), or, when the
    description (up to a ";" or a bracket) is only such a list, three or more
    in plain words ("small, medium, large or giant"); else none."""
    text = _unfenced(description or "")
    # What a value stands for, in brackets, is no value: "artic (articulated
    # lorry), rigid or van" lists three.
    unglossed = re.sub(r"\s*\([^()]*\)", "", text)
    head = re.split(r";", unglossed, maxsplit=1)[0].strip().rstrip(".")
    worded = _WORDED_LIST.fullmatch(head)
    found = list(dict.fromkeys(_LISTED_VALUE.findall(text)))
    if len(found) > 1 and worded is None:
        return found
    match = worded or _BRACKETED_NAMES.search(text)
    if match is None:
        return []
    listed = match["items"] or match.groupdict().get("listed") or ""
    items = [i.strip() for i in re.split(r",\s*|\s+or\s+", listed) if i.strip()]
    if len(items) < 3 or any(len(i.split()) > _WORDED_ITEM_WORDS for i in items):
        return []
    return items


def _free_text(name: str, prop: Any) -> bool:
    """A parameter that takes free text: a string of no known form, no list
    of allowed values and no path, command, address or name."""
    key = name.lower()
    special = (
        key in _URL_PARAMS | _COMMAND_PARAMS | _PATH_PARAMS | _TEXT_PARAMS | _NAME_PARAMS
        or key.endswith(("url", "path"))
    )
    allowed = isinstance(prop, dict) and prop.get("enum")
    is_text = (prop or {}).get("type") in (None, "string", "STRING")
    return is_text and not special and not allowed and _value_kind(key, prop) is None


_CAPITALISED = r"[A-Z][^\W\d_]*(?:['’-][^\W\d_]+)*"
_CAPITALISED_RUN = re.compile(rf"(?<![\w-]){_CAPITALISED}(?:\s+{_CAPITALISED})+(?![\w-])")
_FOR_NAME = re.compile(r"\b(?:for|name|named|called)\s+([A-Z][^\W\d_]+)(?![\w-])")


def _proper_name(text: str) -> str | None:
    """The name a request gives someone or something, for a parameter such as
    ``client_name``: its last run of capitalised words that does not open the
    request ("… from 11:00 for Harbor Lights"), else one word after "for" or
    "name" ("for Petrel"), else None."""
    runs = [m.group(0) for m in _CAPITALISED_RUN.finditer(text) if m.start() > 0]
    if runs:
        return runs[-1]
    single = _FOR_NAME.findall(text)
    return single[-1] if single else None


def _counted(prop: Any) -> bool:
    """A parameter that takes a whole number of no fixed list."""
    return isinstance(prop, dict) and prop.get("type") == "integer" and not prop.get("enum")


def _kind(name: str, prop: Any, shaped: dict[str, frozenset[str]]) -> str | None:
    """The kind of value parameter ``name`` takes (see :func:`_value_kind`),
    or an identifier when its tool's description gives it a shape."""
    return _value_kind(name.lower(), prop) or _shaped_kind(prop, shaped.get(name))


def _shapes(name: str, prop: Any, shaped: dict[str, frozenset[str]]) -> frozenset[str]:
    """The identifier shapes parameter ``name`` takes: those its own
    description shows and those its tool's description gives it."""
    return described_shapes(prop) | shaped.get(name, frozenset())


def _shaped_kind(prop: Any, shapes: frozenset[str] | None) -> str | None:
    """ "id" for a parameter of text the tool's description gives a shape."""
    is_text = (prop or {}).get("type") in (None, "string", "STRING")
    return "id" if shapes and is_text else None


def _counts(names: list[str], required: set[str], text: str, ids: list[Any]) -> dict[str, int]:
    """The whole numbers integer parameters ``names`` take: one written before
    the word a parameter's name calls it by goes to it ("for 5 hours" to
    ``hours`` rather than ``start_hour``: the name that says least else),
    the others go in order to the rest, required ones first. Never a number
    inside a reference ("SYS-54312") or a date ("18 March 2026"), one an
    identifier took, or a time's minutes; a time's hour ("from 11:00") only
    to a parameter its name calls an hour."""
    labels = {name: _label_words(name) for name in names}
    dated = [
        m.span()
        for pattern in (_ISO_DATE, _WORD_DATE, _DAY_RANGE, _DOTTED_DATE)
        for m in pattern.finditer(text)
    ]
    hours = {m.start() for m in _TIME.finditer(text)}
    found = [
        m
        for m in _WHOLE.finditer(text)
        if m.group(0) not in ids
        and text[max(m.start() - 1, 0)] != ":"
        and not any(a <= m.start() < b for a, b in dated)
    ]
    counts: dict[str, int] = {}
    used: set[int] = set()
    for m in found:
        after = re.match(r"\s*([^\W\d_]+)", text[m.end() :])
        word = _plain_letters(after.group(1))[:4] if after else ""
        fits = [
            n
            for n in names
            if n not in counts and len(word) > 2 and any(w.startswith(word) for w in labels[n])
        ]
        if fits and m.start() not in hours:
            counts[min(fits, key=lambda n: len(labels[n]))] = int(m.group(0))
            used.add(m.start())
    for name in sorted(names, key=lambda n: n not in required):
        left = [m for m in found if m.start() not in used]
        # An hour's parameter takes a time's hour first; no other takes one.
        left = sorted(left, key=lambda m: m.start() not in hours)
        if "hour" not in labels[name]:
            left = [m for m in left if m.start() not in hours]
        if name not in counts and left:
            counts[name] = int(left[0].group(0))
            used.add(left[0].start())
    return counts


def _takes_an_email(prop: Any) -> bool:
    """The parameter's description says it takes an e-mail address too."""
    return re.search(r"e-?mail", _description(prop), re.I) is not None


def fill_arguments(
    schema: dict[str, Any] | None,
    text: str,
    previous: str | None = None,
    described: str | None = None,
) -> dict[str, Any]:
    """Arguments for a tool whose JSON schema is ``schema``, read from ``text``.

    ``previous`` is the result of the plan step before this one: the values a
    step works on come from it ("encrypt the password in it"), while paths,
    commands and URLs come from the step's own words. ``described`` is the
    tool's description: the values it lists ("child_seat, booster_seat or
    sat_nav") are those of its one parameter of free text.
    """
    if not schema:
        return {}
    notes = parameter_notes(described, list(schema.get("properties") or {}))
    # A parameter the schema leaves undescribed takes what the tool's
    # description says of it ("registration: the number plate (e.g. SK21 FRY)").
    props: dict[str, Any] = {
        name: {**prop, "description": notes[name]}
        if isinstance(prop, dict) and name in notes and not _description(prop)
        else prop
        for name, prop in (schema.get("properties") or {}).items()
    }
    required = set(schema.get("required") or [])
    args: dict[str, Any] = {}
    labels = {name: _label_words(name) for name in props}
    unit_by_name = {name: unit_of(name, prop) for name, prop in props.items()}
    shaped = tool_shapes(described, props)
    taken: dict[str, list[Any]] = {}
    free = [n for n, p in props.items() if n in required and _free_text(n, p)]
    for name, prop in props.items():
        key = name.lower()
        value: Any = None
        if key in _URL_PARAMS or key.endswith("url"):
            value = find_url(text)
        elif key in _COMMAND_PARAMS:
            value = find_command(text)
        elif key in _PATH_PARAMS or key.endswith(("_path", "path")):
            value = find_path(text)
            if value is None and re.search(r"\b(here|this (folder|directory))\b", text, re.I):
                value = "."
        elif key in _TEXT_PARAMS:
            # The step's own quoted value ('write "done" to out.txt') wins over
            # what the step before it produced.
            own = previous is None or bool(_quoted_values(text))
            value = _remainder(text) if own else value_in_result(previous or "", text)
        elif key in _NAME_PARAMS:
            value = given_name(text) or (name_for(text) if previous is not None else None)
        elif (kind := _kind(name, prop, shaped)) is not None:
            others = {w for n in props if n != name for w in labels[n]} - labels[name]
            # Two parameters of one kind take two values ("ST-12968 from
            # ITA-A2-01", "from 14:00 to 15:00"), the second the next one.
            if kind == "amount":
                # A number goes by its unit ("12 m" to length_m, never to weight_t).
                units = {u for n, u in unit_by_name.items() if n != name and u}
                values: list[Any] = measured_amounts(text, unit_by_name[name], units)
            else:
                values = _values(kind, text, key, others, _shapes(name, prop, shaped))
            if not values and kind == "id" and _takes_an_email(prop):
                # "member number such as M-2041, or the member's e-mail"
                values = _values("email", text)
            fresh = [v for v in values if v not in taken.get(kind, [])]
            value = fresh[0] if fresh else None
            if value is None and previous and kind == "id":
                value = _result_field(previous, name)
            if value is None and previous and kind == "date" and name in required:
                # "… on 2026-06-03, then tell me who is free that day"
                found = _result_field(previous, name) or _result_field(previous, "date")
                value = found if found and _ISO_DATE.fullmatch(found) else None
            if isinstance(value, str) and kind == "id":
                # The example writes more than the identifier ("e.g. SK21 FRY"):
                # the value is all of it ("AB19 CDE", not "AB19").
                longer = example_values(name, prop, described, text) or []
                value = next((v for v in longer if v.startswith(value)), value)
            if value is not None:
                taken.setdefault(kind, []).append(value)
        elif _counted(prop):
            continue  # whole numbers are shared out once the identifiers are taken
        choices = (prop or {}).get("enum") if isinstance(prop, dict) else None
        if value is None and choices:
            value = _choice(choices, text, list(args.values()))
        is_text = (prop or {}).get("type") in (None, "string", "STRING")
        # A command is only ever one the request gives ("run `ls`", "execute
        # make test"): the request's words are never run as one.
        command = key in _COMMAND_PARAMS
        if value is None and name in required and is_text and not choices and not command:
            # A value of a known form (a currency code, a date) that the
            # request does not write is asked for, never made of its words.
            typed = _kind(name, prop, shaped) is not None
            # (The tool's own parameters, which a description may name, are no values.)
            listed = [
                v
                for v in listed_values(_description(prop))
                or (listed_values(described) if free == [name] else [])
                if v not in props
            ]
            if listed:
                # Values the tool lists are the only ones it takes: one the
                # request names ("a child seat"), or it is asked for.
                value = _choice(listed, text, list(args.values()))
            elif (shown := example_values(name, prop, described, text)) is not None:
                # A value in the shape of its example ("such as mk2291"), or
                # one written after the parameter's name, or it is asked
                # for: the request's words are not one.
                value = next((v for v in shown if v not in args.values()), None)
                value = value or _labelled_word(key, text)  # "mac A4-83-E7-2B-5C-19"
                if value is None and previous:
                    # "Unlock mk4410, then send a reset link": the step before's.
                    value = _result_field(previous, name)
            else:
                whose = key.endswith("name") and key not in _NAME_PARAMS
                value = (
                    (_proper_name(text) if whose else None)
                    or _labelled_word(key, text)
                    or (None if typed else _remainder(text))
                )
        if value is not None:
            args[name] = value
    whole = [n for n, p in props.items() if _counted(p)]
    args.update(_counts(whole, required, text, taken.get("id", [])))
    # A name is never the value it names: "store the password 'hunter2' as a
    # secret" gives no name, and a secret called hunter2 would show it.
    for name in [n for n in args if n.lower() in _NAME_PARAMS]:
        if any(args[name] == value for other, value in args.items() if other != name):
            del args[name]
    return args
