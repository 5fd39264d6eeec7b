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

``PrometheusProvider`` queries a real Prometheus exactly as Argo Rollouts' prometheus provider does (an
instant query at wall-clock now, POSTed to ``/api/v1/query``, ``provider.prometheus.timeout`` seconds, 30 by
default); the answer becomes ``result`` through ``dashboard.domain.analysis_eval.prometheus_result``.
Template windows are scenario time and are divided by the simulation speed first. ``RoutingProvider``
sends the runs of traffic scenarios (by namespace) to Prometheus and everything else to the scenario series.

Non-goals: real PromQL in Python (a real Prometheus answers), other providers' wire formats.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Protocol

from dashboard.domain.analysis_eval import (
    PrometheusResultError,
    format_go_float,
    prometheus_result,
    scale_query_windows,
)

Obj = dict[str, Any]


class MetricsError(ValueError):
    pass


@dataclass(frozen=True)
class Measurement:
    """What a provider returns: the value the conditions see, its string form, or an error message."""

    result: Any = None
    value: str = ""
    error: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)


class MetricProvider(Protocol):
    def measure(self, run: Obj, metric: Obj, index: int) -> Measurement: ...


@dataclass
class Series:
    values: list[float] = field(default_factory=list)
    down: bool = False
    format: str = "vector"


def _format_number(value: float) -> str:
    return format_go_float(float(value))


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
    """Measurements from scenario series; unknown metrics are an Error, as a broken query would be.

    Several scenarios can run side by side and name their metrics alike ("error-rate"), so series may be
    given per namespace (``by_namespace``): a run in a scenario's namespace reads that scenario's series,
    and only a run elsewhere falls back to the shared ``series``.
    """

    def __init__(
        self,
        series: dict[str, Series] | None = None,
        *,
        by_namespace: dict[str, dict[str, Series]] | None = None,
    ) -> None:
        self.series = dict(series or {})
        self.by_namespace = dict(by_namespace or {})

    def _find(self, run: Obj, metric: Obj) -> Series | None:
        namespace = str((run.get("metadata") or {}).get("namespace", ""))
        candidates = self.by_namespace.get(namespace, self.series)
        name = str(metric.get("name", ""))
        if name in candidates:
            return candidates[name]
        query = str(((metric.get("provider") or {}).get("prometheus") or {}).get("query", ""))
        for key, series in candidates.items():
            if key and key in query:
                return series
        return None

    def measure(self, run: Obj, metric: Obj, index: int) -> Measurement:
        series = self._find(run, metric)
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


DEFAULT_TIMEOUT_SECONDS = 30.0


def _prometheus_spec(metric: Obj) -> Obj:
    return dict((metric.get("provider") or {}).get("prometheus") or {})


def _go_transport_error(url: str, error: BaseException) -> str:
    """The text Go's HTTP client gives, so measurement messages read like upstream's."""
    reason = getattr(error, "reason", error)
    host = urllib.parse.urlsplit(url).netloc
    if isinstance(reason, ConnectionRefusedError):
        return f'Post "{url}": dial tcp {host}: connect: connection refused'
    if isinstance(reason, TimeoutError | socket.timeout):
        return f'Post "{url}": context deadline exceeded'
    if isinstance(reason, socket.gaierror):
        return f'Post "{url}": dial tcp: lookup {host.split(":")[0]}: no such host'
    return f'Post "{url}": {reason}'


class PrometheusProvider:
    """Measurements from a real Prometheus; ``address`` replaces the templates' in-cluster address."""

    def __init__(self, address: str, *, speed: float = 1.0, min_window_seconds: float = 4.0) -> None:
        self.address = address.rstrip("/")
        self.speed = speed
        self.min_window_seconds = min_window_seconds

    def measure(self, run: Obj, metric: Obj, index: int) -> Measurement:
        spec = _prometheus_spec(metric)
        query = str(spec.get("query") or "")
        if not query:
            return Measurement(error="prometheus query is empty")
        timeout = spec.get("timeout", DEFAULT_TIMEOUT_SECONDS)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0:
            return Measurement(error="prometheus timeout should not be negative")
        scaled = scale_query_windows(query, self.speed, self.min_window_seconds)
        metadata = {}
        if scaled.clamped:
            metadata["kubesimWindowClamped"] = ", ".join(scaled.clamped)
        url = f"{self.address}/api/v1/query"
        body = urllib.parse.urlencode({"query": scaled.query}).encode()
        try:
            with urllib.request.urlopen(url, body, timeout=timeout or DEFAULT_TIMEOUT_SECONDS) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as error:
            payload = _error_payload(error)
            if payload is None:
                return Measurement(error=f"server_error: server error: {error.code}", metadata=metadata)
        except (urllib.error.URLError, OSError) as error:
            return Measurement(error=_go_transport_error(url, error), metadata=metadata)
        except ValueError:
            return Measurement(error="bad_response: the Prometheus answer is not JSON", metadata=metadata)
        try:
            answer = prometheus_result(payload)
        except PrometheusResultError as error:
            return Measurement(error=str(error), metadata=metadata)
        if answer.warnings:
            metadata["warnings"] = ", ".join(f'"{w}"' for w in answer.warnings)
        return Measurement(result=answer.result, value=answer.value, metadata=metadata)


def _error_payload(error: urllib.error.HTTPError) -> Obj | None:
    """Prometheus answers 400/422/503 with a JSON error body; the Go client reports ``<type>: <message>``."""
    try:
        payload = json.loads(error.read())
    except (ValueError, OSError):
        return None
    return payload if isinstance(payload, dict) and payload.get("status") == "error" else None


class UnavailableProvider:
    """Stands in for Prometheus when kubesim runs without one: every measurement says so plainly."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def measure(self, run: Obj, metric: Obj, index: int) -> Measurement:
        return Measurement(error=self.reason)


class RoutingProvider:
    """Runs in ``namespaces`` (the traffic scenarios') go to ``prometheus``; the rest to ``fallback``."""

    def __init__(self, fallback: MetricProvider, prometheus: MetricProvider, namespaces: set[str]) -> None:
        self.fallback = fallback
        self.prometheus = prometheus
        self.namespaces = namespaces

    def measure(self, run: Obj, metric: Obj, index: int) -> Measurement:
        namespace = (run.get("metadata") or {}).get("namespace", "")
        if namespace in self.namespaces and "prometheus" in (metric.get("provider") or {}):
            return self.prometheus.measure(run, metric, index)
        return self.fallback.measure(run, metric, index)
