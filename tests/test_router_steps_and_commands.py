"""What the router reads as a step, a command and an identifier's shape.

A command line needs no back-quotes to be one ("grep log.csv for batch 14"),
and the file it names is its argument, not a file for whoever takes a path. A
part of a request that only asks to be told what the step before found ("and
tell me what comes up"), or only says where the next one happens ("On
example.com, ..."), is no step of its own. An author may describe an
identifier by its letters alone ("its WR- reference"). A question whose
meaning is an agent's work far more than small talk's keeps that agent as the
model's guess. A part of a request makes a step of its own only by naming
its agent's words or structure: meaning alone, which a story ("there are
five of us in the house") has too, leaves the decision to the model. Which
booking a request is about ("For booking BK-31877, ..."), a short condition
("..., if they are free") and what a step is to record ("log an event that
Doris was sluggish") are details of a step, not steps or a story, and a file
alone after a comma ("Pull up the plan for episode 44, episodes/ep044-outline.md")
is the thing the part before names, as a question that names nothing new after
a lookup ("..., whats the date") asks about the thing looked up. What a
keyword asks to keep after "that" ("Remember that my editor wants WAV files")
says nothing of whose work it is, and the "and" of a range ("between 2 and
5pm") joins one detail's two ends. What a part reads off a page just opened
("Open https://… and find their events contact email") is that step's."""

from __future__ import annotations

import asyncio
import re

import pytest

from troupe import Config, build_agent_tree
from troupe.builtins import builtin_tools
from troupe.routing.encoder import Encoder
from troupe.routing.router import (
    AgentProfile,
    Router,
    instruction_of,
    lexical_score,
    split_clauses,
    structures_in,
)


def _desk() -> list[AgentProfile]:
    """A small team: one agent runs commands and reads files, one hashes
    files, one browses the web, one keeps notes."""
    return [
        AgentProfile.build(
            "shell",
            texts=["Runs shell commands and reads and writes files in the project."],
            keywords=["command", "file", "folder"],
            tool_names=["shell_run", "shell_read_file"],
            parameter_names=["command", "path"],
        ),
        AgentProfile.build(
            "hasher",
            texts=["Computes checksums of files and text."],
            keywords=["checksum", "hash", "digest"],
            tool_names=["hasher_file_checksum"],
            parameter_names=["path", "algorithm"],
        ),
        AgentProfile.build(
            "browser",
            texts=["Opens web pages, reads them and fills in forms on websites."],
            keywords=["web page", "website", "browse"],
            tool_names=["browser_open", "browser_type", "browser_screenshot"],
            parameter_names=["url", "text", "path"],
        ),
        AgentProfile.build(
            "notes",
            texts=["Keeps the user's notes and their history and finds them again."],
            keywords=["note", "history", "remember", "search"],
            tool_names=["notes_save", "notes_search"],
            parameter_names=["text", "query"],
        ),
    ]


@pytest.fixture(scope="module")
def router(encoder: Encoder) -> Router:
    return Router(_desk(), encoder)


@pytest.fixture(scope="module")
def default_team(tmp_path_factory: pytest.TempPathFactory) -> Router:
    """The router of troupe's default team over its built-in tools."""
    workspace = tmp_path_factory.mktemp("workspace")
    tools = builtin_tools(workspace=workspace)
    root = build_agent_tree(Config(tools=tools, model="offline", router="auto"))
    fast = getattr(root, "troupe_router", None)
    assert fast is not None
    return asyncio.run(fast.router())


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("grep batches/log.csv for the rows of batch 14", {"command"}),
        ("Run python3 tools/abv.py 1.056 1.012", {"command"}),
        ("count the lines of batches/log.csv with wc -l", {"command", "path"}),
        ("find the files I changed", set()),
        ("make sure notes.txt is there", {"path"}),
    ],
)
def test_an_unquoted_command_line_is_a_command_and_its_file_its_argument(
    text: str, found: set[str]
) -> None:
    assert structures_in(text) == found


def test_the_agent_that_runs_commands_takes_a_command_on_a_file(router: Router) -> None:
    decision = router.decide("grep batches/fermentation_temps.csv for the rows of batch 14")
    assert decision.candidates[0].name == "shell"
    structure = {c.name: c.structure for c in decision.candidates}
    assert structure["shell"] == 1.0 and structure["hasher"] == 0.0


