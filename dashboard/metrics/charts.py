"""Chart data for the rollout page (pure): analysis queries with thresholds, measurements and step windows,
and the canary-vs-stable panel.

``analysis_chart_specs(view)`` picks the Prometheus metrics of the rollout's analysis runs out of a
RolloutView document; ``thresholds`` reads the comparison constants out of a condition so the chart can draw
them; ``matrix_series`` turns a ``query_range`` answer into plotly-ready points.

Non-goals: rendering (``static/js/metrics.js`` draws), querying (``dashboard.web.metrics_api``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

_COMPARE = r"(<=|>=|<|>|==)"
_NUM = r"(-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)"
_LEFT = re.compile(rf"result(?:\s*\[\s*-?\d+\s*\])?\s*{_COMPARE}\s*{_NUM}")
_RIGHT = re.compile(rf"{_NUM}\s*{_COMPARE}\s*result\b")
_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "=="}
MAX_RUNS = 6


def thresholds(condition: str, kind: str) -> list[dict[str, Any]]:
    """``result[0] <= 0.05`` → ``[{"value": 0.05, "op": "<=", "kind": "success"}]``."""
    found = [(op, float(n)) for op, n in _LEFT.findall(condition or "")]
    found += [(_FLIP[op], float(n)) for n, op in _RIGHT.findall(condition or "")]
    return [{"value": v, "op": op, "kind": kind, "condition": condition} for op, v in found]


def parse_value(value: str) -> float | None:
    """A measurement's value string (``[0.01]``, ``0.25``, ``[NaN]``) as the first number, None if none."""
    text = (value or "").strip().strip("[]").split(",")[0].strip()
    try:
        number = float(text)
    except ValueError:
        return None
    return None if math.isnan(number) or math.isinf(number) else number


def _stamp(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def analysis_chart_specs(view: Mapping[str, Any], now: float) -> list[dict[str, Any]]:
    """One spec per (analysis run, Prometheus metric), newest runs first."""
    runs: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
    for revision in view.get("revisions") or []:
        for run in revision.get("analysisRuns") or []:
            runs.append((revision, run))
    runs.sort(key=lambda pair: pair[1].get("startedAt") or pair[1].get("createdAt") or "", reverse=True)
    specs = []
    for revision, run in runs[:MAX_RUNS]:
        start = _stamp(run.get("startedAt")) or _stamp(run.get("createdAt"))
        end = _stamp(run.get("completedAt"))
        for metric in run.get("metrics") or []:
            if metric.get("provider") != "prometheus" or not metric.get("query"):
                continue
            step = run.get("stepIndex")
            specs.append(
                {
                    "id": f"{run.get('name')}/{metric.get('name')}",
                    "run": run.get("name"),
                    "runStatus": run.get("status"),
                    "revision": revision.get("revision"),
                    "metric": metric.get("name"),
                    "query": metric.get("query"),
                    "phase": metric.get("phase"),
                    "thresholds": thresholds(metric.get("successCondition") or "", "success")
                    + thresholds(metric.get("failureCondition") or "", "failure"),
                    "window": {
                        "start": start,
                        "end": end,
                        "label": f"step {step} analysis"
                        if step is not None
                        else f"{run.get('rolloutType') or 'analysis'} run",
                        "open": end is None,
                    },
                    "range": {"start": (start or now) - 30, "end": min(now, (end or now) + 30)},
                    "measurements": [
                        {
                            "t": _stamp(m.get("finishedAt")) or _stamp(m.get("startedAt")),
                            "value": parse_value(m.get("value") or ""),
                            "text": m.get("value") or "",
                            "phase": m.get("phase"),
                            "message": m.get("message") or "",
                        }
                        for m in metric.get("measurements") or []
                    ],
                }
            )
    return specs


def matrix_series(payload: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """``query_range`` JSON → ``[{"labels": {...}, "t": [...], "v": [...]}]`` (NaN/Inf become gaps)."""
    data = (payload or {}).get("data") or {}
    result = data.get("result") or []
    if data.get("resultType") == "vector":
        result = [{"metric": r.get("metric"), "values": [r.get("value")]} for r in result]
    series = []
    for item in result:
        t: list[float] = []
        v: list[float | None] = []
        for point in item.get("values") or []:
            try:
                number = float(point[1])
                t.append(float(point[0]))
            except (TypeError, ValueError, IndexError):
                continue
            v.append(None if math.isnan(number) or math.isinf(number) else number)
        series.append({"labels": dict(item.get("metric") or {}), "t": t, "v": v})
    return series


def step_for(start: float, end: float, points: int = 240) -> float:
    """A query_range step giving about ``points`` points, never under 1 s (the scrape interval)."""
    return max(1.0, math.ceil((end - start) / points))
