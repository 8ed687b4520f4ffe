"""One error module: every error is a TroupeError, and each kind says whose mistake it was."""

from __future__ import annotations

import pytest

import troupe
from troupe.builtins import operator_tools
from troupe.builtins.workspace import Workspace
from troupe.errors import BadArgument, InvalidRequestError


@pytest.mark.parametrize(
    "kind",
    [
        troupe.ConfigError,
        troupe.ToolAdapterError,
        troupe.UnknownAgentError,
        InvalidRequestError,
        BadArgument,
    ],
)
def test_every_error_kind_derives_from_troupe_error(kind: type[Exception]) -> None:
    assert issubclass(kind, troupe.TroupeError)


def test_a_bad_tool_argument_is_not_a_value_error_in_disguise() -> None:
    assert not issubclass(BadArgument, ValueError)


async def test_a_tool_answers_a_bad_argument_with_the_value_and_what_it_accepts(
    tmp_path: object,
) -> None:
    tools = {t.name: t for t in operator_tools(Workspace(str(tmp_path)))}

    answer = tools["fs_read"].func(path="")

    assert "error" in answer and "accepted" in answer


async def test_an_empty_message_is_a_request_error_not_a_configuration_error() -> None:
    assistant = troupe.Assistant(troupe.build_agent_tree(troupe.Config(model="offline")))

    with pytest.raises(InvalidRequestError) as caught:
        await assistant.run_and_collect("s1", "")

    assert not isinstance(caught.value, troupe.ConfigError)
