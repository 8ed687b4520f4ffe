"""When the router says a request is nobody's work.

A request far from every agent is nobody's only when it is about as close to
work nobody on the team does: something an agent's author wrote it cannot do
and no teammate is described by, or work no software team does (paying a
bill, switching on the lights). Otherwise it is a paraphrase of some agent's
work, left to the model with that agent as its guess. An identifier that
several agents take counts for each of them by that share, so it does not
outweigh the words that name the work. A question about the user's own
thing in an agent's words is the team's, however misspelt."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from troupe.routing.encoder import Encoder
from troupe.routing.router import AgentProfile, Router

TEAMS = Path(__file__).parent.parent / "bench" / "teams"


def _workshop(parts_desk: bool = False) -> list[AgentProfile]:
    """A bike workshop's desks, as a user would describe them."""
    team = [
        AgentProfile.build(
            "repairs",
            texts=["Books bikes in for repair and says how a repair job (RJ-#####) is going."],
            keywords=["repair", "service", "puncture", "brakes", "gears"],
            tool_names=["repair_book", "repair_status", "repair_cancel"],
            parameter_names=["job_id", "customer_number", "bike"],
            refusals=["sell gift cards", "sell parts or accessories"],
        ),
        AgentProfile.build(
            "rentals",
            texts=["Rents out city and cargo bikes by the day to customers (CU-####)."],
            keywords=["rent", "rental", "hire", "cargo bike"],
            tool_names=["rental_book", "rental_return"],
            parameter_names=["customer_number", "days"],
            refusals=["repair bikes"],
        ),
    ]
    if parts_desk:
        team.append(
            AgentProfile.build(
                "parts",
                texts=["Sells parts and accessories: chains, tyres, lights, locks."],
                keywords=["chain", "tyre", "light", "lock", "accessories"],
                tool_names=["parts_order", "parts_stock"],
                parameter_names=["part", "quantity"],
            )
        )
    return team


@pytest.fixture(scope="module")
def router(encoder: Encoder) -> Router:
    return Router(_workshop(), encoder)


def test_what_an_author_says_no_agent_does_is_nobodys(router: Router) -> None:
    decision = router.decide("Can I get a gift card worth 40 euros for my brother?")
    assert decision.agent is None
    assert decision.nobody


def test_a_refusal_that_names_a_teammates_work_declines_nothing(encoder: Encoder) -> None:
    router = Router(_workshop(parts_desk=True), encoder)
    decision = router.decide("I'd like to buy a new chain and two tyres for my road bike.")
    assert not decision.nobody
    assert decision.candidates[0].name == "parts"


@pytest.mark.parametrize(
    "text",
    [
        "Pay my electricity bill for this month.",
        "Turn the lights off in the living room.",
        "Order a large pizza to the workshop for lunch.",
    ],
)
def test_work_no_team_does_is_nobodys(router: Router, text: str) -> None:
    decision = router.decide(text)
    assert decision.agent is None
    assert decision.nobody


def test_a_paraphrase_far_from_its_agent_keeps_its_agent_as_the_guess(router: Router) -> None:
    decision = router.decide("My wheel wobbles since Tuesday, could somebody have a look at it?")
    assert not decision.nobody
    assert decision.candidates[0].name == "repairs"


def _desks(classes_take_member_numbers: bool) -> list[AgentProfile]:
    classes = "Books members into exercise classes on the timetable."
    if classes_take_member_numbers:
        classes = "Books members (KL-######) into exercise classes on the timetable."
    return [
        AgentProfile.build(
            "members",
            texts=["Looks after memberships; a member number looks like KL-######."],
            keywords=["membership", "renewal"],
            tool_names=["member_details", "member_freeze"],
            parameter_names=["member_number"],
        ),
        AgentProfile.build(
            "classes",
            texts=[classes],
            keywords=["class", "timetable", "yoga", "spin"],
            tool_names=["class_book", "class_timetable"],
            parameter_names=["member_number", "day"],
        ),
        AgentProfile.build(
            "courts",
            texts=["Hires out the squash, badminton and tennis courts by the hour."],
            keywords=["court", "squash", "badminton", "tennis"],
            tool_names=["court_book", "court_free_times"],
            parameter_names=["sport", "day", "start"],
        ),
    ]


