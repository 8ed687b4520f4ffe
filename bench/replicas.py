"""Several ``troupe serve`` replicas on one PostgreSQL, behind a round-robin proxy.

Starts PostgreSQL (``.ci/postgres.sh``, or ``--session-store`` of one already
running on loopback), N ``python -m troupe serve`` processes with separate data
directories and the offline model, and a small TCP proxy written here that
hands each new connection to the next replica (skipping one that refuses), so
consecutive requests of one session alternate across replicas. No container
runtime is needed. For each N in ``--replicas`` it opens ``--sessions``
sessions and sends ``--turns`` steps in each; a step sends ``--concurrent``
turns on the same session at once. Then it reads every session back through
every live replica and checks that each holds every acknowledged turn exactly
once, in the same order everywhere.

With ``--kill`` the largest run kills one replica with SIGKILL a third of the
way in and stops another with SIGTERM two thirds in (it drains). A turn whose
connection broke is retried once, with the same ``Idempotency-Key``, through
the proxy (so on another replica): the report counts the turns lost (acknowledged,
not stored), duplicated (one request stored twice) and interrupted (the retry
found the turn cut off by the crash, closed and not replayed: 409).

Before a run is measured, each replica serves one unmeasured warm-up session
(``bench/load.py``'s): the figures are long-running replicas' turns, not their
first ones. Each run also reports the replicas' CPU per turn and, against the run with
one replica, its scaling efficiency: turns/s ÷ min(N × one replica's turns/s,
what the CPUs allow), where the CPUs allow (CPUs − the CPU the load, the proxy
and PostgreSQL used per second) ÷ one replica's CPU per turn. The efficiency
is taken over each run's steady part, from its 10% to its 90% acknowledged
turn (the counters are sampled every quarter second): while sessions start and
finish, cores stand idle whatever the replica count. ``--rounds`` runs every
count several times, alternated, and the table quotes each count's median.

    python bench/replicas.py                           # 1, 2, 3 replicas
    python bench/replicas.py --replicas 3 --sessions 6 --turns 4 --kill
    python bench/replicas.py --chaos                   # bench/replica_chaos.py's scenarios

``--chaos`` runs instead the scenarios of ``bench/replica_chaos.py`` (3 replicas
at PostgreSQL's default ``max_connections`` under load, then under ``kill -9``
and ``SIGSTOP``/``SIGCONT`` with keyed retries of messages and approvals, then
five replicas against the connection budget) and writes
``bench/results/replicas_chaos.json``.

Bounded: at most 5,000 turns per run and ``--max-seconds`` per run. Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.load import (
    APP,
    free_port,
    percentile,
    process_cpu_seconds,
    require_loopback,
    start_server,
    warm_up,
)

from troupe_bench.results import text_table, write_json

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = Path(__file__).parent / "results" / "replicas.json"
CHAOS_OUT = Path(__file__).parent / "results" / "replicas_chaos.json"
MAX_TURNS_RUN = 5_000
MESSAGES = ("hello", "list the files here", "read notes.txt", "thanks")
"""What the sessions say, in turn; each message carries the turn's own tag."""


