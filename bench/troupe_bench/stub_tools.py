"""Instant tools, one or more per role, for benchmarks that measure routing, not tools."""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent

from troupe.config import Config
from troupe.evaluation.runner import eval_tree
from troupe.models.resolve import ModelLike
from troupe.tools import Tool


def stub_tools() -> list[Tool]:
    """Tools named like the built-ins, answering instantly with canned results."""

    def fs_read(path: str) -> dict[str, Any]:
        """Read a file and show what is in it."""
        return {"path": path, "content": f"contents of {path}"}

    def fs_list(path: str = ".") -> dict[str, Any]:
        """List the files in a folder or directory."""
        return {"path": path, "entries": ["a.txt", "b/"]}

    def exec_shell(command: str) -> dict[str, Any]:
        """Run or execute a shell command."""
        return {"command": command, "exit_code": 0, "stdout": "ok"}

    def browser_navigate(url: str) -> dict[str, Any]:
        """Open or navigate to a web page URL, browse and read it."""
        return {"url": url, "title": "Example", "text": "page text"}

    def browser_screenshot() -> dict[str, Any]:
        """Take a screenshot of the current page."""
        return {"saved": "screenshot.png"}

    def browser_extract() -> dict[str, Any]:
        """Extract the links of the current page."""
        return {"links": ["https://example.com/a"]}

    def crypto_hash(text: str) -> dict[str, Any]:
        """Hash text with sha256 to get a checksum."""
        return {"sha256": "0" * 64, "input_chars": len(text)}

    def crypto_encrypt(text: str) -> dict[str, Any]:
        """Encrypt text."""
        return {"ciphertext": "c2VjcmV0"}

    def secrets_list() -> dict[str, Any]:
        """List the names of stored secrets and credentials."""
        return {"secrets": ["github_token"]}

    def search_knowledge(query: str) -> dict[str, Any]:
        """Search or look up the knowledge base and documents."""
        return {"query": query, "hits": [{"text": "a note", "score": 1.0}]}

    def save_knowledge(text: str) -> dict[str, Any]:
        """Save knowledge to the knowledge base."""
        return {"saved": True, "id": 1}

    def memory_store(text: str) -> dict[str, Any]:
        """Remember something: store a memory."""
        return {"stored": text}

    def memory_recall(query: str) -> dict[str, Any]:
        """Recall memories of what was said earlier or last time."""
        return {"memories": ["I prefer dark mode"]}

    return [
        Tool.from_function(f)
        for f in (
            fs_read,
            fs_list,
            exec_shell,
            browser_navigate,
            browser_screenshot,
            browser_extract,
            crypto_hash,
            crypto_encrypt,
            secrets_list,
            search_knowledge,
            save_knowledge,
            memory_store,
            memory_recall,
        )
    ]


def stub_tree(
    model: ModelLike | None,
    *,
    api_base: str | None = None,
    router: str | None = None,
    router_threshold: float | None = None,
) -> LlmAgent:
    """The tree ``troupe eval --stub-tools`` scores: the default topology over
    these stub tools, ``model`` on every agent, the router ``auto`` or ``off``."""
    config = Config(
        model=model, api_base=api_base, router=router, router_threshold=router_threshold
    )
    return eval_tree(config, stub_tools())
