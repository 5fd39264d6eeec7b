"""The watcher benchmark: kubesim's fleet scenario behind its real API server, the real ``manage.py watch``
process, Redis.

What it measures (printed, never asserted):
- throughput: the fleet's churn (new images, which the simulated controllers roll out) is raised until
  the simulator offers more changes than the target; changes/s is the number of watched objects written
  during the window divided by the time from the window's start until the last Rollout written in it is
  published — if the watcher falls behind, that tail grows and the figure drops;
- latency at a steady load (default ~200 changes/s: the churn is set from the changes one release costs):
  for every Rollout write, from the simulator's write (wall clock, taken by a store listener at the
  moment of the write) to the first publication of that rollout's snapshot whose ``resourceVersion`` is at
  least the written one — coalesced writes count until the publication that carries them;
- the watcher process's memory (VmRSS now and VmHWM, its peak), read from /proc.

A publication's time is its stream entry's id: Redis stamps it (milliseconds, same machine clock) in the
same transaction that replaces the snapshot, so reading the stream late — the benchmark reads it after
each phase, with the stream's cap raised so nothing is trimmed — cannot shift any figure. The simulator
runs in a thread of this process and is only driven through its own knob (``Simulation.set_churn``); the
watcher reads it over HTTPS like any cluster.

Non-goals: asserting targets (tests never time things), history-write throughput (``--no-history`` is
the default so the figures are the live path's; pass ``--history`` to include the recorder).
"""

from __future__ import annotations

import asyncio
import bisect
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    unpublished: int = 0
    watcher_cpu_seconds: float = 0.0  # what the watcher process burnt meanwhile (contention-proof)

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
        burst = sorted(self.throughput.latencies_ms)
        return {
            "rollouts": self.rollouts,
            "objects": self.objects,
            "initial_sync_seconds": round(self.initial_sync_seconds, 2),
            "changes_per_second": round(self.throughput.per_second, 1),
            "throughput_changes": self.throughput.changes,
            "throughput_window_seconds": round(self.throughput.seconds, 2),
            "throughput_latency_p99_ms": round(_pct(burst, 99), 1) if burst else None,
            "watcher_cpu_ms_per_change": round(
                1000 * self.throughput.watcher_cpu_seconds / max(1, self.throughput.changes), 3
            ),
            "latency_changes_per_second": round(self.steady_offered_per_second, 1),
            "latency_samples": len(lat),
            "latency_unpublished": self.steady.unpublished,
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
        # Rollout writes that change what the view shows by definition: (key, resourceVersion, wall time).
        self.rollouts: list[tuple[str, int, float]] = []

    def __call__(self, event_type: str, resource: str, stored: dict[str, Any], previous: Any) -> None:
        if resource not in WATCHED:
            return
        self.changes += 1
        if resource == ROLLOUTS and event_type == "MODIFIED" and _shown(stored) != _shown(previous):
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


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _memory(pid: int) -> tuple[float, float]:
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
    burst_seconds: float = 10.0,
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
            "LOG_LEVEL": "WARNING",
        }
        args = [sys.executable, "manage.py", "watch", "--kubeconfig", str(kube.kubeconfig)]
        args += ["--cluster", "bench"]
        if not history:
            args.append("--no-history")
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

            # Throughput: more churn than the target needs, for a fixed window.
            before = kube.call(writes.mark)[0]
            burst = _phase(kube, sim, writes, stream, burst_churn, burst_seconds, settle=60.0, pid=proc.pid)
            burst.seconds = max(burst.seconds, 1e-9)
            log(f"throughput: {burst.changes} changes published within {burst.seconds:.2f}s")
            time.sleep(RELEASE_SECONDS)  # the burst's releases finish before the steady phase
            stream.read()

            # Latency at a steady load: churn sized from what a whole release costs in changes, and one
            # release's time to warm up so that every stage of a release is under way.
            per_release = (kube.call(writes.mark)[0] - before) / (burst_churn * burst_seconds)
            churn = rate / max(per_release, 1.0)
            steady = _phase(
                kube, sim, writes, stream, churn, seconds, settle=30.0, pid=proc.pid, warmup=RELEASE_SECONDS
            )
            offered = steady.changes / seconds
            samples = len(steady.latencies_ms)
            log(f"steady: churn {churn:.1f}/s gave {offered:.0f} changes/s, {samples} samples")
            rss, peak = _memory(proc.pid)
            return BenchResult(rollouts, objects, initial, burst, steady, offered, rss, peak)
        finally:
            kube.call(sim.set_churn, 0)
            kube.call(runner.cancel)
            proc.terminate()
            proc.wait(30)
            keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
            if keys:
                client.delete(*keys)


def _phase(
    kube: Any,
    sim: Any,
    writes: WriteLog,
    stream: Publications,
    churn: float,
    seconds: float,
    *,
    settle: float,
    pid: int,
    warmup: float = 0.0,
) -> Phase:
    """Churn at ``churn`` for ``seconds``; then wait (up to ``settle``) until every Rollout written in the
    window is published and measure each write's latency from the stream."""
    kube.call(sim.set_churn, churn)
    time.sleep(warmup)
    changes0, rollouts0 = kube.call(writes.mark)
    cpu0 = _cpu_seconds(pid)
    t0 = time.time()
    time.sleep(seconds)
    changes1, rollouts1 = kube.call(writes.mark)
    kube.call(sim.set_churn, 0)  # what is measured is the window's writes; no more load while they settle
    window = writes.rollouts[rollouts0:rollouts1]
    deadline = time.monotonic() + settle
    while True:
        stream.read()
        seen = [stream.visible_at(key, rv) for key, rv, _ in window]
        if all(at is not None for at in seen) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    published = [(at, wall) for at, (_, _, wall) in zip(seen, window, strict=True) if at is not None]
    if os.environ.get("BENCH_DEBUG"):
        with open(os.environ["BENCH_DEBUG"] + f"-{churn:.0f}.json", "w") as fh:
            json.dump({"window": window, "pub": {k: stream.by_rollout[k] for k, _, _ in window}}, fh)
    cpu = _cpu_seconds(pid) - cpu0
    phase = Phase(changes1 - changes0, unpublished=len(window) - len(published), watcher_cpu_seconds=cpu)
    # A stream id has millisecond resolution: a publication within the write's own millisecond reads 0.
    phase.latencies_ms = [max(0.0, (at - wall) * 1000) for at, wall in published]
    phase.seconds = (max(at for at, _ in published) - t0) if published else 0.0
    if phase.unpublished:
        raise RuntimeError(
            f"{phase.unpublished} of {len(window)} Rollout writes were not published within {settle:.0f}s"
        )
    return phase
