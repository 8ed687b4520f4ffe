"""The router reads the identifiers a team's tools describe: a ticket number
"MT-######" is the repair desk's, a parcel number "PC-######" the mailroom's,
so a request that gives one names that agent's thing, in any language, as a
URL names the browser's."""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools.base_tool import BaseTool
from google.genai import types

from troupe.routing.encoder import Encoder
from troupe.routing.fastpath import agent_profile
from troupe.routing.router import AgentProfile, Router


def _desk(described: bool) -> list[AgentProfile]:
    ticket = " (MT-######)" if described else ""
    parcel = " (PC-######)" if described else ""
    return [
        AgentProfile.build(
            "repairs",
            texts=["Handles repair jobs in the flats.", f"The state of one repair ticket{ticket}."],
            keywords=["repair", "broken", "leak"],
            tool_names=["fix_ticket_status", "fix_report_fault"],
            parameter_names=["ticket_id", "unit"],
        ),
        AgentProfile.build(
            "mailroom",
            texts=["Keeps the residents' post at the desk.", f"Where one parcel is{parcel}."],
            keywords=["parcel", "delivery"],
            tool_names=["post_track_parcel", "post_log_delivery"],
            parameter_names=["parcel_id", "unit"],
        ),
        AgentProfile.build(
            "tenancies",
            texts=["Looks after tenants and their leases."],
            keywords=["tenant", "lease"],
            tool_names=["lease_find_tenant", "lease_renew"],
            parameter_names=["unit", "months"],
        ),
    ]


def test_the_letters_of_a_described_identifier_are_the_agents_shape() -> None:
    profile = AgentProfile.build(
        "desk",
        texts=[
            "One ticket (MT-######).",
            "A fee id: 'LF-' and five digits.",
            "Hashes a file with SHA-256.",
            "A flat, e.g. B-204.",
        ],
        parameter_texts=["^SP-\\d{5}$", "the parcel, e.g. PC-552810"],
    )

    assert profile.shapes == {"MT", "LF", "SP", "PC", "B"}


def test_an_example_identifier_alone_in_brackets_is_the_agents_shape() -> None:
    profile = AgentProfile.build(
        "visits",
        texts=["A job number (JOB-123456), or a postcode (2018) and a date (2026-03-05)."],
    )
    assert profile.shapes == {"JOB"}


def test_an_identifier_with_a_year_in_it_is_read_from_its_example_or_its_pattern() -> None:
    example = AgentProfile.build("loans", texts=["A loan number (LN-2025-031) or a partner."])
    pattern = AgentProfile.build("loans", texts=["Quote the loan number (LN-YYYY-NNN)."])
    assert example.shapes == pattern.shapes == {"LN"}


def test_a_foreign_request_with_a_parcel_number_reaches_the_mailroom(encoder: Encoder) -> None:
    text = "Wo liegt gerade das Paket PC-318204?"
    described = Router(_desk(described=True), encoder).decide(text)
    blind = Router(_desk(described=False), encoder).decide(text)

    assert (described.kind, described.agent) == ("route", "mailroom")
    assert described.candidates[0].structure == 1.0
    assert blind.candidates[0].structure == 0.0


def test_a_ticket_number_outweighs_a_word_of_another_agent(encoder: Encoder) -> None:
    decision = Router(_desk(described=True), encoder).decide(
        "Any news on job MT-204117? The tenant rang again."
    )

    assert decision.candidates[0].name == "repairs"


def test_an_identifier_no_tool_describes_is_no_structure(encoder: Encoder) -> None:
    decision = Router(_desk(described=True), encoder).decide("Where is parcel ZZ-771204 now?")

    assert all(c.structure == 0.0 for c in decision.candidates)


class _SchemaTool(BaseTool):
    """A tool with the description and parameter schemas it is given."""

    def __init__(self, name: str, description: str, properties: dict[str, Any]) -> None:
        super().__init__(name=name, description=description)
        self.properties = properties

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema={"type": "object", "properties": self.properties},
        )


async def test_a_parameter_pattern_gives_the_agent_its_shape() -> None:
    tool = _SchemaTool(
        "post_track_parcel",
        "Where one parcel is.",
        {"parcel_id": {"type": "string", "pattern": "^PC-[0-9]{6}$"}},
    )
    agent = LlmAgent(name="mailroom", tools=[tool])

    profile = await agent_profile(agent, None)

    assert profile.shapes == {"PC"}
    assert "parcel" in profile.inputs