class RoundRobinProxy:
    """A TCP proxy on 127.0.0.1 giving each new connection to the next live backend."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = list(ports)
        self._next = itertools.count()
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.Task[Any]] = set()
        self.port = 0
        self.served: Counter[int] = Counter()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._open):  # connections still piped: cut them, quietly
            task.cancel()
        await asyncio.gather(*self._open, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, int]:
        for _ in range(len(self.ports)):
            port = self.ports[next(self._next) % len(self.ports)]
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:  # that replica is down: the next one takes it
                continue
            return reader, writer, port
        raise ConnectionRefusedError("no replica accepts connections")

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._open.add(task)
            task.add_done_callback(self._open.discard)
        try:
            up_r, up_w, port = await self._connect()
        except OSError:
            client_w.close()
            return
        self.served[port] += 1

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while chunk := await src.read(65536):
                    dst.write(chunk)
                    await dst.drain()
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                with contextlib.suppress(OSError, RuntimeError):
                    dst.close()

        with contextlib.suppress(asyncio.CancelledError):  # close() cut it: nothing to report
            await asyncio.gather(pipe(client_r, up_w), pipe(up_r, client_w))


@dataclass
class Replica:
    """One ``troupe serve`` process of the run."""

    root: Path
    port: int
    proc: subprocess.Popen[bytes]
    fate: str = "ran"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Turn:
    """One request: its tag (in the message and the idempotency key) and how it went."""

    session: str
    tag: str
    text: str
    latency: float | None = None
    acknowledged: bool = False
    finished: float | None = None
    """``time.perf_counter()`` when the acknowledgement arrived."""
    retried: bool = False
    interrupted: bool = False
    """The retry found the turn cut off by a crash, closed and not replayed (409)."""
    error: str | None = None


@dataclass
class RunResult:
    """Everything one run with N replicas saw."""

    replicas: int
    turns: list[Turn] = field(default_factory=list)
    wall: float = 0.0
    stored: dict[str, list[str]] = field(default_factory=dict)
    """Per session, the user-message tags the first live replica's store holds, in order."""
    disagreeing_reads: int = 0
    read_errors: list[str] = field(default_factory=list)
    fates: list[str] = field(default_factory=list)
    served: dict[int, int] = field(default_factory=dict)
    server_cpu: float = 0.0
    """utime+stime the replicas spent while the turns ran (seconds)."""
    client_cpu: float = 0.0
    """CPU this process (the load and the proxy) spent meanwhile."""
    postgres_cpu: float = 0.0
    """CPU PostgreSQL's processes spent meanwhile."""
    samples: list[CpuSample] = field(default_factory=list)
    """The CPU counters every :data:`SAMPLE_EVERY_S` while the turns ran."""


SAMPLE_EVERY_S = 0.25
STEADY_WINDOW = (0.1, 0.9)
"""The share of acknowledged turns between which a run counts as steady: the
first turns and the last ones run while sessions start or finish, with cores
left idle that no replica count could use."""


@dataclass(frozen=True)
class CpuSample:
    """The CPU counters (seconds) at one moment (``time.perf_counter()``)."""

    at: float
    replicas: float
    client: float
    postgres: float


def cpu_sample(replicas: list[Replica]) -> CpuSample:
    return CpuSample(
        time.perf_counter(),
        replicas_cpu_seconds(replicas),
        time.process_time(),
        postgres_cpu_seconds(),
    )


async def sample_cpu(replicas: list[Replica], into: list[CpuSample]) -> None:
    """Append a :class:`CpuSample` every :data:`SAMPLE_EVERY_S` until cancelled."""
    while True:
        into.append(cpu_sample(replicas))
        await asyncio.sleep(SAMPLE_EVERY_S)


def _at(samples: list[CpuSample], moment: float) -> CpuSample:
    """The counters at ``moment``, linearly between the samples around it."""
    after = next((i for i, s in enumerate(samples) if s.at >= moment), len(samples) - 1)
    if after == 0:
        return samples[0]
    a, b = samples[after - 1], samples[after]
    share = min(max((moment - a.at) / ((b.at - a.at) or 1.0), 0.0), 1.0)
    return CpuSample(
        moment,
        a.replicas + share * (b.replicas - a.replicas),
        a.client + share * (b.client - a.client),
        a.postgres + share * (b.postgres - a.postgres),
    )


def steady(result: RunResult) -> dict[str, Any]:
    """Throughput and CPU between :data:`STEADY_WINDOW`'s acknowledgements."""
    done = sorted(t.finished for t in result.turns if t.acknowledged and t.finished)
    if len(done) < 5 or len(result.samples) < 2:
        return {}
    first, last = (done[int(share * (len(done) - 1))] for share in STEADY_WINDOW)
    turns = sum(1 for moment in done if first < moment <= last)
    wall = last - first
    if turns == 0 or wall <= 0:
        return {}
    a, b = _at(result.samples, first), _at(result.samples, last)
    return {
        "steady_turns": turns,
        "steady_seconds": round(wall, 3),
        "steady_turns_per_second": round(turns / wall, 2),
        "steady_server_cpu_ms_per_turn": round((b.replicas - a.replicas) / turns * 1000, 1),
        "steady_others_cpu_per_second": round(
            ((b.client - a.client) + (b.postgres - a.postgres)) / wall, 3
        ),
    }


