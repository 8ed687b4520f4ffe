"""The process environment below :mod:`troupe.settings`: one module, read on request.

:class:`troupe.settings.Settings` reads every ``TROUPE_*`` and provider
variable once and passes the values down. Below it nothing looks a variable up
on its own initiative; this module is the one place that touches the process
environment, for two things only:

* :func:`process_environ`, the fallback a library caller gets for variables it
  *names* itself (``pass_env``, ``vault.import_env``, ``${VAR}`` in an MCP
  server's ``env``, ``auth_token_env``, ``api_key_env``) when it passes no
  snapshot of its own;
* the switches third-party libraries read from the environment at import time
  (:func:`quiet_litellm`, :func:`hugging_face_offline`, :func:`quiet_adk_a2a`).

:func:`troupe.build_agent_tree` never reads it: a :class:`troupe.Config`
builds the same tree in any environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import MappingProxyType


def process_environ() -> Mapping[str, str]:
    """A read-only copy of this process's environment as it is now."""
    return MappingProxyType(dict(os.environ))


def quiet_litellm() -> None:
    """Keep LiteLLM from downloading its model price list when it is imported (a
    network call, and a delay when offline); the copy bundled with it is used."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def hugging_face_offline() -> None:
    """Make the Hugging Face libraries fail on a missing file rather than download
    it, and draw no progress bars; they read these when they are imported."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def quiet_adk_a2a() -> None:
    """No warning from ADK that its A2A support is experimental, on every request."""
    os.environ.setdefault("ADK_SUPPRESS_A2A_EXPERIMENTAL_FEATURE_WARNINGS", "1")
