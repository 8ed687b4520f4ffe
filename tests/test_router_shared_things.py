"""The router on a team whose agents all work on the same thing (a library
card here): the thing names nobody's work, a step that only refers back to
what came before ("cancel it") names nobody either, and a question about the
difference between two agents' work is one question, not two steps."""

from __future__ import annotations

import pytest

from troupe.routing.encoder import default_encoder
from troupe.routing.router import AgentProfile, Candidate, Router, lexical_score

LENDING = AgentProfile.build(
    "lending",
    texts=["Lends books: checks items out to a card, checks returned items in, renews loans."],
    keywords=["loan", "loans", "check out", "check in", "renew", "barcode"],
    tool_names=["lend_check_out", "lend_check_in", "lend_renew_loan", "lend_list_loans"],
    parameter_names=["card_number", "barcode"],
)
RESERVATIONS = AgentProfile.build(
    "reservations",
    texts=["Places holds on titles for a card and cancels them."],
    keywords=["hold", "holds", "reserve"],
    tool_names=["hold_place", "hold_cancel", "hold_list"],
    parameter_names=["card_number", "title_id", "hold_id"],
)
CARDS = AgentProfile.build(
    "cards",
    texts=["Looks after library cards: registers members, renews memberships, replaces cards."],
    keywords=["membership", "library card", "stolen card", "replacement card", "cards"],
    tool_names=["card_register", "card_renew_membership", "card_replace"],
    parameter_names=["card_number", "reason"],
)
ROOMS = AgentProfile.build(
    "rooms",
    texts=["Books study rooms for a card holder and cancels bookings."],
    keywords=["room", "study room"],
    tool_names=["room_book", "room_cancel_booking"],
    parameter_names=["card_number", "booking_id", "date"],
)
PLANNER = AgentProfile.build(
    "planner", texts=["Orders the steps of a request for the team."], keywords=["plan"]
)


@pytest.fixture(scope="module")
def library() -> Router:
    encoder = default_encoder()
    assert encoder is not None
    return Router([LENDING, RESERVATIONS, CARDS, ROOMS, PLANNER], encoder)


def test_the_card_every_agent_takes_does_not_pull_a_loan_to_the_card_desk(
    library: Router,
) -> None:
    decision = library.decide("Renew item 39417762 for card EL-251893.")

    assert decision.candidates[0].name == "lending"


def test_a_card_named_as_the_work_still_reaches_the_card_desk(library: Router) -> None:
    decision = library.decide("Renew the membership of card EL-247713.")

    assert decision.candidates[0].name == "cards"


def test_a_step_that_only_refers_back_is_not_another_agents_step(library: Router) -> None:
    decision = library.decide("Card EL-212958 was stolen; cancel it and issue a replacement card.")

    assert not decision.compound
    assert decision.agent != "planner"


def test_a_question_on_the_difference_between_two_agents_work_is_one_question(
    library: Router,
) -> None:
    decision = library.decide("What's the difference between a hold and a loan, in one sentence?")

    assert not decision.compound
    assert decision.kind != "route"


def test_steps_for_two_agents_still_go_to_the_planner(library: Router) -> None:
    decision = library.decide(
        "Check in barcode 39517742, then book study room A for card EL-248193."
    )

    assert decision.compound and decision.agent == "planner"


def test_a_keyword_cut_short_is_a_word_of_its_own() -> None:
    # French "fin" (end) is not a typo of "fine"; "rom" is one of "room", and
    # "tip" is the singular of "tips".
    assert lexical_score("merci, bonne fin de journée", ["fine"]) == 0
    assert lexical_score("is a rom free on friday", ["room"]) > 0
    assert lexical_score("how much is in the tip pool", ["tips"]) > 0


def test_work_asked_in_a_verb_nobody_on_the_team_is_described_by_is_not_routed(
    library: Router,
) -> None:
    # "members" names the card desk's subject; texting them is nobody's work.
    nobodys = library.decide("Send a text message to all members about the holiday closing.")
    typo = library.decide("Palce a hold on title T-40318 for card EL-229874.")

    assert nobodys.kind != "route"
    assert typo.kind == "route" and typo.agent == "reservations"


def test_a_verb_of_every_kind_of_work_is_no_strangers_verb(library: Router) -> None:
    # "look up" is how people ask for any lookup; nobody need be described by it.
    decision = library.decide("Look up the loans on card EL-240517, please.")

    assert (decision.kind, decision.agent) == ("route", "lending")


def _ranked(other_meaning: float) -> list[Candidate]:
    """The rooms desk named by its keyword alone; the lending desk a little
    closer in meaning, as a misspelt request leaves them."""
    return [
        Candidate("rooms", 0.6, 0.20, 1.0, 0.0, 0.40, True, True),
        Candidate("lending", 0.26, other_meaning, 0.0, 0.0, 0.40, False, False),
        Candidate("cards", 0.1, 0.1, 0.0, 0.0, 0.2, False, False),
        Candidate("reservations", 0.1, 0.1, 0.0, 0.0, 0.2, False, False),
    ]


def test_words_that_name_one_agent_carry_a_route_the_meaning_nearly_ties(
    library: Router,
) -> None:
    text = "any free stduy rooms tomorow afternon"
    nearly = library._judge(text, _ranked(0.22), 0.0, 0.0, False)
    clearly = library._judge(text, _ranked(0.26), 0.0, 0.0, False)

    assert (nearly.kind, nearly.agent) == ("route", "rooms")
    assert clearly.kind == "defer"


def test_a_handful_of_examples_leaves_an_agent_known_by_its_role() -> None:
    # Two or three examples do not cover an agent's work in every language it
    # is asked in; the rules for agents known by their role still hold.
    few = AgentProfile.build("rooms", texts=["Books study rooms."], examples=["book room 2"] * 3)
    enough = AgentProfile.build(
        "rooms", texts=["Books study rooms."], examples=[f"book room {n}" for n in range(8)]
    )

    assert not few.has_examples
    assert enough.has_examples
    assert "book room 2" in few.phrases  # still compared for meaning
