"""What goes to troupe's planning agent on a user's team: a team whose own
member plans its work ("plan a trip" is the journeys desk's keyword) keeps that
work ("plan a journey from A to B"), the story told with a request ("the tram
had a long delay and I missed my train") is no step of its own, and a request
of steps for several agents, or that asks for a plan of steps, still goes to
the planning agent."""

from __future__ import annotations

import pytest

from troupe.routing.encoder import Encoder
from troupe.routing.router import AgentProfile, Router


def _transit(journeys_plan: bool) -> list[AgentProfile]:
    plan = ["plan a trip"] if journeys_plan else []
    return [
        AgentProfile.build(
            "journeys",
            texts=["Finds journeys between stops and says how the lines run."],
            keywords=["journey", "timetable", "departure", "delay", *plan],
            tool_names=["trip_plan_journey", "trip_line_status"],
            parameter_names=["origin", "destination", "depart_at"],
        ),
        AgentProfile.build(
            "tickets",
            texts=["Sells passes and looks after smartcards."],
            keywords=["ticket", "pass", "smartcard", "fare"],
            tool_names=["ticket_buy_pass", "ticket_card_status"],
            parameter_names=["card", "pass_type"],
        ),
        AgentProfile.build(
            "planner",
            texts=["Breaks a request of several steps into a plan."],
            keywords=["plan", "steps", "step by step"],
            tool_names=["plan_write"],
        ),
    ]


JOURNEY = "Plan a journey from Westbury to the Royal Infirmary on Friday, leaving at 08:15."


def test_a_journey_plan_is_the_journeys_desk_s_when_planning_trips_is_its_work(
    encoder: Encoder,
) -> None:
    decision = Router(_transit(journeys_plan=True), encoder).decide(JOURNEY)

    assert (decision.kind, decision.agent, decision.compound) == ("route", "journeys", False)


def test_without_that_keyword_the_same_request_asks_the_planning_agent(encoder: Encoder) -> None:
    decision = Router(_transit(journeys_plan=False), encoder).decide(JOURNEY)

    assert decision.agent == "planner"


def test_a_plan_of_several_steps_still_goes_to_the_planning_agent(encoder: Encoder) -> None:
    decision = Router(_transit(journeys_plan=True), encoder).decide(
        "Plan my Monday: check the timetable for line 14, then buy a weekly pass."
    )

    assert (decision.kind, decision.agent) == ("route", "planner")


@pytest.mark.parametrize(
    "text",
    [
        "I want my money back for my weekly pass, the tram had a long delay and I missed my train.",
        "Can I get a refund on my smartcard fare, the departure was cancelled and no bus came.",
    ],
)
def test_the_story_behind_a_request_is_not_a_step_for_the_planning_agent(
    encoder: Encoder, text: str
) -> None:
    decision = Router(_transit(journeys_plan=False), encoder).decide(text)

    assert decision.agent != "planner" and not decision.compound


def test_steps_for_two_agents_still_go_to_the_planning_agent(encoder: Encoder) -> None:
    decision = Router(_transit(journeys_plan=False), encoder).decide(
        "Check the timetable for line 14 and then buy a weekly pass."
    )

    assert (decision.kind, decision.agent, decision.compound) == ("route", "planner", True)


def _service_desk() -> list[AgentProfile]:
    return [
        AgentProfile.build(
            "contracts",
            texts=["Sells and renews maintenance contracts and service plans for boilers."],
            keywords=["maintenance contract", "service plan", "plan", "renewal"],
            tool_names=["contracts_list_plans", "contracts_renew"],
            parameter_names=["contract_id", "appliance"],
            plans=False,
        ),
        AgentProfile.build(
            "billing",
            texts=["Sends invoices and takes payments."],
            keywords=["invoice", "payment"],
            tool_names=["billing_pay_invoice"],
            parameter_names=["invoice_id"],
        ),
        AgentProfile.build(
            "planner",
            texts=["Breaks a request of several steps into a plan."],
            keywords=["plan", "steps", "step by step"],
            tool_names=["plan_write"],
        ),
    ]


def test_a_plan_named_by_a_members_own_word_before_it_is_that_members_thing(
    encoder: Encoder,
) -> None:
    decision = Router(_service_desk(), encoder).decide(
        "What maintenance plans do you offer for a heat pump, and how much are they per month?"
    )
    assert not decision.compound
    assert decision.agent == "contracts"


@pytest.mark.parametrize(
    "text",
    [
        "Which plan am I on, and is the renewal due soon? Contract SC-2041.",
        "¿Qué plan tengo contratado para la caldera? Contrato SC-2041",
    ],
)
def test_asking_which_plan_one_has_is_the_member_s_whose_keyword_plan_is(
    encoder: Encoder, text: str
) -> None:
    decision = Router(_service_desk(), encoder).decide(text)

    assert not decision.compound
    assert decision.agent != "planner"
