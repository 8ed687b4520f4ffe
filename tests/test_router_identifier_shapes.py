"""The router reads the identifiers a team's tools describe: a ticket number
"MT-######" is the repair desk's, a parcel number "PC-######" the mailroom's,
so a request that gives one names that agent's thing, in any language, as a
URL names the browser's."""

from __future__ import annotations

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

    assert profile.shapes == {"MT", "LF", "SP", "PC"}


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


class _PatternTool(BaseTool):
    def __init__(self) -> None:
        super().__init__(name="post_track_parcel", description="Where one parcel is.")

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema={
                "type": "object",
                "properties": {
                    "parcel_id": {"type": "string", "pattern": "^PC-[0-9]{6}$"},
                },
            },
        )


async def test_a_parameter_pattern_gives_the_agent_its_shape() -> None:
    agent = LlmAgent(name="mailroom", tools=[_PatternTool()])

    profile = await agent_profile(agent, None)

    assert profile.shapes == {"PC"}
    assert "parcel" in profile.inputs