def test_an_agent_that_takes_only_some_of_a_requests_structures_gets_that_share(
    router: Router,
) -> None:
    decision = router.decide("How many lines are in batches/log.csv? Use wc -l.")
    structure = {c.name: c.structure for c in decision.candidates}
    assert structure["shell"] == 1.0
    assert structure["hasher"] == 0.5


@pytest.mark.parametrize(
    "text",
    [
        "Could you check https://brewers.example.org/ and tell me what they're talking about?",
        "On https://www.example.com, type 'citra hops' in the search box and tell me what comes up",
    ],
)
def test_telling_what_a_page_shows_is_the_same_step_as_opening_it(
    default_team: Router, text: str
) -> None:
    decision = default_team.decide(text)
    assert not decision.compound
    assert decision.agent == "navigator"


def test_a_last_step_that_asks_something_new_of_another_agent_is_still_a_step(
    default_team: Router,
) -> None:
    decision = default_team.decide(
        "Open https://www.example.com/news, then tell me what you remember about my hop orders"
    )
    assert decision.compound and decision.agent == "planner"


def test_an_identifier_described_by_its_letters_alone_is_that_agents_shape() -> None:
    profile = AgentProfile.build(
        "reports",
        texts=["Logs missed bin collections and looks reports up by their WR- reference."],
        keywords=["missed bin", "report"],
        tool_names=["pickup_report_missed", "pickup_report_status"],
    )
    assert "WR" in profile.shapes


def test_a_question_about_an_agents_own_work_keeps_it_as_the_guess(encoder: Encoder) -> None:
    team = [
        AgentProfile.build(
            "collections",
            texts=["Says on which days each street's bins are collected, and changes at holidays."],
            capabilities=["bin collection days by street"],
            keywords=["collection day", "bin day", "schedule"],
            tool_names=["schedule_next_collections", "schedule_holiday_changes"],
        ),
        AgentProfile.build(
            "permits",
            texts=["Sells extra bin permits and garden waste subscriptions."],
            keywords=["permit", "subscription", "extra bin"],
            tool_names=["permit_apply", "permit_fees"],
        ),
    ]
    router = Router(team, encoder)
    decision = router.decide("What day of the week are bins collected on Orchard Lane?")
    assert decision.kind == "defer" and decision.agent == "collections"
    small_talk = router.decide("How are you doing today?")
    assert small_talk.agent is None


def _bins_desk() -> list[AgentProfile]:
    return [
        AgentProfile.build(
            "collections",
            texts=["Says on which days each street's bins are collected."],
            keywords=["collection day", "bin day"],
            tool_names=["schedule_next_collections"],
        ),
        AgentProfile.build(
            "permits",
            texts=["Sells permits for an extra or a larger bin, and garden waste subscriptions."],
            keywords=["permit", "larger bin", "extra bin", "subscription"],
            tool_names=["permit_apply_for_bin", "permit_fees"],
        ),
        AgentProfile.build(
            "reports",
            texts=["A black bin that overflows every single week.", "A bin that was not emptied."],
            keywords=["missed bin", "damaged bin", "complaint"],
            tool_names=["pickup_report_missed", "pickup_report_damaged_bin"],
        ),
        AgentProfile.build(
            "planner",
            texts=["Plans a request of several steps and carries it out step by step."],
            plans=True,
        ),
    ]


def test_a_part_that_leans_to_an_agent_by_meaning_alone_makes_no_plan(encoder: Encoder) -> None:
    router = Router(_bins_desk(), encoder)
    decision = router.decide(
        "Our black bin is overflowing every single week and there are five of us "
        "in the house. Are we allowed a bigger one?"
    )
    assert not (decision.kind == "route" and decision.agent == "planner")
    steps = router.decide("Report a missed bin at 4 Mill Lane, then apply for a larger bin permit")
    assert steps.kind == "route" and steps.agent == "planner"


@pytest.mark.parametrize("text", ["make 2 reservations for Friday", "find 3 books on hops"])
def test_a_program_name_followed_by_a_number_is_everyday_words(text: str) -> None:
    assert "command" not in structures_in(text)


@pytest.mark.parametrize(
    ("text", "keyword"),
    [
        ("Our green garden waste bin has been stolen from 15 Oak Avenue.", "stolen bin"),
        ("what is the status of my order 48213?", "order status"),
        ("the extra black bin I asked about", "extra bin"),
    ],
)
def test_a_two_word_keyword_is_found_a_few_words_apart_in_either_order(
    text: str, keyword: str
) -> None:
    assert lexical_score(text, [keyword]) > 0


