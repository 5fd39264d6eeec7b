"""The watcher's own share of write → bus, read from the watchers' ``/metrics`` before and after the churn:
``rollouts_ui_watch_lag_seconds`` is observed once per publish of a rollout, from the receipt of the
oldest Rollout change that publish includes (so it bounds the watcher's part of every change it folds in).

What is left of write → bus is the API server's (here kubesim's) delivery of the watch event, which a
real cluster's API server does in milliseconds; on the benchmark's two shared cores it is the simulator
and the 200 emulated browsers waiting for a core.

Non-goals: exact percentiles (the histogram's buckets bound them), other metrics.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterable
from typing import Any

from dashboard.bench import analysis

METRIC = "rollouts_ui_watch_lag_seconds"
THRESHOLDS = (0.1, 0.25, 0.5, 1.0)


def scrape(ports: Iterable[int], *, timeout: float = 5.0) -> dict[float, float]:
    """The watchers' lag histogram for Rollout changes, summed over ``ports``: upper bound → count."""
    from prometheus_client.parser import text_string_to_metric_families

    buckets: dict[float, float] = {}
    for port in ports:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as response:
            text = response.read().decode()
        for family in text_string_to_metric_families(text):
            if family.name != METRIC:
                continue
            for sample in family.samples:
                if sample.name == f"{METRIC}_bucket" and sample.labels.get("kind") == "Rollout":
                    bound = float(sample.labels["le"])
                    buckets[bound] = buckets.get(bound, 0.0) + sample.value
    return buckets


def summary(before: dict[float, float], after: dict[float, float]) -> dict[str, Any]:
    """How many publishes included a Rollout change during the run, and the share of them whose oldest
    such change waited longer than each threshold from its receipt."""
    delta = analysis.histogram_delta(before, after)
    return {
        "publishes": int(delta.get(float("inf"), 0)),
        "share_over": {_name(bound): _rounded(analysis.share_over(delta, bound)) for bound in THRESHOLDS},
    }


def delay_shares(delays_ms: Iterable[float]) -> dict[str, float | None]:
    """The share of ``delays_ms`` above each threshold: write → bus, to set beside ``summary``'s."""
    ordered = list(delays_ms)
    return {
        _name(bound): _rounded(sum(ms > bound * 1000 for ms in ordered) / len(ordered)) if ordered else None
        for bound in THRESHOLDS
    }


def _name(bound: float) -> str:
    return f"{int(bound * 1000)}ms"


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
