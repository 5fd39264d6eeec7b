"""Flagger's own gauges for one Canary, read from its ``/metrics`` exposition.

``parse_flagger_metrics`` takes the live canary/primary weights, ``flagger_canary_status``, the last
metric values and ``flagger_info`` from the text Flagger serves (or a Prometheus dump in that format);
the labels name ``spec.targetRef.name``, not the Canary.

Non-goals: querying Prometheus (``dashboard.metrics`` does), parsing expositions in general.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)")
_LABEL = re.compile(r'(?P<key>[a-zA-Z_][a-zA-Z0-9_]*)="(?P<value>(?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class FlaggerMetrics:
    """Flagger's own gauges for one Canary (labels use spec.targetRef.name, not the Canary's name)."""

    canary_weight: int | None = None  # flagger_canary_weight{workload=<target>}: the live routing
    primary_weight: int | None = None
    status: int | None = None  # flagger_canary_status: 0 Progressing, 2 Failed, 1 anything else
    metric_values: Mapping[str, float] = field(default_factory=dict)  # flagger_canary_metric_analysis
    version: str = ""
    mesh_provider: str = ""


def parse_flagger_metrics(text: str, *, namespace: str, target: str) -> FlaggerMetrics:
    """Read Flagger's ``/metrics`` exposition (or a Prometheus query dump in the same format)."""
    weights: dict[str, float] = {}
    values: dict[str, float] = {}
    status: int | None = None
    version = provider = ""
    for line in text.splitlines():
        match = _SAMPLE.match(line.strip())
        if not match:
            continue
        labels = {m["key"]: m["value"] for m in _LABEL.finditer(match["labels"] or "")}
        try:
            value = float(match["value"])
        except ValueError:
            continue
        name = match["name"]
        if name == "flagger_info":
            version, provider = labels.get("version", ""), labels.get("mesh_provider", "")
            continue
        if labels.get("namespace") != namespace:
            continue
        if name == "flagger_canary_weight":
            weights[labels.get("workload", "")] = value
        elif name == "flagger_canary_status" and labels.get("name") == target and math.isfinite(value):
            status = int(value)
        elif name == "flagger_canary_metric_analysis" and labels.get("name") == target:
            values[labels.get("metric", "")] = value

    def weight(workload: str) -> int | None:
        value = weights.get(workload)
        return int(value) if value is not None and math.isfinite(value) else None

    return FlaggerMetrics(weight(target), weight(f"{target}-primary"), status, values, version, provider)
