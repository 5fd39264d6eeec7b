"""The watcher benchmark: kubesim's fleet scenario behind its real API server, the real ``manage.py watch``
process, Redis.

What it measures (printed, never asserted):
- throughput: the watcher is stopped (SIGSTOP) while the fleet churns (new images, which the simulated
  controllers roll out), so a backlog of changes queues on its watch streams; it is resumed, and
  changes/s is the backlog over the time until the last Rollout written meanwhile is published. The
  simulator shares this machine's two cores with the watcher and cannot write 500 changes/s while the
  watcher runs, so a backlog is how the watcher's own rate shows; the watcher's CPU time per change is
  printed too (it does not depend on what else the machine is doing);
- latency at a steady load (default ~200 changes/s: the churn is set from the changes one release costs):
  for every Rollout write that changes a status field the view shows as it is (step, pod hash, phase,
  message, stable RS — a write that changes nothing visible may rightly publish nothing), from the
  simulator's write (wall clock, taken by a store listener at the moment of the write) to the first
  publication of that rollout's snapshot whose ``resourceVersion`` is at least the written one —
  coalesced writes count until the publication that carries them. This includes kubesim's own
  delivery of the watch event, as a cluster's would be;
- the watcher process's memory (VmRSS now and VmHWM, its peak), read from /proc.

A publication's time is its stream entry's id: Redis stamps it (milliseconds, same machine clock) in the
same transaction that replaces the snapshot, so reading the stream late — the benchmark reads it after
each phase, with the stream's cap raised so nothing is trimmed — cannot shift any figure. The simulator
runs in a thread of this process and is only driven through its own knob (``Simulation.set_churn``); the
watcher reads it over HTTPS like any cluster.

``BENCH_WATCHER_LOG_LEVEL=INFO`` lets the watcher log its counters (changes, builds, published) every few
seconds: builds per change in the steady phase is the figure that says whether a change costs a view build.

Non-goals: asserting targets (tests never time things), history-write throughput (``--no-history`` is
the default so the figures are the live path's; pass ``--history`` to include the recorder).
"""

from __future__ import annotations

import asyncio
import bisect
import gc
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dashboard.bench.processes import compile_sources, cpu_seconds

WATCHED = frozenset(
    {
        "argoproj.io/rollouts",
        "apps/replicasets",
        "pods",
        "argoproj.io/analysisruns",
        "argoproj.io/experiments",
        "argoproj.io/applications",
    }
)
ROLLOUTS = "argoproj.io/rollouts"
RELEASE_SECONDS = 12.0  # a fleet release: a 10 s pause between its two steps, and the rest
STREAM_MAXLEN = 1_000_000  # the bench's own stream cap: nothing it measures may be trimmed before it is read


@dataclass
class Phase:
    """One measured window: what kubesim wrote in it and how long until the watcher had published it."""

    changes: int = 0
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    watcher_cpu_seconds: float = 0.0  # what the watcher process burnt meanwhile (contention-proof)
    latencies_at: list[tuple[float, float]] = field(default_factory=list)  # (published, written)
    first_change: int = 0
    first_release: int = 0

    @property
    def per_second(self) -> float:
        return self.changes / self.seconds if self.seconds else 0.0


@dataclass
class BenchResult:
    rollouts: int
    objects: int
    initial_sync_seconds: float
    throughput: Phase
    steady: Phase
    steady_offered_per_second: float
    rss_mb: float = 0.0
    peak_rss_mb: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        lat = sorted(self.steady.latencies_ms)
        return {
            "rollouts": self.rollouts,
            "objects": self.objects,
            "initial_sync_seconds": round(self.initial_sync_seconds, 2),
            "changes_per_second": round(self.throughput.per_second, 1),
            "throughput_backlog_changes": self.throughput.changes,
            "throughput_drain_seconds": round(self.throughput.seconds, 2),
            "watcher_cpu_ms_per_change": round(
                1000 * self.throughput.watcher_cpu_seconds / max(1, self.throughput.changes), 3
            ),
            "latency_changes_per_second": round(self.steady_offered_per_second, 1),
            # At a steady load a rollout's changes settle into fewer builds than in the backlog's burst.
            "steady_watcher_cpu_ms_per_change": round(
                1000 * self.steady.watcher_cpu_seconds / max(1, self.steady.changes), 3
            ),
            "latency_samples": len(lat),
            "latency_p50_ms": round(_pct(lat, 50), 1) if lat else None,
            "latency_p99_ms": round(_pct(lat, 99), 1) if lat else None,
            "latency_max_ms": round(lat[-1], 1) if lat else None,
            "watcher_rss_mb": round(self.rss_mb, 1),
            "watcher_peak_rss_mb": round(self.peak_rss_mb, 1),
        }