def test_a_two_word_keyword_is_not_found_across_a_whole_sentence() -> None:
    text = "my bin was fine all week but somebody says a bike got stolen"
    assert lexical_score(text, ["stolen bin"]) == 0


def test_after_that_joins_two_steps(default_team: Router) -> None:
    decision = default_team.decide(
        "What do you remember about my stout? After that, search the knowledge base for oats."
    )
    assert decision.compound and decision.agent == "planner"


@pytest.mark.parametrize("text", ["my hydrometer reads 0.002 high", "OG 1.056 and FG 1.012"])
def test_a_decimal_number_is_no_file(text: str) -> None:
    from troupe.models._offline_args import find_path

    assert "path" not in structures_in(text)
    assert find_path(text) is None


def test_a_command_beside_a_web_address_or_a_secret_keeps_them() -> None:
    text = "open https://example.com/status, then run `curl -H {{secret:TOKEN}} api/health`"
    assert structures_in(text) == {"url", "command", "secret"}


def test_a_plan_word_inside_a_web_address_asks_for_no_plan(default_team: Router) -> None:
    decision = default_team.decide(
        "According to https://www.example.org/moon/phases/, when is the next full Moon?"
    )
    assert not decision.compound
    assert decision.candidates[0].name == "navigator"


def test_the_words_of_a_path_are_no_agent_s_keywords(router: Router) -> None:
    decision = router.decide("read notes/history/2025-10-03.md")
    lexical = {c.name: c.lexical for c in decision.candidates}
    assert lexical["notes"] == 0.0
    assert decision.candidates[0].name in ("shell", "hasher")


def test_saving_a_screenshot_as_a_file_is_the_browser_s_own_step(default_team: Router) -> None:
    decision = default_team.decide(
        "Take a screenshot of https://www.example.org/ and save it as shot.png."
    )
    assert not decision.compound
    assert decision.candidates[0].name == "navigator"


def test_a_file_step_in_its_own_agent_s_words_is_still_a_step_of_its_own(
    default_team: Router,
) -> None:
    decision = default_team.decide(
        "Take a screenshot of https://www.example.org/ and then read notes.txt."
    )
    assert decision.compound


def test_a_file_is_for_the_agent_most_of_whose_tools_take_one() -> None:
    team = [
        AgentProfile.build(
            "files",
            texts=["Reads, writes and lists the user's files."],
            tool_names=["files_read", "files_write", "files_list"],
            tool_parameters=[["path"], ["path", "text"], ["path"]],
            parameter_names=["path", "text"],
        ),
        AgentProfile.build(
            "pages",
            texts=["Opens web pages and shows them."],
            tool_names=["pages_open", "pages_extract", "pages_screenshot"],
            tool_parameters=[["url"], ["selector"], ["path"]],
            parameter_names=["url", "selector", "path"],
        ),
    ]
    router = Router(team, None)

    decision = router.decide("show me brick_walls.md")

    structure = {c.name: c.structure for c in decision.candidates}
    assert structure["files"] == 1.0
    assert structure["pages"] == pytest.approx(1 / 3)


def test_an_agent_whose_tools_are_not_known_takes_its_structures_fully() -> None:
    profile = AgentProfile.build("files", texts=["Reads files."], keywords=["file"])
    decision = Router([profile], None).decide("show me brick_walls.md")
    assert decision.candidates[0].structure == 1.0


@pytest.mark.parametrize(
    "text",
    ["Geh auf tagesschau.de und nenn mir die erste Meldung.", "open github.com/torvalds/linux"],
)
def test_a_bare_web_address_is_an_address_with_its_path(text: str) -> None:
    assert structures_in(text) == {"url"}


def test_a_later_step_in_another_agent_s_words_is_not_routed_to_the_first(
    default_team: Router,
) -> None:
    decision = default_team.decide(
        "Run `wc -l sessions.csv` and then remember how many lines my session log has."
    )
    assert decision.kind != "route" or decision.agent == "planner"


