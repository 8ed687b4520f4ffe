"""Confinement below the model: the OS jail for commands and the environment they get."""

from __future__ import annotations

from .env import command_env, is_hook_variable
from .jail import Jail, SandboxStatus, bundled_bwrap, sandbox_status

__all__ = [
    "Jail",
    "SandboxStatus",
    "bundled_bwrap",
    "command_env",
    "is_hook_variable",
    "sandbox_status",
]
