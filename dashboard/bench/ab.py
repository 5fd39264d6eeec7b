"""Two watchers' CPU through one churn: this tree's watcher against another tree's (``manage.py bench_ab``).

From one full run to the next, this machine moves a watcher's CPU per change by up to a tenth (other
tenants, the CPU's clock): more than most changes to the watcher's cost, so two runs an hour apart cannot
tell whether a change helped. Here both watchers watch one simulator at once, each publishing to a bus of
its own (a Redis key prefix) and recording into a fresh database of its own, through the same churn: what
the machine does to one it does to the other, and the ratio of their CPU times over the churn is the
change's. Each round starts both watchers afresh (their cold starts are not measured: the churn begins
``warmup`` seconds after both have the fleet on their bus) and writes a churn of its own.

A watcher is ready when its bus's fleet hash holds a row for every rollout: read from Redis, not from its
log, so that a tree from before the log said so (the code as issue 23 measured it) can be the reference.
Each round also gives both watchers' cores over the warmup's last ``IDLE_WINDOW`` seconds: a reference
still busy with its cold start's history when the churn begins would flatter this tree.

Non-goals: latency and memory (``bench`` measures those); trees whose ``manage.py watch`` takes other
arguments or whose bus keeps its fleet rows elsewhere; profiling.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import redis

from dashboard import compiled
from dashboard.bench.churn import Cluster, churn
from dashboard.bench.processes import ROOT, BenchError, Processes, cpu_seconds
from dashboard.bench.run import (
    create_database,
    drop_database,
    forget_prefix,
    manage,
    settle,
    simulator_command,
)

START_TIMEOUT = 300.0  # seconds for the simulator to seed, or a watcher to publish the fleet
QUIET = 3.0  # seconds without a write: the simulator has settled
IDLE_WINDOW = 10.0  # the warmup's last seconds, over which each watcher's idle cores are read


@dataclass(frozen=True)
class Round:
    writes: int  # new images the churn wrote
    seconds: float  # the churn and its settle, over which the CPU was read
    cpu_seconds: tuple[float, float]  # the reference tree's watcher, then this tree's
    idle_cores: tuple[float, float]  # the same two over the warmup's last seconds, before the churn

    @property
    def ratio(self) -> float:
        """This tree's CPU over the reference tree's (below 1: this tree's watcher costs less)."""
        return self.cpu_seconds[1] / self.cpu_seconds[0] if self.cpu_seconds[0] else float("nan")

    def as_dict(self) -> dict[str, float | int]:
        return {
            "writes": self.writes,
            "seconds": round(self.seconds, 1),
            "reference_cores": round(self.cpu_seconds[0] / self.seconds, 4),
            "this_tree_cores": round(self.cpu_seconds[1] / self.seconds, 4),
            "reference_idle_cores": round(self.idle_cores[0], 4),
            "this_tree_idle_cores": round(self.idle_cores[1], 4),
            "ratio": round(self.ratio, 3),
        }


def run_ab(
    reference: Path,
    *,
    rollouts: int,
    namespaces: int,
    churn_rate: float,
    seconds: float,
    rounds: int,
    warmup: float,
    database_url: str,
    redis_url: str,
    log: Callable[[str], None] = print,
) -> list[Round]:
    """``rounds`` rounds of the reference tree's watcher and this tree's through one churn each."""
    if not (reference / "manage.py").is_file():
        raise BenchError(f"{reference} is not a checkout of rollouts-ui (it has no manage.py)")
    with tempfile.TemporaryDirectory(prefix="bench-ab-") as tmp:
        directory = Path(tmp)
        processes = Processes(directory)
        try:
            cluster = _start_simulator(processes, rollouts, namespaces)
            log(f"simulator seeded with {rollouts} rollouts; this tree's domain: {compiled.running()}")
            done = []
            for number in range(rounds):
                done.append(
                    _round(
                        number,
                        (reference, ROOT),
                        cluster,
                        directory,
                        churn_rate,
                        seconds,
                        warmup,
                        database_url,
                        redis_url,
                    )
                )
                log(f"round {number + 1}: " + ", ".join(f"{k} {v}" for k, v in done[-1].as_dict().items()))
            return done
        finally:
            processes.close()


def _round(
    number: int,
    trees: tuple[Path, Path],
    cluster: Cluster,
    directory: Path,
    churn_rate: float,
    seconds: float,
    warmup: float,
    database_url: str,
    redis_url: str,
) -> Round:
    run = uuid.uuid4().hex[:8]
    databases = [create_database(database_url, f"ab_{run}_{i}") for i in range(2)]
    prefixes = [f"bench-ab:{run}:{i}:" for i in range(2)]
    watchers: list[subprocess.Popen[bytes]] = []
    try:
        for i, tree in enumerate(trees):
            env = {
                **os.environ,
                "DATABASE_URL": databases[i],
                "REDIS_URL": redis_url,
                "LIVE_REDIS_PREFIX": prefixes[i],
                "LOG_LEVEL": "INFO",
                "PYTHONUNBUFFERED": "1",
            }
            manage(["migrate", "--no-input", "-v", "0"], env, tree)
            with open(directory / f"watcher-{number}-{i}.log", "wb") as out:
                watchers.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            "manage.py",
                            "watch",
                            "--kubeconfig",
                            str(directory / f"{cluster.name}.kubeconfig"),
                            "--cluster",
                            cluster.name,
                        ],
                        cwd=tree,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
        logs = [directory / f"watcher-{number}-{i}.log" for i in range(2)]
        _await_fleet(redis_url, prefixes, cluster.rollouts, logs, watchers)
        idle = min(IDLE_WINDOW, warmup)
        time.sleep(warmup - idle)  # the cold start's recording and collections done with
        quiet = [cpu_seconds(w.pid) for w in watchers]
        time.sleep(idle)
        before = [cpu_seconds(w.pid) for w in watchers]
        idle_cores = ((before[0] - quiet[0]) / idle, (before[1] - quiet[1]) / idle) if idle else (0.0, 0.0)
        started = time.monotonic()
        written = asyncio.run(churn([cluster], churn_rate, seconds, seed=number + 1))
        time.sleep(QUIET)
        after = [cpu_seconds(w.pid) for w in watchers]
        for i, watcher in enumerate(watchers):
            if watcher.poll() is not None:
                log = (directory / f"watcher-{number}-{i}.log").read_text(errors="replace")[-2000:]
                raise BenchError(f"{trees[i]}'s watcher exited during round {number + 1}:\n{log}")
        used = (after[0] - before[0], after[1] - before[1])
        return Round(len(written.writes), time.monotonic() - started, used, idle_cores)
    finally:
        for watcher in watchers:
            _stop(watcher)
        for database in databases:
            drop_database(database)
        for prefix in prefixes:
            forget_prefix(redis_url, prefix)