@pytest.mark.parametrize(("shared", "share"), [(False, 1.0), (True, 0.5)])
def test_an_identifier_counts_for_each_agent_that_takes_it_by_its_share(
    encoder: Encoder, shared: bool, share: float
) -> None:
    decision = Router(_desks(shared), encoder).decide(
        "Book squash for Saturday at 11:00 for 60 minutes, member KL-450091"
    )
    structure = {c.name: c.structure for c in decision.candidates}
    assert structure["members"] == share
    assert structure["classes"] == (share if shared else 0.0)
    assert structure["courts"] == 0.0


def test_a_router_with_another_threshold_keeps_the_teams_gaps(router: Router) -> None:
    text = "Can I get a gift card worth 40 euros for my brother?"
    assert router.with_threshold(0.3).decide(text).nobody


def _solar_desk() -> list[AgentProfile]:
    return [
        AgentProfile.build(
            "billing",
            texts=[
                "Sends invoices, takes payments and says which grants and subsidies "
                "help finance an installation."
            ],
            keywords=["invoice", "payment", "subsidy", "grant", "finance"],
            tool_names=["billing_invoice", "billing_pay", "billing_subsidy_check"],
            parameter_names=["invoice_id", "amount", "postcode"],
            refusals=["arrange loans or financing"],
        ),
        AgentProfile.build(
            "quotes",
            texts=["Prices solar panels, batteries and heat pumps for a home (Q-#####)."],
            keywords=["quote", "price", "estimate", "heat pump", "solar panels"],
            tool_names=["quote_estimate", "quote_accept"],
            parameter_names=["quote_id", "postcode"],
        ),
    ]


def test_what_the_best_agents_own_author_says_it_cannot_do_is_nobodys(
    encoder: Encoder,
) -> None:
    router = Router(_solar_desk(), encoder)
    loan = router.decide(
        "Pouvez-vous m'aider à obtenir un prêt bancaire pour financer la pompe à chaleur ?"
    )
    assert loan.nobody and loan.agent is None
    payment = router.decide("Pay invoice INV-204431 please")
    assert payment.kind == "route" and payment.agent == "billing"


def test_a_misspelt_question_about_the_users_own_thing_is_never_answered_directly(
    encoder: Encoder,
) -> None:
    # The shop team of bench/teams, as its author describes it: "wat is the
    # stauts" reads like small talk, "my ordr" names the orders desk's keyword.
    topology = yaml.safe_load((TEAMS / "shop" / "topology.yaml").read_text())
    team = [
        AgentProfile.build(a["name"], texts=[a["description"]], keywords=a["keywords"])
        for a in topology["agents"]
    ]

    decision = Router(team, encoder).decide("wat is the stauts of my ordr?")

    assert decision.kind != "direct"
    assert decision.agent == "orders"


def _claims_desks() -> list[AgentProfile]:
    """A claims office where every desk takes a claim number (CL-#####)."""
    return [
        AgentProfile.build(
            "claims",
            texts=["Opens new home-insurance claims and says where a claim (CL-#####) stands."],
            keywords=["claim", "new claim", "damage"],
            tool_names=["claims_open", "claims_status"],
            parameter_names=["claim_number", "policy_number"],
        ),
        AgentProfile.build(
            "payouts",
            texts=["Says what was paid out on a claim (CL-#####), when and to which account."],
            keywords=["payout", "payment", "paid", "money"],
            tool_names=["payout_status", "payout_breakdown"],
            parameter_names=["claim_number"],
        ),
        AgentProfile.build(
            "documents",
            texts=["Receives photos, receipts and reports for a claim (CL-#####)."],
            keywords=["document", "photo", "receipt", "upload"],
            tool_names=["documents_list", "documents_add"],
            parameter_names=["claim_number", "kind"],
        ),
    ]


def test_a_word_every_desk_is_described_by_routes_to_none_of_them(encoder: Encoder) -> None:
    router = Router(_claims_desks(), encoder)

    shared = router.decide("What happened to the rest of my claim CL-39877?")
    own = router.decide("Has the payout for claim CL-39877 been made yet?")

    assert router.distinctness("claim") == 0.0
    assert not (shared.kind == "route" and shared.agent == "claims")
    assert not next(c for c in shared.candidates if c.name == "claims").keyword
    assert own.candidates[0].name == "payouts"
