"""The public API is exactly troupe.__all__; changing it must be a deliberate edit here."""

from __future__ import annotations

import inspect

import troupe

EXPECTED_ALL = [
    "CAPABILITY_MAP",
    "CLASSIC_TOPOLOGY",
    "DEFAULT_TOPOLOGY",
    "GENERAL_ACTIONS",
    "McpServer",
    "AgentSpec",
    "Assistant",
    "Config",
    "ConfigError",
    "OfflineModel",
    "RoleToolSet",
    "RouteEntry",
    "Tool",
    "ToolAdapterError",
    "Topology",
    "TroupeAgent",
    "TroupeError",
    "TurnResult",
    "UnknownAgentError",
    "Workspace",
    "__version__",
    "build_agent_tree",
    "build_app",
    "build_orchestrator_instruction",
    "builtin_tools",
    "capability_description",
    "load_config",
    "load_topology",
    "partition_tools",
    "resolve_model",
    "tool_capability",
]


def test_all_is_pinned_to_the_expected_public_names() -> None:
    assert sorted(troupe.__all__) == sorted(EXPECTED_ALL)
    assert len(troupe.__all__) == len(set(troupe.__all__))


def test_every_public_name_is_importable_from_troupe() -> None:
    for name in troupe.__all__:
        assert hasattr(troupe, name), name


def test_public_errors_share_the_troupe_error_base() -> None:
    for error in (troupe.ConfigError, troupe.ToolAdapterError, troupe.UnknownAgentError):
        assert issubclass(error, troupe.TroupeError)
    assert issubclass(troupe.ToolAdapterError, troupe.ConfigError)


def test_public_functions_and_classes_have_docstrings() -> None:
    for name in troupe.__all__:
        value = getattr(troupe, name)
        if inspect.isfunction(value) or inspect.isclass(value):
            assert inspect.getdoc(value), name


def test_options_are_keyword_only() -> None:
    for cls in (troupe.Config, troupe.Tool, troupe.AgentSpec, troupe.Topology):
        parameters = inspect.signature(cls).parameters.values()
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters), cls.__name__


def test_version_is_a_string() -> None:
    assert isinstance(troupe.__version__, str)
    assert troupe.__version__