def _pct(values: list[float], p: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]


class WriteLog:
    """Every watched write as kubesim makes it: a store listener on the simulator's own thread."""

    def __init__(self) -> None:
        self.changes = 0
        self.releases = 0  # pod-template changes: each starts a release the controllers roll out
        # Rollout writes that change what the view shows by definition: (key, resourceVersion, wall time).
        self.rollouts: list[tuple[str, int, float]] = []

    def __call__(self, event_type: str, resource: str, stored: dict[str, Any], previous: Any) -> None:
        if resource not in WATCHED:
            return
        self.changes += 1
        if resource != ROLLOUTS or event_type != "MODIFIED":
            return
        if (stored.get("spec") or {}).get("template") != (previous.get("spec") or {}).get("template"):
            self.releases += 1
        if _shown(stored) != _shown(previous):
            meta = stored["metadata"]
            key = f"{meta['namespace']}/{meta['name']}"
            self.rollouts.append((key, int(meta["resourceVersion"]), time.time()))

    def mark(self) -> tuple[int, int]:
        return self.changes, len(self.rollouts)


def _shown(rollout: Any) -> tuple[Any, ...]:
    """Status fields a RolloutView shows as they are (step, pod hash, phase, message, stable RS).

    A write that changes none of them (a condition's timestamp, observedGeneration) may rightly publish
    nothing, so it has no write-to-publish latency; one that changes any of them must be published.
    """
    status = (rollout or {}).get("status") or {}
    return tuple(status.get(k) for k in SHOWN_STATUS)


SHOWN_STATUS = ("currentStepIndex", "currentPodHash", "phase", "message", "stableRS")


class Publications:
    """The stream read after the fact: per rollout, (publication ms, resourceVersion) in order."""

    def __init__(self, client: Any, key: str) -> None:
        self.client = client
        self.key = key
        self.last = "0-0"
        self.by_rollout: dict[str, list[tuple[float, int]]] = defaultdict(list)

    def read(self) -> None:
        first = self.client.xrange(self.key, "-", "+", count=1)
        if first and self.last != "0-0" and _id_pair(first[0][0]) > _id_pair(self.last):
            raise RuntimeError("the stream was trimmed before the benchmark read it; raise STREAM_MAXLEN")
        while True:
            chunk = self.client.xrange(self.key, f"({self.last}", "+", count=2000)
            if not chunk:
                return
            for entry_id, fields in chunk:
                view = fields.get(b"view")
                if view:
                    data = json.loads(view)
                    rv = data.get("resourceVersion")
                    if rv is not None:
                        key = f"{data['namespace']}/{data['name']}"
                        self.by_rollout[key].append((_id_pair(entry_id)[0] / 1000.0, int(rv)))
            self.last = chunk[-1][0].decode()

    def visible_at(self, key: str, rv: int) -> float | None:
        """When the first snapshot of ``key`` carrying ``rv`` (or something newer) was published."""
        published = self.by_rollout.get(key, ())
        versions = [v for _, v in published]  # in publication order, so non-decreasing
        index = bisect.bisect_left(versions, rv)
        return published[index][0] if index < len(published) else None