def postgres_cpu_seconds() -> float:
    """CPU of every process named ``postgres`` on this machine (Linux), each read
    as ``bench/load.py`` reads a server's: utime+stime and its reaped children's."""
    total = 0.0
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            name = comm.read_text().strip()
        except OSError:
            continue
        if name == "postgres":
            total += process_cpu_seconds(int(comm.parent.name)) or 0.0
    return total


def replicas_cpu_seconds(replicas: list[Replica]) -> float:
    return sum(process_cpu_seconds(r.proc.pid) or 0.0 for r in replicas)


def start_postgres() -> tuple[str, str]:
    """A throwaway PostgreSQL from ``.ci/postgres.sh``: (URL, directory to stop)."""
    started = subprocess.run(
        ["bash", str(REPO / ".ci" / "postgres.sh"), "start"],
        capture_output=True,
        text=True,
    )
    if started.returncode != 0:
        # What the script said is the diagnosis: a traceback would hide it.
        raise SystemExit(
            f"error: .ci/postgres.sh start failed (exit {started.returncode}):\n"
            f"{started.stderr.strip()}"
        )
    out = started.stdout
    exports = dict(
        line.removeprefix("export ").split("=", 1)
        for line in out.splitlines()
        if line.startswith("export ")
    )
    return exports["TROUPE_TEST_POSTGRES_URL"], exports["TROUPE_TEST_POSTGRES_DIR"]


def stop_postgres(directory: str) -> None:
    subprocess.run(
        ["bash", str(REPO / ".ci" / "postgres.sh"), "stop", directory],
        check=False,
        capture_output=True,
    )


def stop_all(replicas: list[Replica]) -> None:
    """Stop every replica still running (a stopped one is continued first), and reap them."""
    for replica in replicas:
        if replica.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(replica.proc.pid, signal.SIGCONT)
            replica.proc.terminate()
    for replica in replicas:
        try:
            replica.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            replica.proc.kill()
            replica.proc.wait(timeout=10)


