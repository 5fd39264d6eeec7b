"""The watcher's cold start: from starting ``manage.py watch`` until the whole fleet is on the bus, and its
memory (peak and settled) once it is; then its restart.

``measure_cold_start`` runs the real watcher process (``--no-history`` unless ``history``: then it records
into ``DATABASE_URL``, as a deployed watcher does) against a cluster that is already
there (a kubeconfig: a kubesim serving a fleet, or a real cluster) and polls the bus's fleet index until it
holds ``rollouts`` rows; then it keeps the watcher running ``settle`` seconds and reads its memory from
/proc (VmHWM, the peak, and VmRSS, what it holds once the first publish is done). ``manage.py
bench_watch --cold-start --rollouts N`` prints these figures for a fleet it seeds in kubesim first;
``--kubeconfig FILE`` measures a cluster already running instead (no seeding: the figures come in
seconds, and repeat).

Given ``while_away``, ``measure_cold_start`` then times the restart: it stops that watcher (SIGTERM), lets
``while_away`` write to the cluster (kubesim: new images for some rollouts, rolled out by the simulated
controllers), starts it again on the same bus and times it until it logs that the fleet is current on the
bus (every rollout whose inputs changed is built and published; the rest kept as the bus holds them,
``dashboard.kube.fingerprint``). With kubesim the bus's fleet rows are then compared with the simulator's
truth (``dashboard.bench.truth``), row for row.

Non-goals: asserting targets; what the watcher does after its first publish (``dashboard.bench.watch``).
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from dashboard.bench.processes import compile_sources, cpu_seconds
from dashboard.bench.truth import bus_rows
from dashboard.bench.watch import process_memory

# What the watcher logs (dashboard.kube.watcher) once a resync's views are all on the bus, and the resync.
WATCHER_CURRENT = "the fleet is current on the bus"
RESYNCED = re.compile(
    r"resynced \(\d+ held, \d+ current: (?P<kept>\d+) kept as built, (?P<built>\d+) to build\)"
)
# And when it hands its cache off on stopping, and resumes from it (dashboard.kube.handoff).
HANDED_OFF = re.compile(
    r"handed off (?P<watches>\d+) watches \((?P<mb>[\d.]+) MB in \d+ parts\) in (?P<seconds>[\d.]+)s"
)
RESUMED = re.compile(
    r"resumed (?P<resumed>\d+) of \d+ watches from the last watcher's handoff in (?P<seconds>[\d.]+)s"
)


@dataclass
class Restart:
    seconds: float  # from starting the process until it logged that the fleet is current on the bus
    listed_seconds: float | None
    changed: int  # rollouts the cluster changed while the watcher was away (as written)
    kept: int  # views the watcher kept as the bus held them
    built: int  # views it built again
    cpu_seconds: float
    rows_differing: int | None  # bus fleet rows that differ from the simulator's truth (None: not checked)
    handoff: dict[str, float]  # the stopped watcher's handoff (watches, MB, seconds) and the resumption's

    def as_dict(self) -> dict[str, Any]:
        return {
            **{f"restart_{name}": value for name, value in self.handoff.items()},
            "restart_seconds": round(self.seconds, 2),
            "restart_list_seconds": round(self.listed_seconds, 2) if self.listed_seconds else None,
            "restart_rollouts_changed_while_away": self.changed,
            "restart_views_kept": self.kept,
            "restart_views_built": self.built,
            "restart_cpu_seconds": round(self.cpu_seconds, 2),
            "restart_rows_differing_from_the_simulator": self.rows_differing,
        }


@dataclass
class ColdStart:
    rollouts: int
    seconds: float  # from starting the process until the fleet index holds every rollout
    listed_seconds: float | None  # until the watcher logged "initial list complete", when it did
    peak_rss_mb: float
    rss_mb: float  # after ``settle`` seconds
    cpu_seconds: float  # the watcher's CPU time until the fleet was on the bus
    restart: Restart | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "rollouts": self.rollouts,
            "cold_start_seconds": round(self.seconds, 2),
            "initial_list_seconds": round(self.listed_seconds, 2) if self.listed_seconds else None,
            "cold_start_cpu_seconds": round(self.cpu_seconds, 2),
            "watcher_peak_rss_mb": round(self.peak_rss_mb, 1),
            "watcher_settled_rss_mb": round(self.rss_mb, 1),
            **(self.restart.as_dict() if self.restart else {}),
        }


class _WatcherRun:
    """One ``manage.py watch`` process on bus ``prefix`` (``--no-history`` unless ``history``), its log
    followed on a thread (so its pipe never fills): when it logged each of ``MARKS``, and its resync's
    counts."""

    MARKS = ("initial list complete", WATCHER_CURRENT)

    def __init__(
        self, kubeconfig: Path, cluster: str, redis_url: str, prefix: str, env: dict[str, str], history: bool
    ):
        import threading

        environment = {**os.environ, **env, "LIVE_REDIS_PREFIX": prefix, "REDIS_URL": redis_url,
                       "LOG_LEVEL": "INFO"}
        args = [sys.executable, "manage.py", "watch", "--kubeconfig", str(kubeconfig), "--cluster", cluster]
        if not history:
            args.append("--no-history")
        self.marks: dict[str, float] = {}
        self.resync: dict[str, int] = {}
        self.handoff: dict[str, float] = {}
        compile_sources()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            args, env=environment, cwd=Path(__file__).resolve().parents[2], stderr=subprocess.PIPE, text=True
        )
        self.reader = threading.Thread(target=self._read, name="watcher-log", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            for mark in self.MARKS:
                if mark in line and mark not in self.marks:
                    self.marks[mark] = time.monotonic() - self.started
            counts = RESYNCED.search(line)
            if counts and not self.resync:
                self.resync = {"kept": int(counts["kept"]), "built": int(counts["built"])}
            handed = HANDED_OFF.search(line)
            if handed:
                self.handoff |= {"handoff_watches": int(handed["watches"]), "handoff_mb": float(handed["mb"]),
                                 "handoff_save_seconds": float(handed["seconds"])}
            resumed = RESUMED.search(line)
            if resumed:
                self.handoff |= {"handoff_resumed_watches": int(resumed["resumed"]),
                                 "handoff_read_seconds": float(resumed["seconds"])}
            if "Traceback" in line or "ERROR" in line:
                sys.stderr.write(line)

    def wait_for(self, done: Callable[[], bool], what: str, timeout: float) -> float:
        """Seconds from the start until ``done()``; an error naming ``what`` if the process dies or it
        takes longer than ``timeout``."""
        while not done():
            if self.proc.poll() is not None:
                raise RuntimeError(f"the watcher exited with {self.proc.returncode} before {what}")
            if time.monotonic() - self.started > timeout:
                raise RuntimeError(f"the watcher did not get to {what} within {timeout:.0f}s")
            time.sleep(0.05)
        return time.monotonic() - self.started

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.reader.join(5)  # its last lines (the handoff) are read

def measure_cold_start(
    *,
    kubeconfig: Path,
    rollouts: int,
    redis_url: str,
    cluster: str = "bench",
    settle: float = 15.0,
    timeout: float = 300.0,
    env: dict[str, str] | None = None,
    while_away: Callable[[], int] | None = None,
    truth: Callable[[], dict[str, str]] | None = None,
    history: bool = False,
) -> ColdStart:
    """Start the watcher under a fresh bus prefix and time its first full publish; then, given
    ``while_away`` (which changes the cluster and returns how many rollouts it changed), its restart
    (``truth``: the simulator's fleet rows, which the bus's must equal once the fleet is current)."""
    import redis

    prefix = f"cold-{uuid.uuid4().hex[:8]}:"
    client = redis.Redis.from_url(redis_url)
    run = _WatcherRun(kubeconfig, cluster, redis_url, prefix, env or {}, history)
    try:
        everything = f"{rollouts} rollouts on the bus"
        seconds = run.wait_for(lambda: client.hlen(f"{prefix}fleet") >= rollouts, everything, timeout)
        cpu = cpu_seconds(run.proc.pid)
        time.sleep(settle)
        rss, peak = process_memory(run.proc.pid)
        cold = ColdStart(rollouts, seconds, run.marks.get(_WatcherRun.MARKS[0]), peak, rss, cpu)
        if while_away is not None:
            run.stop()
            handed_off = run.handoff
            changed = while_away()
            # The rows the restarted watcher must change: the cluster is quiet now, so its truth is fixed.
            expected = truth() if truth is not None else None
            pending = rows_to_change(client, prefix, expected)
            run = _WatcherRun(kubeconfig, cluster, redis_url, prefix, env or {}, history)
            current = _WatcherRun.MARKS[1]
            # Current: the watcher says its resync is done, and every row that was behind equals the
            # simulator's (changes since the last watcher stopped may reach it after its resync: a watch
            # resumed from the handoff brings them).
            def fleet_current() -> bool:
                return current in run.marks and caught_up(client, prefix, pending)

            restart_seconds = run.wait_for(fleet_current, "a current fleet", timeout)
            cpu = cpu_seconds(run.proc.pid)
            differing = None
            if expected is not None:
                held = bus_rows(client, prefix)
                differing = sum(held.get(key) != row for key, row in expected.items())
                differing += len(held.keys() - expected.keys())
            cold.restart = Restart(
                restart_seconds, run.marks.get(_WatcherRun.MARKS[0]), changed, run.resync.get("kept", 0),
                run.resync.get("built", 0), cpu, differing, {**handed_off, **run.handoff},
            )
        return cold
    finally:
        run.stop()
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)


def rows_to_change(
    client: Any, prefix: str, expected: dict[str, str] | None, cluster: str | None = None
) -> dict[str, str | None]:
    """Key → the row the bus must come to hold (None: no row), for each row that differs now (of
    ``cluster``'s rows alone, when given: ``expected`` is then that cluster's)."""
    if expected is None:
        return {}
    held = bus_rows(client, prefix)
    if cluster is not None:
        held = {key: row for key, row in held.items() if key.startswith(f"{cluster}/")}
    pending: dict[str, str | None] = {key: row for key, row in expected.items() if held.get(key) != row}
    pending.update(dict.fromkeys(held.keys() - expected.keys()))
    return pending


def caught_up(client: Any, prefix: str, pending: dict[str, str | None]) -> bool:
    """Whether every pending row now equals what it must become (read for those keys alone: cheap enough
    to ask every 50 ms while the watcher is timed)."""
    if not pending:
        return True
    from dashboard.bench.clients import canonical
    from dashboard.web.fleet_index import present

    keys = list(pending)
    now = datetime.now(UTC)
    for key, raw in zip(keys, client.hmget(f"{prefix}fleet", keys), strict=True):
        row = canonical(present(orjson.loads(raw), now)) if raw is not None else None
        if row != pending[key]:
            return False
    return True


def run_cold_start(
    *,
    rollouts: int,
    redis_url: str,
    kubeconfig: Path | None = None,
    settle: float = 15.0,
    namespaces: int = 100,
    restart_releases: int = 0,
    history: bool = False,
    log: Any = print,
) -> ColdStart:
    """The cold start against ``kubeconfig``'s cluster, or against kubesim's fleet scenario of ``rollouts``
    rollouts in ``namespaces`` namespaces, seeded and settled here first (minutes at 10,000). Then (with
    kubesim) the restart, after ``restart_releases`` new images were rolled out while the watcher was away
    (0: a restart with nothing changed)."""
    if kubeconfig is not None:
        return measure_cold_start(
            kubeconfig=kubeconfig, rollouts=rollouts, redis_url=redis_url, settle=settle, history=history
        )
    from dashboard.bench.churn import Cluster
    from dashboard.bench.truth import expected_rows
    from dashboard.bench.watch import RELEASE_SECONDS, WriteLog, _fleet_simulation, _seed
    from kubesim.testing import running_kubesim

    with running_kubesim([], bookmark_interval=30.0, history_limit=500_000) as kube:
        started = time.monotonic()
        sim = kube.call(_fleet_simulation, kube.store, kube.faults, rollouts, min(namespaces, rollouts))
        kube.call(_seed, sim, timeout=900)
        log(f"fleet scenario: {rollouts} rollouts seeded in {time.monotonic() - started:.1f}s")
        writes = WriteLog()
        kube.call(kube.store.add_listener, writes)
        # The simulated controllers run from here on (in a list: ``call`` would await a bare task); their
        # first round rewrites every rollout's status once, which the cold start should not meet.
        kube.call(lambda: [asyncio.ensure_future(sim.run())])
        _wait_for_quiet(kube, writes)
        gc.collect()
        gc.freeze()  # the simulator's store lives in this process: keep its GC passes out of the figures

        def while_away() -> int:
            """New images for about ``restart_releases`` rollouts, rolled out to the end (a release takes
            ``RELEASE_SECONDS``), so the restarted watcher meets a quiet cluster that changed."""
            _, first = kube.call(writes.mark)
            if restart_releases:
                seconds = 2.0
                kube.call(sim.set_churn, restart_releases / seconds)
                time.sleep(seconds)
                kube.call(sim.set_churn, 0)
                time.sleep(RELEASE_SECONDS + 3)
            _, last = kube.call(writes.mark)
            changed = {key for key, _, _ in writes.rollouts[first:last]}
            log(f"restart: {len(changed)} rollouts changed while the watcher was away")
            return len(changed)

        cluster = Cluster.from_kubeconfig("bench", kube.kubeconfig, rollouts, namespaces)
        return measure_cold_start(
            kubeconfig=kube.kubeconfig, rollouts=rollouts, redis_url=redis_url, settle=settle,
            while_away=while_away, truth=lambda: asyncio.run(expected_rows([cluster])), history=history,
        )


def _wait_for_quiet(kube: Any, writes: Any, quiet: float = 2.0, timeout: float = 120.0) -> None:
    """Until the simulator has written nothing for ``quiet`` seconds (at most ``timeout``)."""
    deadline = time.monotonic() + timeout
    last = kube.call(writes.mark)
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = kube.call(writes.mark)
        if now == last:
            return
        last = now
