"""Reading the orchestrator's JSON choice (router.agent_schema)."""

from __future__ import annotations

import pytest

from troupe.routing.agent_schema import (
    Choice,
    choice_reply,
    choice_schema,
    offered_agents,
    read_choice,
)

TEAM = ["operator", "vault"]


def test_the_schema_lets_the_model_name_only_a_team_member_or_none() -> None:
    schema = choice_schema(TEAM)

    assert schema["properties"]["agent"]["enum"] == ["operator", "vault", "none"]
    assert schema["required"] == ["agent", "answer"]


@pytest.mark.parametrize(
    ("reply", "choice"),
    [
        ('{"agent": "vault", "answer": ""}', Choice("vault", "")),
        (' {"agent": "none", "answer": "Paris."}\n', Choice(None, "Paris.")),
    ],
)
def test_a_choice_is_read_from_the_json_reply(reply: str, choice: Choice) -> None:
    assert read_choice(reply, TEAM) == choice


@pytest.mark.parametrize(
    "reply",
    [
        "Sure, the vault should do this.",
        '{"agent": "browser_agent", "answer": ""}',
        '{"agent": "none", "answer": ""}',
        '["vault"]',
        '{"answer": "hi"}',
    ],
)
def test_a_reply_that_is_not_a_usable_choice_is_left_as_it_is(reply: str) -> None:
    assert read_choice(reply, TEAM) is None


def test_a_model_tells_a_choice_schema_from_other_schemas_and_answers_in_its_form() -> None:
    assert offered_agents(choice_schema(TEAM)) == TEAM
    assert offered_agents({"type": "object", "properties": {}}) is None
    assert offered_agents(None) is None
    assert read_choice(choice_reply("vault"), TEAM) == Choice("vault", "")
    assert read_choice(choice_reply(None, "Paris."), TEAM) == Choice(None, "Paris.")
