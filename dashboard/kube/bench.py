"""The watcher benchmark: a kubesim fleet of N rollouts, the real ``manage.py watch`` process, Redis.

What it measures (printed, never asserted):
- throughput: one status write to every rollout as fast as the simulator takes them; changes/s is
  N / (time from the first write until the last of those N views is in the stream);
- latency at a steady rate (default 200 changes/s, spread over distinct rollouts): from the simulator's
  write (wall clock, same machine) to the stream entry carrying that resourceVersion — p50 / p99;
- the watcher process's memory (VmRSS now and VmHWM, its peak), read from /proc.

The simulator runs in this process (kubesim's in-thread server, no scenario: the benchmark writes the
objects itself so the rate is exact); the watcher runs as its own process, as in production.

Non-goals: asserting targets (tests never time things), history-write throughput (``--no-history``
is the default so the figures are the live path's; pass ``--history`` to include the recorder).
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STEPS = [
    {"setWeight": 10},
    {"pause": {}},
    {"setWeight": 50},
    {"pause": {"duration": "1m"}},
    {"setWeight": 100},
]


@dataclass
class BenchResult:
    rollouts: int
    objects: int
    initial_sync_seconds: float
    throughput_changes: int
    throughput_seconds: float
    rate: float
    latencies_ms: list[float] = field(default_factory=list)
    rss_mb: float = 0.0
    peak_rss_mb: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        lat = sorted(self.latencies_ms)
        return {
            "rollouts": self.rollouts,
            "objects": self.objects,
            "initial_sync_seconds": round(self.initial_sync_seconds, 2),
            "changes_per_second": round(self.throughput_changes / self.throughput_seconds, 1),
            "latency_rate_per_second": self.rate,
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


def build_fleet(store: Any, rollouts: int, namespaces: int = 20) -> int:
    """Create ``rollouts`` healthy canaries, each with its stable ReplicaSet and two pods."""
    created = 0
    for i in range(rollouts):
        ns, name = f"team-{i % namespaces:02d}", f"svc-{i:05d}"
        labels = {"app": name}
        template = {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "app", "image": f"registry.local/{name}:1.0"}]},
        }
        ro = store.create(
            "argoproj.io/rollouts",
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Rollout",
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "labels": labels,
                    "annotations": {"rollout.argoproj.io/revision": "1"},
                },
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": labels},
                    "template": template,
                    "strategy": {"canary": {"steps": STEPS}},
                },
                "status": {
                    "currentPodHash": "stable1",
                    "stableRS": "stable1",
                    "currentStepIndex": len(STEPS),
                    "phase": "Healthy",
                    "replicas": 2,
                    "updatedReplicas": 2,
                    "readyReplicas": 2,
                    "availableReplicas": 2,
                    "observedGeneration": "1",
                },
            },
        )
        owner = [
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Rollout",
                "name": name,
                "uid": ro["metadata"]["uid"],
                "controller": True,
            }
        ]
        rs_labels = {**labels, "rollouts-pod-template-hash": "stable1"}
        rs = store.create(
            "apps/replicasets",
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": f"{name}-stable1",
                    "namespace": ns,
                    "labels": rs_labels,
                    "ownerReferences": owner,
                    "annotations": {"rollout.argoproj.io/revision": "1"},
                },
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": rs_labels},
                    "template": {**template, "metadata": {"labels": rs_labels}},
                },
                "status": {
                    "replicas": 2,
                    "readyReplicas": 2,
                    "availableReplicas": 2,
                    "observedGeneration": 1,
                },
            },
        )
        rs_owner = [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": rs["metadata"]["name"],
                "uid": rs["metadata"]["uid"],
                "controller": True,
            }
        ]
        for p in range(2):
            store.create(
                "pods",
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{name}-stable1-{p}",
                        "namespace": ns,
                        "labels": rs_labels,
                        "ownerReferences": rs_owner,
                    },
                    "spec": template["spec"],
                    "status": {
                        "phase": "Running",
                        "conditions": [{"type": "Ready", "status": "True"}],
                        "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0}],
                    },
                },
            )
        created += 4
    return created


def write_step(store: Any, index: int, step: int) -> tuple[str, float]:
    """Move rollout ``index`` to canary step ``step``; returns (resourceVersion, wall time of the write)."""
    ns, name = f"team-{index % 20:02d}", f"svc-{index:05d}"
    obj = store.patch(
        "argoproj.io/rollouts",
        ns,
        name,
        {
            "status": {
                "currentPodHash": "canary2",
                "currentStepIndex": step,
                "phase": "Progressing",
                "message": "more replicas need to be updated",
            }
        },
        subresource="status",
    )
    return str(obj["metadata"]["resourceVersion"]), time.time()


class StreamWatcher(threading.Thread):
    """Reads the bus stream and notes when each resourceVersion was published."""

    def __init__(self, redis_url: str, prefix: str) -> None:
        super().__init__(daemon=True, name="bench-stream")
        import redis

        self.redis = redis.Redis.from_url(redis_url)
        self.key = f"{prefix}stream"
        self.seen: dict[str, float] = {}
        self.stop_flag = False

    def run(self) -> None:
        last = "$"
        while not self.stop_flag:
            reply = self.redis.xread({self.key: last}, block=200, count=1000)
            now = time.time()
            for _, entries in reply or ():
                for entry_id, fields in entries:
                    last = entry_id.decode()
                    view = fields.get(b"view")
                    if view:
                        rv = json.loads(view).get("resourceVersion")
                        if rv:
                            self.seen.setdefault(str(rv), now)


def _memory(pid: int) -> tuple[float, float]:
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            values[line.split(":")[0]] = int(line.split()[1]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def run_bench(
    *, rollouts: int, rate: float, seconds: float, redis_url: str, history: bool, log: Any = print
) -> BenchResult:
    import redis

    from kubesim.testing import running_kubesim

    prefix = f"bench-{uuid.uuid4().hex[:8]}:"
    client = redis.Redis.from_url(redis_url)
    with running_kubesim([], bookmark_interval=30.0, history_limit=200_000) as sim:
        started = time.monotonic()
        objects = sim.call(build_fleet, sim.store, rollouts, timeout=600)
        log(f"fleet: {rollouts} rollouts, {objects} objects in {time.monotonic() - started:.1f}s")
        gc.collect()
        gc.freeze()  # the simulator's store lives in this process: keep its GC passes out of the figures
        env = {**os.environ, "LIVE_REDIS_PREFIX": prefix, "REDIS_URL": redis_url, "LOG_LEVEL": "WARNING"}
        args = [
            sys.executable,
            "manage.py",
            "watch",
            "--kubeconfig",
            str(sim.kubeconfig),
            "--cluster",
            "bench",
        ]
        if not history:
            args.append("--no-history")
        proc = subprocess.Popen(args, env=env, cwd=Path(__file__).resolve().parents[2])
        stream = StreamWatcher(redis_url, prefix)
        try:
            started = time.monotonic()
            while client.hlen(f"{prefix}fleet") < rollouts:
                if proc.poll() is not None:
                    raise RuntimeError(f"the watcher exited with {proc.returncode}")
                time.sleep(0.1)
            initial = time.monotonic() - started
            log(f"initial list + publish of {rollouts} views: {initial:.1f}s")
            stream.start()
            time.sleep(1.0)

            # Throughput: one change per rollout, as fast as the simulator takes them.
            def burst() -> list[str]:
                return [write_step(sim.store, i, 1)[0] for i in range(rollouts)]

            t0 = time.time()
            versions = sim.call(burst, timeout=600)
            _wait_seen(stream, versions, timeout=120)
            t_burst = max(stream.seen[v] for v in versions) - t0
            log(f"throughput: {rollouts} changes in {t_burst:.2f}s")
            time.sleep(1.0)

            # Latency at a steady rate, over distinct rollouts so coalescing never delays a change.
            writes: dict[str, float] = {}
            interval = 1.0 / rate
            next_at = time.monotonic()
            count = int(rate * seconds)
            for n in range(count):
                rv, wall = sim.call(write_step, sim.store, n % rollouts, 2 + (n // rollouts) % 3)
                writes[rv] = wall
                next_at += interval
                pause = next_at - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
            _wait_seen(stream, list(writes), timeout=60)
            latencies = [(stream.seen[rv] - wall) * 1000 for rv, wall in writes.items() if rv in stream.seen]
            rss, peak = _memory(proc.pid)
            return BenchResult(rollouts, objects, initial, rollouts, t_burst, rate, latencies, rss, peak)
        finally:
            stream.stop_flag = True
            proc.terminate()
            proc.wait(30)
            keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
            if keys:
                client.delete(*keys)


def _wait_seen(stream: StreamWatcher, versions: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(v in stream.seen for v in versions):
            return
        time.sleep(0.05)
    missing = sum(v not in stream.seen for v in versions)
    raise RuntimeError(f"{missing} of {len(versions)} changes were not published within {timeout}s")