def _box_office() -> list[AgentProfile]:
    return [
        AgentProfile.build(
            "bookings",
            texts=["Looks up, changes and cancels ticket bookings by their BK- number."],
            keywords=["booking", "ticket", "cancel"],
            tool_names=["boxoffice_booking_status", "boxoffice_cancel_booking"],
            parameter_names=["booking_id"],
        ),
        AgentProfile.build(
            "seating",
            texts=["Shows which seats are free and moves a booking to other seats."],
            keywords=["seat", "seating plan", "wheelchair space"],
            tool_names=["seating_free_seats", "seating_assign_seats"],
            parameter_names=["booking_id", "seats"],
        ),
        AgentProfile.build(
            "planner",
            texts=["Plans a request of several steps and carries it out step by step."],
            plans=True,
        ),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "For booking BK-31877, could we have seats C7 and C8 please?",
        "Please move booking BK-52390 to seats D12 and D13, if they are free.",
    ],
)
def test_which_booking_and_on_what_condition_are_details_of_one_step(
    encoder: Encoder, text: str
) -> None:
    decision = Router(_box_office(), encoder).decide(text)
    assert not decision.compound
    assert decision.agent != "planner"


def test_a_booking_looked_up_then_moved_is_still_two_steps(encoder: Encoder) -> None:
    decision = Router(_box_office(), encoder).decide(
        "Cancel booking BK-31877, then show me which seats are free on Friday"
    )
    assert decision.compound and decision.agent == "planner"


def test_the_story_a_step_is_to_record_does_not_make_it_a_story(default_team: Router) -> None:
    decision = default_team.decide(
        "Read starter_log.md, then log an event that Doris was sluggish on 2025-10-11."
    )
    assert decision.compound and decision.agent == "planner"


def test_a_back_quoted_command_after_a_colon_is_the_work_not_content(
    default_team: Router,
) -> None:
    decision = default_team.decide("Count the lines of the spring data: `wc -l data/spring.csv`")
    assert decision.candidates[0].name == "operator"
    assert decision.candidates[0].structure > 0


@pytest.mark.parametrize("text", ["Open recipes/croissants.md", "Show me suppliers.md"])
def test_a_file_named_with_a_word_or_two_goes_to_whoever_takes_files_most_fully(
    default_team: Router, text: str
) -> None:
    decision = default_team.decide(text)
    assert decision.candidates[0].name == "operator"
    assert decision.agent in ("operator", None)


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("add to the knowledge base: the staging url is http://x", "add to the knowledge base"),
        (
            "Write 'Celebration cakes: 30% deposit' into notes/terms.txt",
            "Write 'Celebration cakes: 30% deposit' into notes/terms.txt",
        ),
        ('Put "todo: call Sam" in notes.md', 'Put "todo: call Sam" in notes.md'),
    ],
)
def test_a_colon_inside_a_quoted_value_introduces_no_content(text: str, asked: str) -> None:
    assert instruction_of(text) == asked


def test_a_file_alone_after_a_comma_is_the_thing_the_step_before_names(
    default_team: Router,
) -> None:
    decision = default_team.decide("Pull up the plan for episode 44, episodes/ep044-outline.md.")
    assert not decision.compound
    assert decision.candidates[0].name == "operator"
    assert default_team.decide("Plan the launch, then write docs/launch.md.").compound


def test_a_question_after_a_lookup_that_names_nothing_new_asks_about_its_thing(
    encoder: Encoder,
) -> None:
    team = [
        *_box_office(),
        AgentProfile.build(
            "shows",
            texts=["Tells which shows are on and when."],
            keywords=["exhibition", "show"],
            tool_names=["shows_on_date"],
            parameter_names=["date"],
        ),
    ]
    decision = Router(team, encoder).decide(
        "can u chek my bookng BK-31877 pls, whats the date and how many of us did we say"
    )
    assert not decision.compound
    assert decision.candidates[0].name == "bookings"


def test_a_short_question_that_refers_back_asks_about_the_step_before_s_thing(
    encoder: Encoder,
) -> None:
    team = [
        AgentProfile.build(
            "supplies",
            texts=["Sells packing supplies: boxes, tape, bubble wrap."],
            keywords=["boxes", "tape", "sell"],
            tool_names=["shop_list_supplies"],
        ),
        AgentProfile.build(
            "units",
            texts=["Quotes storage units: sizes and how much they cost a month."],
            keywords=["how much", "unit", "price"],
            tool_names=["units_quote"],
        ),
    ]
    router = Router(team, encoder)

    decision = router.decide("What boxes do you sell and how much are they?")

    assert not decision.compound
    assert decision.candidates[0].name == "supplies"
    assert router.decide("What boxes do you sell, and what does a small unit cost?").compound


