"""troupe.Tool: construction, from_function, and name validation."""

from __future__ import annotations

import pytest

import troupe


def fs_read(path: str) -> str:
    """Read a text file.

    Returns the file's contents.
    """
    return path


def exec_shell(command: str) -> str:
    return command


def make_tool(name: str) -> troupe.Tool:
    return troupe.Tool(name=name, description=f"Tool {name}.", func=fs_read)


def test_tool_is_built_from_keywords() -> None:
    tool = troupe.Tool(name="fs_read", description="Read a file.", func=fs_read)

    assert tool.name == "fs_read"
    assert tool.description == "Read a file."
    assert tool.func is fs_read
    assert tool.dangerous is False


def test_tool_rejects_positional_arguments() -> None:
    with pytest.raises(TypeError):
        troupe.Tool("fs_read", "Read a file.", fs_read)  # type: ignore[call-arg]


def test_from_function_takes_name_and_docstring() -> None:
    tool = troupe.Tool.from_function(fs_read)

    assert tool.name == "fs_read"
    assert tool.description == "Read a text file.\n\nReturns the file's contents."
    assert tool.func is fs_read


def test_from_function_without_docstring_describes_tool_by_its_name() -> None:
    tool = troupe.Tool.from_function(exec_shell)

    assert tool.description == "exec shell"


def test_from_function_name_override_and_dangerous_flag() -> None:
    tool = troupe.Tool.from_function(exec_shell, name="exec_run", dangerous=True)

    assert tool.name == "exec_run"
    assert tool.dangerous is True


def test_valid_snake_case_tools_are_accepted() -> None:
    tools = [make_tool(n) for n in ("fs_read", "exec", "browser_open2", "list_skills")]

    result = troupe.partition_tools(tools)

    assert [t.name for t in result.operator] == ["fs_read", "exec"]


def test_bad_tool_names_raise_config_error_naming_every_offender() -> None:
    bad = ["Fs_Read", "fs-read", "1tool", "fs read", "", "fs__read", "_private"]
    tools = [make_tool("fs_list"), *(make_tool(n) for n in bad)]

    with pytest.raises(troupe.ConfigError) as caught:
        troupe.partition_tools(tools)

    message = str(caught.value)
    for name in bad:
        assert repr(name) in message
    assert "'fs_list'" not in message
    assert "snake_case" in message


def test_duplicate_tool_names_raise_config_error_naming_every_duplicate() -> None:
    tools = [make_tool(n) for n in ("fs_read", "fs_read", "exec_shell", "exec_shell", "fs_list")]

    with pytest.raises(troupe.ConfigError) as caught:
        troupe.build_agent_tree(troupe.Config(tools=tools, model="offline"))

    message = str(caught.value)
    assert "'fs_read'" in message
    assert "'exec_shell'" in message
    assert "'fs_list'" not in message
    assert "unique" in message


def test_bad_and_duplicate_names_are_reported_together() -> None:
    tools = [make_tool(n) for n in ("Bad-Name", "fs_read", "fs_read")]

    with pytest.raises(troupe.ConfigError) as caught:
        troupe.build_agent_tree(troupe.Config(tools=tools, model="offline", multi_agent=False))

    assert "'Bad-Name'" in str(caught.value)
    assert "'fs_read'" in str(caught.value)


def test_lambda_tool_name_is_rejected_with_config_error() -> None:
    tool = troupe.Tool.from_function(lambda: None)

    with pytest.raises(troupe.ConfigError, match="<lambda>"):
        troupe.partition_tools([tool])


def test_non_tool_entries_raise_config_error_pointing_to_from_function() -> None:
    with pytest.raises(troupe.ConfigError, match="from_function"):
        troupe.partition_tools([fs_read])  # type: ignore[list-item]


def test_config_error_is_a_troupe_error() -> None:
    assert issubclass(troupe.ConfigError, troupe.TroupeError)


def test_a_tool_whose_func_is_not_callable_is_named_with_the_fix() -> None:
    broken = troupe.Tool(name="fs_stat", description="Stat a file.", func=None)  # type: ignore[arg-type]

    with pytest.raises(troupe.ConfigError) as caught:
        troupe.partition_tools([make_tool("fs_read"), broken])

    assert "'fs_stat' (func=None)" in str(caught.value)
    assert "pass the function itself" in str(caught.value)


def test_a_string_instead_of_a_tool_list_is_refused_as_a_whole() -> None:
    with pytest.raises(troupe.ConfigError, match="not the string 'fs_read'"):
        troupe.partition_tools("fs_read")  # type: ignore[arg-type]