def _id_pair(stream_id: bytes | str) -> tuple[int, int]:
    text = stream_id.decode() if isinstance(stream_id, bytes) else stream_id
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def process_memory(pid: int) -> tuple[float, float]:
    """A process's resident memory now and at its peak (VmRSS, VmHWM), in MB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            values[line.split(":")[0]] = int(line.split()[1]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def _fleet_simulation(store: Any, faults: Any, rollouts: int, namespaces: int) -> Any:
    from kubesim.scenarios import load_scenario
    from kubesim.simulation import Simulation

    scenario = load_scenario("fleet")
    assert scenario.fleet is not None
    scenario.fleet.rollouts, scenario.fleet.namespaces = rollouts, namespaces
    scenario.fleet.churn_per_second = 0  # quiet while seeding; the phases set it
    return Simulation(store, [scenario], seed=1, faults=faults)


def _seed(sim: Any) -> None:
    """Create the fleet and let the controllers settle it (no watcher is connected yet)."""
    sim.seed()
    while sim.process(limit=5000):
        pass


def run_bench(
    *,
    rollouts: int,
    rate: float,
    seconds: float,
    redis_url: str,
    history: bool,
    burst_churn: float = 80.0,
    burst_seconds: float = 4.0,
    namespaces: int = 50,
    log: Any = print,
) -> BenchResult:
    import redis

    from kubesim.testing import running_kubesim

    prefix = f"bench-{uuid.uuid4().hex[:8]}:"
    client = redis.Redis.from_url(redis_url)
    writes = WriteLog()
    with running_kubesim([], bookmark_interval=30.0, history_limit=400_000) as kube:
        started = time.monotonic()
        sim = kube.call(_fleet_simulation, kube.store, kube.faults, rollouts, namespaces)
        kube.call(_seed, sim, timeout=900)
        objects = sum(kube.store.count(resource) for resource in WATCHED)
        seeded = time.monotonic() - started
        log(f"fleet scenario: {rollouts} rollouts, {objects} watched objects in {seeded:.1f}s")
        kube.call(kube.store.add_listener, writes)
        # In a list: ``call`` would await a bare task, and this one runs until cancelled.
        (runner,) = kube.call(lambda: [asyncio.ensure_future(sim.run())])
        gc.collect()
        gc.freeze()  # the simulator's store lives in this process: keep its GC passes out of the figures
        env = {
            **os.environ,
            "LIVE_REDIS_PREFIX": prefix,
            "LIVE_STREAM_MAXLEN": str(STREAM_MAXLEN),
            "REDIS_URL": redis_url,
            "LOG_LEVEL": os.environ.get("BENCH_WATCHER_LOG_LEVEL", "WARNING"),
        }
        args = [sys.executable, "manage.py", "watch", "--kubeconfig", str(kube.kubeconfig)]
        args += ["--cluster", "bench"]
        if not history:
            args.append("--no-history")
        compile_sources()
        proc = subprocess.Popen(args, env=env, cwd=Path(__file__).resolve().parents[2])
        stream = Publications(client, f"{prefix}stream")
        try:
            started = time.monotonic()
            while client.hlen(f"{prefix}fleet") < rollouts:
                if proc.poll() is not None:
                    raise RuntimeError(f"the watcher exited with {proc.returncode}")
                if time.monotonic() - started > 300:
                    raise RuntimeError("the watcher did not publish the fleet within 300s")
                time.sleep(0.1)
            initial = time.monotonic() - started
            log(f"initial list + publish of {rollouts} views: {initial:.1f}s")
            time.sleep(2.0)
            stream.read()

            burst = _backlog(kube, sim, writes, stream, burst_churn, burst_seconds, proc)
            log(f"throughput: a backlog of {burst.changes} changes published in {burst.seconds:.2f}s")
            time.sleep(RELEASE_SECONDS)  # the burst's releases finish before the steady phase
            stream.read()

            # Latency at a steady load: churn sized from what a whole release costs in changes, and one
            # release's time to warm up so that every stage of a release is under way.
            changes, releases = kube.call(lambda: (writes.changes - burst.first_change, writes.releases))
            per_release = changes / max(1, releases - burst.first_release)
            churn = rate / max(per_release, 1.0)
            steady, churn = _steady(kube, sim, writes, stream, churn, rate, seconds, proc.pid)
            offered = steady.changes / seconds
            samples = len(steady.latencies_ms)
            log(f"steady: {churn:.1f} releases/s gave {offered:.0f} changes/s, {samples} samples")
            rss, peak = process_memory(proc.pid)
            return BenchResult(rollouts, objects, initial, burst, steady, offered, rss, peak)
        finally:
            kube.call(sim.set_churn, 0)
            kube.call(runner.cancel)
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
            proc.terminate()
            proc.wait(30)
            keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
            if keys:
                client.delete(*keys)


def _backlog(
    kube: Any,
    sim: Any,
    writes: WriteLog,
    stream: Publications,
    churn: float,
    seconds: float,
    proc: subprocess.Popen[bytes],
) -> Phase:
    """Throughput without the simulator's own speed in the way: the watcher is stopped (SIGSTOP) while
    the fleet churns, so the changes queue up on its watch streams; then it is resumed and the figure is
    the changes written while it was stopped over the time from resuming until the last Rollout written
    meanwhile is published. ``seconds`` stays well inside the lease's TTL so it is not lost meanwhile."""
    first_change, first_rollout = kube.call(writes.mark)
    first_release = kube.call(lambda: writes.releases)
    proc.send_signal(signal.SIGSTOP)
    try:
        kube.call(sim.set_churn, churn)
        time.sleep(seconds)
        kube.call(sim.set_churn, 0)
        last_change, last_rollout = kube.call(writes.mark)
    finally:
        cpu0 = cpu_seconds(proc.pid)
        resumed = time.time()
        proc.send_signal(signal.SIGCONT)
    window = writes.rollouts[first_rollout:last_rollout]
    phase = _published(stream, window, settle=60.0)
    phase.changes = last_change - first_change
    phase.seconds = max(1e-9, max(at for at, _ in phase.latencies_at) - resumed)
    phase.watcher_cpu_seconds = cpu_seconds(proc.pid) - cpu0
    phase.first_change, phase.first_release = first_change, first_release
    return phase