def _start_simulator(processes: Processes, rollouts: int, namespaces: int) -> Cluster:
    namespaces = min(namespaces, rollouts)
    args, kubeconfig = simulator_command(processes.directory, "sim-a", rollouts, namespaces, seed=1)
    simulator = processes.start("sim-a", "kubesim", args, dict(os.environ))
    deadline = time.monotonic() + START_TIMEOUT
    while not kubeconfig.exists():
        if not simulator.alive() or time.monotonic() > deadline:
            raise BenchError(f"the simulator did not start:\n{simulator.log_tail()}")
        time.sleep(0.1)
    time.sleep(0.2)  # written in one go; give the writer its moment
    cluster = Cluster.from_kubeconfig("sim-a", kubeconfig, rollouts, namespaces)
    if not asyncio.run(settle([cluster], processes, START_TIMEOUT, QUIET)):
        raise BenchError(f"the simulator did not settle within {START_TIMEOUT:.0f}s")
    return cluster


def _await_fleet(
    redis_url: str,
    prefixes: list[str],
    rollouts: int,
    logs: list[Path],
    watchers: list[subprocess.Popen[bytes]],
) -> None:
    """Until each watcher's bus holds a fleet row for every rollout."""
    client = redis.Redis.from_url(redis_url)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while any(client.hlen(f"{prefix}fleet") < rollouts for prefix in prefixes):
            for path, watcher in zip(logs, watchers, strict=True):
                if watcher.poll() is not None:
                    tail = path.read_text(errors="replace")[-2000:]
                    raise BenchError(f"a watcher exited before publishing the fleet:\n{tail}")
            if time.monotonic() > deadline:
                raise BenchError(f"the watchers did not publish the fleet within {START_TIMEOUT:.0f}s")
            time.sleep(0.5)
    finally:
        client.close()


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