async def wait_all_ready(client: httpx.AsyncClient, replicas: list[Replica]) -> None:
    deadline = time.monotonic() + 90
    for replica in replicas:
        while True:
            if replica.proc.poll() is not None:
                log = (replica.root / "server.log").read_text(encoding="utf-8", errors="replace")
                raise SystemExit(f"replica on port {replica.port} exited:\n{log[-3000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get(f"{replica.url}/readyz")).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit(f"replica on port {replica.port} not ready within 90 s")
            await asyncio.sleep(0.2)


def _tags(event: dict[str, Any]) -> list[str]:
    parts = (event.get("content") or {}).get("parts") or []
    if event.get("author") != "user":
        return []
    return [p["text"].rsplit("#", 1)[1] for p in parts if "#" in (p.get("text") or "")]


async def send_turn(client: httpx.AsyncClient, base: str, turn: Turn, deadline: float) -> None:
    """POST one turn; retry once with the same key when the connection broke."""
    body = {
        "app_name": APP,
        "user_id": f"user-{turn.session}",
        "session_id": turn.session,
        "new_message": {"role": "user", "parts": [{"text": turn.text}]},
    }
    headers = {"Idempotency-Key": turn.tag}
    start = time.perf_counter()
    for attempt in range(2):
        if time.monotonic() > deadline:
            turn.error = "deadline: turn not sent"
            return
        try:
            reply = await client.post(f"{base}/run", json=body, headers=headers)
        except httpx.HTTPError as exc:
            turn.error = f"{type(exc).__name__}: {exc}"
            turn.retried = attempt == 0
            continue
        if reply.status_code >= 500 and attempt == 0:
            turn.error = f"HTTP {reply.status_code}"
            turn.retried = True
            continue
        if reply.status_code == 409 and "interrupted" in reply.text:
            turn.interrupted = True
            turn.error = None
            return
        if reply.status_code != 200:
            turn.error = f"HTTP {reply.status_code}: {reply.text[:160]}"
            return
        turn.finished = time.perf_counter()
        turn.latency = turn.finished - start
        turn.acknowledged = True
        turn.error = None
        return


async def run_session(
    client: httpx.AsyncClient,
    base: str,
    sid: str,
    steps: int,
    concurrent: int,
    deadline: float,
    done: list[Turn],
) -> None:
    user = f"user-{sid}"
    try:
        (
            await client.post(f"{base}/apps/{APP}/users/{user}/sessions", json={"session_id": sid})
        ).raise_for_status()
    except httpx.HTTPError as exc:
        done.append(Turn(sid, f"{sid}-create", "", error=f"create: {exc}"))
        return
    for step in range(steps):
        batch = [
            Turn(
                sid,
                f"{sid}-{step}-{k}",
                f"{MESSAGES[(step + k) % len(MESSAGES)]} #{sid}-{step}-{k}",
            )
            for k in range(concurrent)
        ]
        await asyncio.gather(*(send_turn(client, base, t, deadline) for t in batch))
        done.extend(batch)


async def read_back(client: httpx.AsyncClient, result: RunResult, live: list[Replica]) -> None:
    """Read every session through every live replica; they must all agree."""
    for sid in sorted({t.session for t in result.turns}):
        views: list[list[str]] = []
        for replica in live:
            url = f"{replica.url}/apps/{APP}/users/user-{sid}/sessions/{sid}"
            try:
                reply = await client.get(url)
                reply.raise_for_status()
            except httpx.HTTPError as exc:
                result.read_errors.append(f"{sid} via :{replica.port}: {exc}")
                continue
            views.append([tag for e in reply.json().get("events") or [] for tag in _tags(e)])
        if views:
            result.stored[sid] = views[0]
            result.disagreeing_reads += sum(1 for v in views[1:] if v != views[0])


async def chaos(replicas: list[Replica], progress: list[Turn], total: int, deadline: float) -> None:
    """SIGKILL one replica a third of the way in, SIGTERM another at two thirds."""
    plan = [
        (total // 3, signal.SIGKILL, "killed (SIGKILL)"),
        (2 * total // 3, signal.SIGTERM, "stopped (SIGTERM)"),
    ]
    for (threshold, sig, fate), replica in zip(plan, replicas, strict=False):
        while len(progress) < threshold and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if replica.proc.poll() is None:
            replica.proc.send_signal(sig)
            replica.fate = fate


async def run_once(
    n: int, store: str, root: Path, sessions: int, steps: int, concurrent: int,
    max_seconds: float, kill: bool,
) -> RunResult:  # fmt: skip
    """One run with ``n`` replicas; always stops what it started."""
    replicas = []
    for i in range(n):
        folder = root / f"r{n}-{i}"
        folder.mkdir(parents=True)
        port = free_port()
        replicas.append(Replica(folder, port, start_server(folder, port, store)))
    proxy = RoundRobinProxy([r.port for r in replicas])
    result = RunResult(n)
    limits = httpx.Limits(max_keepalive_connections=0)  # every request a new connection
    timeout = httpx.Timeout(max_seconds, connect=30.0)
    try:
        async with httpx.AsyncClient(limits=limits, timeout=timeout) as client:
            await wait_all_ready(client, replicas)
            await proxy.start()
            base = f"http://127.0.0.1:{proxy.port}"
            deadline = time.monotonic() + max_seconds
            prefix = f"rep{os.getpid()}{root.name}n{n}"  # unique in a shared store
            for i, replica in enumerate(replicas):
                await warm_up(client, replica.url, f"{prefix}w{i}", deadline)
            cpu_at_start = cpu_sample(replicas)
            sampler = asyncio.create_task(sample_cpu(replicas, result.samples))
            start = time.perf_counter()
            jobs = [
                run_session(
                    client, base, f"{prefix}s{i:03d}", steps, concurrent, deadline, result.turns
                )
                for i in range(sessions)
            ]
            if kill and n >= 2:
                jobs.append(chaos(replicas, result.turns, sessions * steps * concurrent, deadline))
            await asyncio.gather(*jobs)
            result.wall = time.perf_counter() - start
            sampler.cancel()
            cpu_at_end = cpu_sample(replicas)
            result.samples.append(cpu_at_end)
            result.server_cpu = cpu_at_end.replicas - cpu_at_start.replicas
            result.client_cpu = cpu_at_end.client - cpu_at_start.client
            result.postgres_cpu = cpu_at_end.postgres - cpu_at_start.postgres
            live = [r for r in replicas if r.proc.poll() is None]
            await read_back(client, result, live)
    finally:
        await proxy.close()
        stop_all(replicas)
    result.fates = [r.fate for r in replicas]
    result.served = {i: proxy.served[r.port] for i, r in enumerate(replicas)}
    return result


def summarize(result: RunResult, sessions: int, steps: int, concurrent: int) -> dict[str, Any]:
    acked = [t for t in result.turns if t.acknowledged]
    latencies = [t.latency for t in acked if t.latency is not None]
    counts = Counter(tag for tags in result.stored.values() for tag in tags)
    lost = [t.tag for t in acked if counts[t.tag] == 0]
    duplicated = [tag for tag, c in counts.items() if c > 1]
    errors = [f"{t.tag}: {t.error}" for t in result.turns if t.error]
    return {
        "replicas": result.replicas,
        "sessions": sessions,
        "steps_per_session": steps,
        "concurrent_turns_per_session": concurrent,
        "turns_requested": sessions * steps * concurrent,
        "turns_acknowledged": len(acked),
        "turns_retried": sum(t.retried for t in result.turns),
        "turns_interrupted_and_closed": sum(t.interrupted for t in result.turns),
        "turns_failed": len(errors),
        "error_samples": errors[:8],
        "wall_seconds": round(result.wall, 3),
        "turns_per_second": round(len(acked) / result.wall, 2) if result.wall else 0.0,
        "latency_p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "latency_p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "acknowledged_turns_lost": len(lost),
        "turns_stored_twice": len(duplicated),
        "duplicate_samples": duplicated[:8],
        "cross_replica_reads_disagreeing": result.disagreeing_reads,
        "read_errors": result.read_errors[:8],
        "stores_read_across_replicas": ["sessions"],
        "replica_fates": result.fates,
        "connections_per_replica": result.served,
        "server_cpu_ms_per_turn": round(result.server_cpu / len(acked) * 1000, 1)
        if acked
        else None,
        "client_and_proxy_cpu_s": round(result.client_cpu, 2),
        "postgres_cpu_s": round(result.postgres_cpu, 2),
        **steady(result),
    }


def add_scaling(reports: list[dict[str, Any]], cpus: int) -> None:
    """Each run's scaling efficiency against one replica, over the steady part
    of each run (:func:`steady`): turns/s / min(N x one replica's turns/s, what
    the CPUs allow), where the CPUs allow (CPUs - what the load, the proxy and
    PostgreSQL used per second) / one replica's server CPU per turn. Needs a
    run with one replica."""
    one = next((r for r in reports if r["replicas"] == 1), None)
    if one is None or not one.get("steady_turns_per_second"):
        return
    per_turn = one["steady_server_cpu_ms_per_turn"] / 1000
    for report in reports:
        if not report.get("steady_turns_per_second"):
            continue
        others = report["steady_others_cpu_per_second"]
        cpu_allows = max(cpus - others, 0.0) / per_turn
        expected = min(report["replicas"] * one["steady_turns_per_second"], cpu_allows)
        report["cpu_allows_turns_per_second"] = round(cpu_allows, 2)
        report["expected_turns_per_second"] = round(expected, 2)
        report["scaling_efficiency"] = (
            round(report["steady_turns_per_second"] / expected, 3) if expected else None
        )


def median_runs(rounds: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """For each replica count, its run of median scaling efficiency (of median
    turns/s for one replica) across the rounds. A round runs every count side
    by side, so each efficiency compares runs made minutes apart on a shared,
    noisy machine; the median across rounds is what the docs quote."""
    out = []
    for position in range(len(rounds[0])):
        runs = [r[position] for r in rounds]
        key = "scaling_efficiency" if runs[0]["replicas"] != 1 else "turns_per_second"
        runs.sort(key=lambda r: r.get(key) or 0.0)
        out.append(runs[(len(runs) - 1) // 2])
    return out


def print_table(reports: list[dict[str, Any]]) -> None:
    cols = [
        ("replicas", "replicas"), ("turns ok", "turns_acknowledged"),
        ("failed", "turns_failed"), ("retried", "turns_retried"),
        ("interrupted", "turns_interrupted_and_closed"),
        ("turns/s", "turns_per_second"), ("p50 ms", "latency_p50_ms"),
        ("p99 ms", "latency_p99_ms"), ("lost", "acknowledged_turns_lost"),
        ("stored twice", "turns_stored_twice"),
        ("reads disagree", "cross_replica_reads_disagreeing"),
        ("CPU ms/turn", "server_cpu_ms_per_turn"),
        ("steady t/s", "steady_turns_per_second"),
        ("steady CPU ms/turn", "steady_server_cpu_ms_per_turn"),
        ("CPUs allow t/s", "cpu_allows_turns_per_second"),
        ("efficiency", "scaling_efficiency"),
    ]  # fmt: skip
    print(" | ".join(name for name, _ in cols) + " | fates")
    for report in reports:
        cells = [str(report.get(key, "-")).rjust(len(name)) for name, key in cols]
        print(" | ".join(cells) + " | " + ", ".join(report["replica_fates"]))
    for report in reports:
        for sample in report["error_samples"] + report["read_errors"]:
            print(f"  {report['replicas']} replicas: {sample}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit 0 when no acknowledged turn was lost or stored twice."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", default="1,2,3", help="Replica counts to run, e.g. 1,2,3.")
    parser.add_argument("--sessions", type=int, help="Sessions in each run (24; with --chaos 30).")
    parser.add_argument("--turns", type=int, help="Steps in each session (5; with --chaos 6).")
    parser.add_argument("--concurrent", type=int, default=2, help="Turns sent at once per step.")
    parser.add_argument(
        "--kill", action="store_true", help="SIGKILL and SIGTERM replicas mid-load."
    )
    parser.add_argument("--session-store", help="A running loopback PostgreSQL URL to use.")
    parser.add_argument("--max-seconds", type=float, default=240.0, help="Wall-time bound per run.")
    parser.add_argument(
        "--rounds", type=int, default=3, help="Rounds of every count, alternated; medians quoted."
    )
    parser.add_argument("--out", type=Path, help="Where to write JSON.")
    parser.add_argument(
        "--chaos",
        action="store_true",
        help="Run bench/replica_chaos.py's scenarios (load, kill -9 and SIGSTOP, five "
        "replicas) instead; --sessions, --turns and --concurrent size the load (30, 6, 2).",
    )
    parser.add_argument(
        "--only", help="With --chaos: the scenarios to run, e.g. chaos or load,five (all)."
    )
    args = parser.parse_args(argv)
    args.sessions = args.sessions or (30 if args.chaos else 24)
    args.turns = args.turns or (6 if args.chaos else 5)
    try:
        counts = [int(x) for x in args.replicas.split(",") if x.strip()]
    except ValueError:
        parser.error(f"--replicas {args.replicas!r}: give counts like 1,2,3")
    if not counts or min(counts) < 1 or max(counts) > 8:
        parser.error(f"--replicas {args.replicas!r}: counts from 1 to 8")
    if min(args.sessions, args.turns, args.concurrent, args.rounds) < 1:
        parser.error("--sessions, --turns, --concurrent and --rounds must be at least 1")
    if args.sessions * args.turns * args.concurrent > MAX_TURNS_RUN:
        parser.error(f"at most {MAX_TURNS_RUN} turns in one run")

    pg_dir = None
    if args.session_store:
        require_loopback(args.session_store)
        store = args.session_store
    else:
        store, pg_dir = start_postgres()
    if args.chaos:
        try:
            return run_chaos(args, store, pg_dir)
        finally:
            if pg_dir is not None:
                stop_postgres(pg_dir)
    args.out = args.out or DEFAULT_OUT
    rounds: list[list[dict[str, Any]]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="troupe-replicas-") as tmp:
            for number in range(args.rounds):
                reports = []
                for n in counts:
                    result = asyncio.run(
                        run_once(
                            n, store, Path(tmp) / f"round{number}", args.sessions, args.turns,
                            args.concurrent, args.max_seconds, args.kill and n == max(counts),
                        )
                    )  # fmt: skip
                    reports.append(summarize(result, args.sessions, args.turns, args.concurrent))
                add_scaling(reports, os.cpu_count() or 1)
                rounds.append(reports)
    finally:
        if pg_dir is not None:
            stop_postgres(pg_dir)
    if len(rounds) > 1:
        for number, reports in enumerate(rounds, 1):
            print(f"round {number}:")
            print_table(reports)
        print("median round of each replica count:")
    reports = median_runs(rounds)
    print_table(reports)
    payload = {
        "runs": reports,
        "rounds": rounds,
        "session_store": "postgresql (.ci/postgres.sh)" if pg_dir else "postgresql (given)",
        "model": "offline",
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    print(f"wrote {write_json(payload, args.out)}")
    clean = all(
        r["acknowledged_turns_lost"] == 0
        and r["turns_stored_twice"] == 0
        and r["cross_replica_reads_disagreeing"] == 0
        for reports in rounds
        for r in reports
    )
    return 0 if clean else 1


def run_chaos(args: argparse.Namespace, store: str, pg_dir: str | None) -> int:
    """bench/replica_chaos.py's scenarios (``--only`` picks some); exit 0 when every
    check holds."""
    from bench.replica_chaos import SCENARIOS, problems, run_five, run_load

    wanted = [name.strip() for name in (args.only or ",".join(SCENARIOS)).split(",")]
    unknown = sorted(set(wanted) - set(SCENARIOS))
    if unknown:
        raise SystemExit(f"--only {args.only!r}: choose among {', '.join(SCENARIOS)}")
    reports = []
    with tempfile.TemporaryDirectory(prefix="troupe-chaos-") as tmp:
        for name in wanted:
            if name == "five":
                run = run_five(store, Path(tmp), RoundRobinProxy)
            else:
                run = run_load(
                    name, store, Path(tmp), RoundRobinProxy,
                    args.sessions, args.turns, args.concurrent, chaos=name == "chaos",
                )  # fmt: skip
            report = asyncio.run(run)
            report["problems"] = problems(report)
            reports.append(report)
    head = ["scenario", "replicas", "turns", "answered", "interrupted, closed", "failed",
            "retried", "503", "409 busy", "5xx", "lost", "user msgs twice", "tools twice",
            "half-written", "dangling calls", "peak conns (troupe/all)", "CLI ok/failed",
            "turns/s"]  # fmt: skip
    rows = [
        [r["scenario"], r["replicas"], r["turns_requested"], r["turns_answered"],
         r["turns_interrupted_and_closed"], r["turns_failed"], r["requests_retried"],
         r["answers_503"], r["answers_409_busy"], r["answers_5xx_other"],
         r["user_messages_lost"], r["user_messages_stored_twice"], r["tools_run_twice"],
         r["half_written_turns"], r["dangling_calls"],
         f"{r['peak_troupe_connections']}/{r['peak_all_connections']}",
         f"{r['cli_commands_ok']}/{r['cli_commands_failed']}", r["turns_per_second"]]
        for r in reports
    ]  # fmt: skip
    print(text_table(head, rows))
    for report in reports:
        if "stall" in report:
            print("stall:", json.dumps(report["stall"]))
        if "refusal" in report:
            print("five, refused:", report["refused_exit_codes"], report["refusal"])
        samples = report["failure_samples"] + report["cli_failure_samples"]
        for sample in samples + report["answers_5xx_samples"]:
            print(f"  {report['scenario']}: {sample}")
        for problem in report["problems"]:
            print(f"  {report['scenario']}: PROBLEM {problem}")
    payload = {
        "scenarios": reports,
        "session_store": "postgresql (.ci/postgres.sh)" if pg_dir else "postgresql (given)",
        "max_connections": _max_connections(store),
        "model": "offline",
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    print(f"wrote {write_json(payload, args.out or CHAOS_OUT)}")
    return 1 if any(report["problems"] for report in reports) else 0


def _max_connections(store: str) -> int | None:
    try:
        import psycopg

        with psycopg.connect("postgresql://" + store.split("://", 1)[1]) as conn:
            row = conn.execute("SHOW max_connections").fetchone()
        return int(row[0]) if row else None
    except Exception:
        return None


if __name__ == "__main__":
    sys.exit(main())
