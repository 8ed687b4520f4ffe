"""Instant tools, one or more per role, for benchmarks that measure routing, not tools."""

from __future__ import annotations

from typing import Any

from ..tools import Tool


def _tool(name: str, description: str, fn: Any) -> Tool:
    return Tool(name=name, description=description, func=fn)


def stub_tools() -> list[Tool]:
    """Tools named like the built-ins, answering instantly with canned results."""

    def fs_read(path: str) -> dict[str, Any]:
        return {"path": path, "content": f"contents of {path}"}

    def fs_list(path: str = ".") -> dict[str, Any]:
        return {"path": path, "entries": ["a.txt", "b/"]}

    def exec_shell(command: str) -> dict[str, Any]:
        return {"command": command, "exit_code": 0, "stdout": "ok"}

    def browser_navigate(url: str) -> dict[str, Any]:
        return {"url": url, "title": "Example", "text": "page text"}

    def browser_screenshot() -> dict[str, Any]:
        return {"saved": "screenshot.png"}

    def browser_extract() -> dict[str, Any]:
        return {"links": ["https://example.com/a"]}

    def crypto_hash(text: str) -> dict[str, Any]:
        return {"sha256": "0" * 64, "input_chars": len(text)}

    def crypto_encrypt(text: str) -> dict[str, Any]:
        return {"ciphertext": "c2VjcmV0"}

    def secrets_list() -> dict[str, Any]:
        return {"secrets": ["github_token"]}

    def search_knowledge(query: str) -> dict[str, Any]:
        return {"query": query, "hits": [{"text": "a note", "score": 1.0}]}

    def save_knowledge(text: str) -> dict[str, Any]:
        return {"saved": True, "id": 1}

    def memory_store(text: str) -> dict[str, Any]:
        return {"stored": text}

    def memory_recall(query: str) -> dict[str, Any]:
        return {"memories": ["I prefer dark mode"]}

    return [
        _tool("fs_read", "Read a file and show what is in it.", fs_read),
        _tool("fs_list", "List the files in a folder or directory.", fs_list),
        _tool("exec_shell", "Run or execute a shell command.", exec_shell),
        _tool("browser_navigate", "Open or navigate to a web page URL, browse and read it.",
              browser_navigate),
        _tool("browser_screenshot", "Take a screenshot of the current page.", browser_screenshot),
        _tool("browser_extract", "Extract the links of the current page.", browser_extract),
        _tool("crypto_hash", "Hash text with sha256 to get a checksum.", crypto_hash),
        _tool("crypto_encrypt", "Encrypt text.", crypto_encrypt),
        _tool("secrets_list", "List the names of stored secrets and credentials.", secrets_list),
        _tool("search_knowledge", "Search or look up the knowledge base and documents.",
              search_knowledge),
        _tool("save_knowledge", "Save knowledge to the knowledge base.", save_knowledge),
        _tool("memory_store", "Remember something: store a memory.", memory_store),
        _tool("memory_recall", "Recall memories of what was said earlier or last time.",
              memory_recall),
    ]
