"""Metric values for simulated AnalysisRuns, taken from the series a scenario defines.

The analysis controller asks a ``MetricProvider`` for one measurement at a time. ``SeriesProvider`` answers
from the scenario's series: the n-th measurement of a metric in a run gets the n-th value (the last value
repeats). A series can also be "down", which yields Error measurements with the message the Prometheus
provider gives when it cannot reach its server — the metrics-provider-down scenario.

Scenario format (the ``metrics:`` section)::

    metrics:
      error-rate: [0.01, 0.01, 0.2]          # by metric name (or a name that appears in the query)
      latency-p99: {values: [120, 130], format: scalar}
      success-rate: {down: true}             # provider unreachable: Error measurements

Non-goals: real PromQL. A later issue plugs a provider that queries a real Prometheus; it only has to
implement ``MetricProvider.measure``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

Obj = dict[str, Any]


class MetricsError(ValueError):
    pass


@dataclass(frozen=True)
class Measurement:
    """What a provider returns: the value the conditions see, its string form, or an error message."""

    result: Any = None
    value: str = ""
    error: str | None = None


class MetricProvider(Protocol):
    def measure(self, run: Obj, metric: Obj, index: int) -> Measurement: ...


@dataclass
class Series:
    values: list[float] = field(default_factory=list)
    down: bool = False
    format: str = "vector"


def _format_number(value: float) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, float) and math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)).removesuffix(".0") if float(value).is_integer() else repr(float(value))


def parse_series(name: str, spec: Any) -> Series:
    """Validate one entry of a scenario's ``metrics:`` section."""
    if isinstance(spec, list):
        spec = {"values": spec}
    if not isinstance(spec, dict):
        raise MetricsError(
            f"metrics.{name}: expected a list of numbers or a mapping, got {type(spec).__name__}"
        )
    unknown = set(spec) - {"values", "down", "format"}
    if unknown:
        raise MetricsError(f"metrics.{name}: unknown key(s) {', '.join(sorted(unknown))}")
    values = spec.get("values", [])
    if not isinstance(values, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in values
    ):
        raise MetricsError(f"metrics.{name}.values: expected a list of numbers")
    down = spec.get("down", False)
    if not isinstance(down, bool):
        raise MetricsError(f"metrics.{name}.down: expected true or false")
    fmt = spec.get("format", "vector")
    if fmt not in ("vector", "scalar"):
        raise MetricsError(f"metrics.{name}.format: expected 'vector' or 'scalar', got {fmt!r}")
    if not values and not down:
        raise MetricsError(f"metrics.{name}: give at least one value, or down: true")
    return Series([float(v) for v in values], down, fmt)


class SeriesProvider:
    """Measurements from scenario series; unknown metrics are an Error, as a broken query would be."""

    def __init__(self, series: dict[str, Series] | None = None) -> None:
        self.series = dict(series or {})

    def _find(self, metric: Obj) -> Series | None:
        name = str(metric.get("name", ""))
        if name in self.series:
            return self.series[name]
        query = str(((metric.get("provider") or {}).get("prometheus") or {}).get("query", ""))
        for key, series in self.series.items():
            if key and key in query:
                return series
        return None

    def measure(self, run: Obj, metric: Obj, index: int) -> Measurement:
        series = self._find(metric)
        address = str(
            ((metric.get("provider") or {}).get("prometheus") or {}).get(
                "address", "http://prometheus.monitoring:9090"
            )
        )
        if series is None:
            return Measurement(error=f"no metric series named {metric.get('name')!r} in the scenario")
        if series.down:
            return Measurement(
                error=f'Post "{address.rstrip("/")}/api/v1/query": dial tcp: lookup '
                f"{address.split('//')[-1].split(':')[0]}: no such host"
            )
        value = series.values[min(index, len(series.values) - 1)]
        if series.format == "scalar":
            return Measurement(result=value, value=_format_number(value))
        return Measurement(result=[value], value=f"[{_format_number(value)}]")