@pytest.mark.parametrize(
    ("text", "agent"),
    [
        ("Remember that my editor Sam wants stems as 48 kHz WAV files.", "chronicler"),
        (
            "Create a skill called weekend_totals that runs python3 scripts/weekly_totals.py "
            "on the sales files it is given",
            "librarian",
        ),
        ("Make sure that notes.txt is still there", "operator"),
    ],
)
def test_what_a_keyword_asks_to_keep_after_that_says_nothing_of_whose_work_it_is(
    default_team: Router, text: str, agent: str
) -> None:
    assert default_team.decide(text).candidates[0].name == agent


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        (
            "whats free for 10 ppl on the 19th between 2 and 5pm, meeting-room wise?",
            2,
        ),
        ("Bitte einen Raum zwischen 10 und 12 Uhr am Freitag", 1),
        ("reserva la sala entre las 3 y las 5 de la tarde", 1),
    ],
)
def test_the_and_of_a_range_joins_its_two_ends_not_two_steps(text: str, parts: int) -> None:
    clauses = split_clauses(text)

    assert len(clauses) == parts
    assert any(re.search(r"\b(2|10|3)\b.*\b(5pm|12|5)\b", c) for c in clauses)


@pytest.mark.parametrize(
    "text",
    [
        "Open https://www.example.org/contact and find their events contact email.",
        "Visit https://en.wikipedia.org/wiki/Porter_(beer) and extract the History section.",
        "Abre o site https://example.com.br/agenda e me diz quais eventos há este mês.",
        "Go to https://books.example.org and search for titles about beekeeping.",
        "Öffne https://www.beispiel.de und suche nach den Öffnungszeiten.",
    ],
)
def test_reading_something_off_a_page_just_opened_is_the_same_step(
    default_team: Router, text: str
) -> None:
    decision = default_team.decide(text)

    assert not decision.compound
    assert decision.agent == "navigator"


@pytest.mark.parametrize(
    "text",
    [
        "Take a screenshot of https://example.com and then list the files in the folder.",
        "Open https://example.com and save its title to the knowledge base.",
    ],
)
def test_a_step_after_opening_a_page_that_is_not_reading_it_is_still_a_step(
    default_team: Router, text: str
) -> None:
    decision = default_team.decide(text)

    assert decision.compound and decision.agent == "planner"


@pytest.mark.parametrize(
    "text",
    [
        "Is the recycling centre open on Saturday? Also apply for a van permit for VN22 WXY.",
        "Ist der Wertstoffhof am Samstag offen? Außerdem brauche ich eine Genehmigung.",
    ],
)
def test_a_sentence_opening_with_also_after_another_is_a_step_of_its_own(text: str) -> None:
    assert len(split_clauses(text)) == 2


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("Lees het logboek en leg daarna de foutmelding vast in het geheugen.", 2),
        ("Open de pagina en daarna schrijf een samenvatting naar notes/x.md.", 2),
        ("Leggi il file config.yaml e poi apri la pagina del mercato.", 2),
        # "en" alone is also the French and Spanish "in": no step of its own.
        ("Écris le rapport en PDF pour le comité.", 1),
        ("Busca en la base de conocimiento la receta del pan.", 1),
    ],
)
def test_a_dutch_and_joins_steps_only_when_the_second_says_daarna(text: str, parts: int) -> None:
    assert len(split_clauses(text)) == parts


def test_what_a_later_step_asks_to_record_after_que_says_nothing_of_whose_work_it_is(
    default_team: Router,
) -> None:
    decision = default_team.decide(
        "puis note dans le journal des événements que le mot de passe du NAS a changé"
    )

    assert decision.candidates[0].name == "chronicler"


def test_a_part_that_opens_with_a_number_is_the_next_item_not_a_step(encoder: Encoder) -> None:
    team = [
        AgentProfile.build(
            "dispatch",
            texts=["Sends drivers and vans out, and says who drives which route."],
            keywords=["driver", "route", "van"],
            tool_names=["dispatch_assign_driver"],
            parameter_names=["driver_id", "route_id"],
        ),
        AgentProfile.build(
            "pickups",
            texts=["Books, moves and cancels parcel pickups from customers."],
            keywords=["pickup", "collect", "boxes"],
            tool_names=["pickup_book_pickup"],
            parameter_names=["postcode", "date"],
        ),
    ]

    decision = Router(team, encoder).decide(
        "Could your driver drop off a roll of packing tape and 20 medium boxes "
        "with tomorrow's pickup?"
    )

    assert not decision.compound