def test_letters_the_digits_follow_at_once_are_a_shape_of_their_own(encoder: Encoder) -> None:
    catalogue = AgentProfile.build(
        "catalogue",
        texts=["Sells the shop's goods.", "One product by its SKU (e.g. SH-1102)."],
        keywords=["product", "size"],
    )
    shipping = AgentProfile.build(
        "shipping",
        texts=["Delivers parcels.", "Where a parcel is, by its tracking number (SH + 10 digits)."],
        keywords=["parcel", "delivery"],
    )
    assert (catalogue.shapes, shipping.shapes) == ({"SH"}, {"SH#"})

    decision = Router([catalogue, shipping], encoder).decide("any news on SH5509123876??")

    assert {c.name: c.structure for c in decision.candidates} == {
        "shipping": 1.0,
        "catalogue": 0.0,
    }


def test_an_example_without_a_hyphen_gives_its_letters_and_digits_shape() -> None:
    fines = AgentProfile.build("fines", texts=["A ticket by its number (e.g. BX40217736)."])
    meters = AgentProfile.build("meters", texts=["A meter (M- and 4 digits, e.g. M-2041)."])

    assert (fines.shapes, meters.shapes) == ({"BX#"}, {"M"})


def test_short_identifiers_count_where_a_range_or_an_example_describes_them(
    encoder: Encoder,
) -> None:
    rooms = AgentProfile.build(
        "rooms", texts=["Books the rehearsal rooms.", "A room id (RH-1..RH-6) or its name."]
    )
    tutors = AgentProfile.build(
        "tutors", texts=["Knows the tutors' days.", "A tutor: an id such as TU-4, or a name."]
    )
    assert (rooms.shapes, tutors.shapes) == ({"RH"}, {"TU"})

    decision = Router([rooms, tutors], encoder).decide("ist TU-2 am Freitag da?")

    assert {c.name: c.structure for c in decision.candidates} == {"tutors": 1.0, "rooms": 0.0}


def _parcels(claims_parameter: str) -> list[AgentProfile]:
    return [
        AgentProfile.build(
            "tracking",
            texts=["Tracks parcels.", "tracking_number is KV followed by 10 digits."],
            keywords=["track", "where"],
            parameter_names=["tracking_number"],
            shape_parameters=[("KV#", "tracking_number")],
        ),
        AgentProfile.build(
            "claims",
            texts=["Opens claims for damaged or lost parcels."],
            keywords=["claim", "damaged"],
            parameter_names=[claims_parameter, "reason"],
        ),
    ]


def test_a_teammate_with_a_parameter_of_the_same_name_takes_the_identifier_too(
    encoder: Encoder,
) -> None:
    text = "KV1161042648 arrived with a crushed corner"
    shared = Router(_parcels("tracking_number"), encoder).decide(text)
    other = Router(_parcels("order_ref"), encoder).decide(text)

    assert {c.name: c.structure for c in shared.candidates} == {"tracking": 0.5, "claims": 0.5}
    assert {c.name: c.structure for c in other.candidates} == {"tracking": 1.0, "claims": 0.0}


def test_a_parameter_name_that_takes_two_shapes_gives_neither_to_a_teammate(
    encoder: Encoder,
) -> None:
    kennel = AgentProfile.build(
        "boarding",
        texts=["Boards dogs (BK-1234)."],
        parameter_names=["booking_id"],
        shape_parameters=[("BK", "booking_id")],
    )
    groomer = AgentProfile.build(
        "grooming",
        texts=["Grooms dogs (GR-1234)."],
        parameter_names=["booking_id"],
        shape_parameters=[("GR", "booking_id")],
    )

    decision = Router([kennel, groomer], encoder).decide("move GR-1042 to Friday")

    assert {c.name: c.structure for c in decision.candidates} == {
        "grooming": 1.0,
        "boarding": 0.0,
    }


async def test_a_shape_a_tool_describes_belongs_to_its_identifier_parameters() -> None:
    tool = _SchemaTool(
        "track_parcel",
        "Where a parcel is. tracking_number is KV followed by 10 digits.",
        {
            "tracking_number": {"type": "string"},
            "postcode": {"type": "string", "description": "e.g. AB1 2CD"},
        },
    )
    profile = await agent_profile(LlmAgent(name="tracking", tools=[tool]), None)

    assert profile.shapes == {"KV#"}
    assert profile.shape_parameters == {("KV#", "tracking_number")}


def test_a_part_that_only_says_what_an_identifier_is_is_not_a_step(encoder: Encoder) -> None:
    desk = _desk(described=True)
    decision = Router(desk, encoder).decide(
        "Has my parcel PC-318204 come in? I'm in flat 4 and the ticket is MT-204117."
    )

    # The ticket's number is a detail the desk may need, not a step for repairs.
    assert not decision.compound
    assert (decision.kind, decision.agent) == ("route", "mailroom")


def test_a_colon_after_an_identifier_says_who_asks_not_what_to_keep(encoder: Encoder) -> None:
    desk = _desk(described=True)
    text = "Hola, vivo en el piso 4, PC-318204: ¿ha llegado? Y el grifo gotea, MT-204117."

    decision = Router(desk, encoder).decide(text)

    # Both steps are read: the question after the colon is one of them.
    assert decision.compound