def _steady(
    kube: Any,
    sim: Any,
    writes: WriteLog,
    stream: Publications,
    churn: float,
    rate: float,
    seconds: float,
    pid: int,
) -> tuple[Phase, float]:
    """Churn at about ``rate`` changes/s: start from the estimated ``churn`` releases/s, correct it once
    from what the steady state (after a release's time) gives, let it settle again; then measure every
    Rollout write of a ``seconds`` window from the write to its publication. Returns the phase and the
    churn used."""
    kube.call(sim.set_churn, churn)
    time.sleep(RELEASE_SECONDS)  # every stage of a release under way: the rate is steady
    before = kube.call(writes.mark)[0]
    time.sleep(5.0)
    offered = (kube.call(writes.mark)[0] - before) / 5.0
    churn *= min(4.0, max(0.25, rate / max(offered, 1.0)))
    kube.call(sim.set_churn, churn)
    time.sleep(RELEASE_SECONDS)
    first_change, first_rollout = kube.call(writes.mark)
    cpu0 = cpu_seconds(pid)
    time.sleep(seconds)
    last_change, last_rollout = kube.call(writes.mark)
    cpu = cpu_seconds(pid) - cpu0  # over the window, as its changes are counted
    kube.call(sim.set_churn, 0)  # what is measured is the window's writes; no more load while they settle
    phase = _published(stream, writes.rollouts[first_rollout:last_rollout], settle=30.0)
    phase.changes = last_change - first_change
    phase.watcher_cpu_seconds = cpu
    return phase, churn


def _published(stream: Publications, window: list[tuple[str, int, float]], settle: float) -> Phase:
    """Wait (up to ``settle``) until every write in ``window`` is published; their latencies."""
    deadline = time.monotonic() + settle
    while True:
        stream.read()
        seen = [stream.visible_at(key, rv) for key, rv, _ in window]
        if all(at is not None for at in seen) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    missing = sum(at is None for at in seen)
    if missing:
        raise RuntimeError(f"{missing} of {len(window)} Rollout writes not published within {settle:.0f}s")
    phase = Phase()
    phase.latencies_at = [(at, wall) for at, (_, _, wall) in zip(seen, window, strict=True) if at is not None]
    # A stream id has millisecond resolution: a publication within the write's own millisecond reads 0.
    phase.latencies_ms = [max(0.0, (at - wall) * 1000) for at, wall in phase.latencies_at]
    return phase