def test_a_last_step_that_names_a_team_word_with_an_ending_is_still_a_step(
    encoder: Encoder,
) -> None:
    team = [
        AgentProfile.build(
            "records",
            texts=["Keeps each pet's record: its weight, vaccinations and microchip."],
            keywords=["weight", "vaccination", "microchip"],
            tool_names=["records_record_weight", "records_find_pet"],
        ),
        AgentProfile.build(
            "billing",
            texts=["Looks up invoices and says what a treatment will cost."],
            keywords=["invoice", "price", "cost"],
            tool_names=["billing_lookup_invoice", "billing_estimate"],
        ),
    ]
    decision = Router(team, encoder).decide(
        "Update Teddy's weight (PT-14812) to 9.2 kg and then tell me what a dental "
        "cleaning for a dog costs."
    )
    # "costs" is the billing desk's "cost": the part asks something new.
    assert decision.compound


def test_an_identifier_after_a_later_step_is_no_place_for_the_step_before(
    encoder: Encoder,
) -> None:
    team = [
        AgentProfile.build(
            "bookings",
            texts=["Books meeting rooms and desks. A member number (KC-####)."],
            keywords=["meeting room", "room", "desk", "booking"],
            tool_names=["rooms_free_rooms", "rooms_book_room"],
        ),
        AgentProfile.build(
            "mailroom",
            texts=[
                "Lists what is in a member's mail tray and forwards it. A member number (KC-####)."
            ],
            keywords=["parcel", "letter"],
            tool_names=["post_items", "post_forward"],
        ),
    ]
    decision = Router(team, encoder).decide(
        "Which rooms are free on 2026-03-30 from 09:00 to 10:00 for 4 people, and then "
        "list what's in my mail tray. KC-1904"
    )
    # The member number after the mail step is a detail, not where the room
    # search puts its result: the mail step is a step of its own.
    assert decision.compound


def _theatre() -> list[AgentProfile]:
    return [
        AgentProfile.build(
            "programme",
            texts=[
                "Says what is on: performances with their PF- numbers, running times "
                "and which seats are free. A performance number (PF-####)."
            ],
            keywords=["performance", "running time", "seat", "matinee"],
            tool_names=["programme_performances", "programme_free_seats"],
            parameter_names=["performance_id"],
        ),
        AgentProfile.build(
            "tickets",
            texts=["Looks up and changes ticket bookings. A booking reference (TK-######)."],
            keywords=["ticket", "booking reference", "exchange"],
            tool_names=["tickets_find_booking", "tickets_exchange"],
            parameter_names=["booking_ref"],
        ),
        AgentProfile.build(
            "groups",
            texts=[
                "Gives age guidance for a show and books school group visits. "
                "A performance number (PF-####) and the size of the group."
            ],
            keywords=["group", "school", "pupils", "workshop"],
            tool_names=["groups_book_group", "groups_quote"],
            parameter_names=["performance_id", "party_size"],
        ),
        AgentProfile.build(
            "planner",
            texts=["Plans a request of several steps and carries it out step by step."],
            plans=True,
        ),
    ]


def test_a_question_joined_by_and_about_what_the_step_looks_up_is_one_ask(
    encoder: Encoder,
) -> None:
    decision = Router(_theatre(), encoder).decide(
        "Can you look up booking TK-408215 and tell me which seats I have?"
    )
    # "seats" is the programme's word, but without "then" the question is
    # about the booking just looked up.
    assert not decision.compound
    assert decision.agent != "planner"


def test_a_thing_joined_by_and_that_the_first_agent_takes_too_is_one_ask(
    encoder: Encoder,
) -> None:
    decision = Router(_theatre(), encoder).decide(
        "Can you give me the running time and age guidance for show PF-1243?"
    )
    assert not decision.compound
    assert decision.agent != "planner"


def test_a_question_ordered_after_the_step_by_then_is_still_a_step(encoder: Encoder) -> None:
    decision = Router(_theatre(), encoder).decide(
        "Exchange the tickets of booking TK-408215, and then tell me which seats are free "
        "at the matinee"
    )
    assert decision.compound and decision.agent == "planner"
