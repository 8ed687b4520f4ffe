"""Confinement below the model: the OS jail for commands and the environment they get."""

from __future__ import annotations

from .env import command_env, is_hook_variable
from .jail import UNCONFINED, Jail, SandboxStatus, bundled_bwrap, sandbox_status, unconfined_effect

__all__ = [
    "UNCONFINED",
    "Jail",
    "SandboxStatus",
    "bundled_bwrap",
    "command_env",
    "is_hook_variable",
    "sandbox_status",
    "unconfined_effect",
]
