"""Config refuses values that cannot work, naming each one, before a tree is built."""

from __future__ import annotations

from typing import Any

import pytest

import troupe
from troupe.errors import InvalidRequestError


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({"max_delegation_rounds": -1}, "max_delegation_rounds must be 0 or more, not -1"),
        ({"max_model_calls": 0}, "max_model_calls must be 1 or more, not 0"),
        ({"max_repeated_calls": 1}, "max_repeated_calls must be 2 or more, not 1"),
        ({"model_retries": -2}, "model_retries must be 0 or more, not -2"),
        ({"retry_base_delay": -0.5}, "retry_base_delay must be 0 or more, not -0.5"),
        ({"turn_timeout_s": 0}, "turn_timeout_s must be greater than 0, not 0 (None means"),
        ({"max_model_calls": "10"}, "max_model_calls must be a whole number, not '10'"),
        ({"max_delegation_rounds": True}, "max_delegation_rounds must be a whole number"),
        ({"tools": "fs_read"}, "tools must be a list of troupe.Tool objects"),
    ],
)
def test_a_value_that_cannot_work_is_refused_with_its_name(
    options: dict[str, Any], complaint: str
) -> None:
    with pytest.raises(troupe.ConfigError) as caught:
        troupe.Config(**options)

    assert complaint in str(caught.value)


def test_every_bad_value_is_named_at_once() -> None:
    with pytest.raises(troupe.ConfigError) as caught:
        troupe.Config(max_model_calls=0, model_retries=-1)

    assert "max_model_calls" in str(caught.value) and "model_retries" in str(caught.value)


def test_no_turn_limit_and_the_smallest_accepted_values_are_fine() -> None:
    config = troupe.Config(
        turn_timeout_s=None,
        max_delegation_rounds=0,
        max_model_calls=1,
        max_repeated_calls=2,
        model_retries=0,
        retry_base_delay=0,
    )

    assert config.turn_timeout_s is None


@pytest.mark.parametrize(
    ("session_id", "text", "complaint"),
    [
        ("s1", "", "The message is empty"),
        ("s1", "   \n", "The message is empty"),
        ("s1", None, "must be text"),
        ("", "hello", "session_id must be a non-empty string"),
        (None, "hello", "session_id must be a non-empty string"),
    ],
)
async def test_a_message_or_session_id_that_cannot_start_a_turn_is_refused(
    session_id: Any, text: Any, complaint: str
) -> None:
    assistant = troupe.Assistant(troupe.build_agent_tree(troupe.Config()))

    with pytest.raises(InvalidRequestError, match=complaint):
        await assistant.run_and_collect(session_id, text)
