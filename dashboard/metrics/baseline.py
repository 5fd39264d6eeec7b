"""The stable version's recent value of each analysis metric, from Prometheus: the baseline that the
``stale-analysis-threshold`` finding compares thresholds against (``detect_findings(…, baselines=…)``).

``baseline_queries(view)`` (pure) takes the newest analysis run's Prometheus metrics from a RolloutView and
points each query at the stable version, as the dry run does: the run's canary pod-template hash becomes
the stable hash. A query that does not select by that hash is left out, since nothing says it measures
the stable version. ``baseline_value(series, side)`` (pure) is the nearest-rank p95 of the answers over
the window for an upper-bound threshold (good values are low), or the p5 for a lower bound.
``stable_baselines(client, view, now=…)`` asks Prometheus for the last hour; ``BaselineCache`` keeps the
result per rollout and refreshes it at most every ``ttl`` seconds. The watcher can then read it while it
rebuilds a view synchronously, with no I/O in that path.

Non-goals: baselines for other providers, and persisting them (Prometheus already keeps the history).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dashboard.domain.findings.analysis import percentile, threshold_bound
from dashboard.metrics.charts import matrix_series
from dashboard.metrics.client import PrometheusClient
from dashboard.metrics.config import MetricsConfig

WINDOW_SECONDS = 3600.0
POINTS = 240  # a 15 s step over the hour: finer adds cost, not accuracy, to a p95


@dataclass(frozen=True)
class BaselineQuery:
    metric: str
    query: str
    side: str  # "upper" (good values are below the threshold) or "lower"


def _newest_prometheus_run(view: Mapping[str, Any]) -> Mapping[str, Any] | None:
    runs = [run for rev in view.get("revisions") or [] for run in rev.get("analysisRuns") or []]
    runs = [r for r in runs if any(m.get("provider") == "prometheus" for m in r.get("metrics") or [])]
    return max(runs, key=lambda r: (r.get("createdAt") or "", r.get("name") or ""), default=None)


def baseline_queries(view: Mapping[str, Any]) -> list[BaselineQuery]:
    """The newest run's Prometheus metrics with thresholds, each query pointed at the stable version."""
    run = _newest_prometheus_run(view)
    stable = str(view.get("stableRS") or "")
    if run is None or not stable:
        return []
    canary = str(run.get("podTemplateHash") or "")
    found = []
    for metric in run.get("metrics") or []:
        query = str(metric.get("query") or "")
        bound = threshold_bound(metric)
        if metric.get("provider") != "prometheus" or not query or bound is None:
            continue
        if canary != stable:
            if not canary or canary not in query:
                continue  # no way to aim it at the stable version
            query = query.replace(canary, stable)
        found.append(BaselineQuery(str(metric.get("name")), query, bound[0]))
    return found


def baseline_value(series: Sequence[Mapping[str, Any]], side: str) -> float | None:
    """p95 (upper bound) or p5 (lower bound) of every finite value in a query_range answer; None if none."""
    values = [v for s in series for v in s.get("v") or [] if v is not None and math.isfinite(v)]
    if not values:
        return None
    return percentile(values, 0.95 if side == "upper" else 0.05)


async def stable_baselines(
    client: PrometheusClient, view: Mapping[str, Any], *, now: float, window: float = WINDOW_SECONDS
) -> dict[str, float]:
    """metric name → baseline over ``[now - window, now]``; metrics Prometheus cannot answer are left out."""
    queries = baseline_queries(view)
    start = now - window
    step = max(1.0, math.ceil(window / POINTS))
    outcomes = await asyncio.gather(*(client.query_range(q.query, start, now, step) for q in queries))
    baselines = {}
    for query, outcome in zip(queries, outcomes, strict=True):
        value = baseline_value(matrix_series(outcome.payload), query.side) if outcome.ok else None
        if value is not None:
            baselines[query.metric] = value
    return baselines


class BaselineCache:
    """Baselines per rollout key, refreshed from the cluster's Prometheus at most every ``ttl`` seconds.

    ``get`` never does I/O; ``refresh`` does, and returns True when the values changed (so the caller can
    rebuild that rollout's findings). Prometheus trouble keeps the last values: a stale baseline is still
    a baseline, and ``stale-analysis-threshold`` is only a warning.
    """

    def __init__(self, config: MetricsConfig, ttl: float = 300.0) -> None:
        self.config = config
        self.ttl = ttl
        self._values: dict[str, dict[str, float]] = {}
        self._fetched: dict[str, float] = {}

    def get(self, key: str) -> dict[str, float]:
        return self._values.get(key, {})

    def due(self, key: str, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        return now - self._fetched.get(key, -math.inf) >= self.ttl

    async def refresh(self, view: Mapping[str, Any], now: float | None = None) -> bool:
        key = f"{view.get('cluster')}/{view.get('namespace')}/{view.get('name')}"
        now = time.time() if now is None else now
        url = self.config.url_for(str(view.get("cluster") or ""))
        if url is None or not self.due(key, now):
            return False
        self._fetched[key] = now
        fresh = await stable_baselines(PrometheusClient(url, self.config.timeout), view, now=now)
        current = {q.metric for q in baseline_queries(view)}  # a metric dropped from the template goes
        merged = {k: v for k, v in {**self._values.get(key, {}), **fresh}.items() if k in current}
        changed = merged != self._values.get(key, {})
        self._values[key] = merged
        return changed

    def forget(self, key: str) -> None:
        self._values.pop(key, None)
        self._fetched.pop(key, None)
