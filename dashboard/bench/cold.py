"""The watcher's cold start: from starting ``manage.py watch`` until the whole fleet is on the bus, and its
memory (peak and settled) once it is.

``measure_cold_start`` runs the real watcher process (``--no-history``) against a cluster that is already
there (a kubeconfig: a kubesim serving a fleet, or a real cluster) and polls the bus's fleet index until it
holds ``rollouts`` rows; then it keeps the watcher running ``settle`` seconds and reads its memory from
/proc (VmHWM, the peak, and VmRSS, what it holds once the first publish is done). ``manage.py
bench_watch --cold-start --rollouts N`` prints these figures for a fleet it seeds in kubesim first;
``--kubeconfig FILE`` measures a cluster already running instead (no seeding: the figures come in
seconds, and repeat).

Non-goals: asserting targets; what the watcher does after its first publish (``dashboard.bench.watch``).
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dashboard.bench.watch import cpu_seconds, process_memory


@dataclass
class ColdStart:
    rollouts: int
    seconds: float  # from starting the process until the fleet index holds every rollout
    listed_seconds: float | None  # until the watcher logged "initial list complete", when it did
    peak_rss_mb: float
    rss_mb: float  # after ``settle`` seconds
    cpu_seconds: float  # the watcher's CPU time until the fleet was on the bus

    def as_dict(self) -> dict[str, Any]:
        return {
            "rollouts": self.rollouts,
            "cold_start_seconds": round(self.seconds, 2),
            "initial_list_seconds": round(self.listed_seconds, 2) if self.listed_seconds else None,
            "cold_start_cpu_seconds": round(self.cpu_seconds, 2),
            "watcher_peak_rss_mb": round(self.peak_rss_mb, 1),
            "watcher_settled_rss_mb": round(self.rss_mb, 1),
        }


def measure_cold_start(
    *,
    kubeconfig: Path,
    rollouts: int,
    redis_url: str,
    cluster: str = "bench",
    settle: float = 15.0,
    timeout: float = 300.0,
    env: dict[str, str] | None = None,
) -> ColdStart:
    """Start the watcher (``--no-history``) under a fresh bus prefix and time its first full publish."""
    import redis

    prefix = f"cold-{uuid.uuid4().hex[:8]}:"
    client = redis.Redis.from_url(redis_url)
    environment = {
        **os.environ,
        **(env or {}),
        "LIVE_REDIS_PREFIX": prefix,
        "REDIS_URL": redis_url,
        "LOG_LEVEL": "INFO",
    }
    args = [sys.executable, "manage.py", "watch", "--kubeconfig", str(kubeconfig), "--cluster", cluster]
    args.append("--no-history")
    started = time.monotonic()
    proc = subprocess.Popen(
        args,
        env=environment,
        cwd=Path(__file__).resolve().parents[2],
        stderr=subprocess.PIPE,
        text=True,
    )
    listed: list[float] = []
    _follow_log(proc, started, listed)
    try:
        while client.hlen(f"{prefix}fleet") < rollouts:
            if proc.poll() is not None:
                raise RuntimeError(f"the watcher exited with {proc.returncode}")
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"the watcher did not publish {rollouts} rollouts within {timeout:.0f}s")
            time.sleep(0.05)
        seconds = time.monotonic() - started
        cpu = cpu_seconds(proc.pid)
        time.sleep(settle)
        rss, peak = process_memory(proc.pid)
        return ColdStart(rollouts, seconds, listed[0] if listed else None, peak, rss, cpu)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)


def _follow_log(proc: subprocess.Popen[str], started: float, listed: list[float]) -> None:
    """Read the watcher's log on a thread (so its pipe never fills); note when the initial list ended."""
    import threading

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "initial list complete" in line and not listed:
                listed.append(time.monotonic() - started)
            elif "Traceback" in line or "ERROR" in line:
                sys.stderr.write(line)

    threading.Thread(target=read, name="watcher-log", daemon=True).start()


def run_cold_start(
    *,
    rollouts: int,
    redis_url: str,
    kubeconfig: Path | None = None,
    settle: float = 15.0,
    namespaces: int = 100,
    log: Any = print,
) -> ColdStart:
    """The cold start against ``kubeconfig``'s cluster, or against kubesim's fleet scenario of ``rollouts``
    rollouts in ``namespaces`` namespaces, seeded and settled here first (minutes at 10,000)."""
    if kubeconfig is not None:
        return measure_cold_start(
            kubeconfig=kubeconfig, rollouts=rollouts, redis_url=redis_url, settle=settle
        )
    from dashboard.bench.watch import _fleet_simulation, _seed
    from kubesim.testing import running_kubesim

    with running_kubesim([], bookmark_interval=30.0, history_limit=500_000) as kube:
        started = time.monotonic()
        sim = kube.call(_fleet_simulation, kube.store, kube.faults, rollouts, min(namespaces, rollouts))
        kube.call(_seed, sim, timeout=900)
        log(f"fleet scenario: {rollouts} rollouts seeded in {time.monotonic() - started:.1f}s")
        gc.collect()
        gc.freeze()  # the simulator's store lives in this process: keep its GC passes out of the figures
        return measure_cold_start(
            kubeconfig=kube.kubeconfig, rollouts=rollouts, redis_url=redis_url, settle=settle
        )
