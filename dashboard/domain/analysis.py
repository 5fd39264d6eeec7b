"""AnalysisRuns: phase, summed counters, metrics with their limits, every measurement, job runs.

Mirrors ``info/analysisrun_info.go``: the counters are the sums over ``status.metricResults`` (not
``runSummary``); measurements whose metadata names a ``job-name`` become Job rows, the others stay
plain values. Adds what the upstream UI reads from the raw spec/status (conditions, limits, times).
Non-goals: evaluating conditions or querying metric providers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .analysis_eval import ArgumentError, resolve_metric_args
from .argocd_health import analysis_run_health
from .durations import age
from .objects import (
    as_bool,
    as_int,
    as_map,
    as_str,
    dig,
    dig_map,
    first_owner,
    maps,
    opt_int,
    parse_time,
    rfc3339,
    str_map,
)
from .replicasets import POD_TEMPLATE_HASH, revision_of
from .status_icons import analysis_icon

JOB_NAME_KEY = "job-name"
JOB_NAMESPACE_KEY = "job-namespace"
PROVIDERS = (
    "prometheus",
    "datadog",
    "web",
    "job",
    "newRelic",
    "wavefront",
    "kayenta",
    "cloudWatch",
    "graphite",
    "influxdb",
    "skywalking",
    "plugin",
)


@dataclass(frozen=True)
class MeasurementView:
    metric: str
    value: str
    phase: str
    message: str
    started_at: datetime | None
    finished_at: datetime | None
    job_name: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "value": self.value,
            "phase": self.phase,
            "message": self.message,
            "startedAt": rfc3339(self.started_at),
            "finishedAt": rfc3339(self.finished_at),
            "jobName": self.job_name,
        }


@dataclass(frozen=True)
class JobView:
    name: str
    namespace: str
    metric: str
    status: str
    icon: str
    started_at: datetime | None
    age: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "metric": self.metric,
            "status": self.status,
            "icon": self.icon,
            "startedAt": rfc3339(self.started_at),
            "age": self.age,
        }


@dataclass(frozen=True)
class MetricView:
    name: str
    provider: str
    query: str | None
    interval: str | None
    initial_delay: str | None
    count: int | None
    success_condition: str
    failure_condition: str
    failure_limit: int | None
    inconclusive_limit: int | None
    consecutive_error_limit: int | None
    consecutive_success_limit: int | None
    dry_run: bool
    phase: str
    message: str
    successful: int
    failed: int
    inconclusive: int
    error: int
    consecutive_error: int
    measurements: tuple[MeasurementView, ...]
    address: str | None = None  # the provider's address as the template names it (prometheus.address …)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "provider": self.provider,
            "address": self.address,
            "query": self.query,
            "interval": self.interval,
            "initialDelay": self.initial_delay,
            "count": self.count,
            "successCondition": self.success_condition,
            "failureCondition": self.failure_condition,
            "failureLimit": self.failure_limit,
            "inconclusiveLimit": self.inconclusive_limit,
            "consecutiveErrorLimit": self.consecutive_error_limit,
            "consecutiveSuccessLimit": self.consecutive_success_limit,
            "dryRun": self.dry_run,
            "phase": self.phase,
            "message": self.message,
            "successful": self.successful,
            "failed": self.failed,
            "inconclusive": self.inconclusive,
            "error": self.error,
            "consecutiveError": self.consecutive_error,
            "measurements": [m.to_dict() for m in self.measurements],
        }


@dataclass(frozen=True)
class AnalysisRunView:
    name: str
    namespace: str
    uid: str
    revision: int
    status: str
    icon: str
    message: str
    successful: int
    failed: int
    inconclusive: int
    error: int
    rollout_type: str
    step_index: int | None
    pod_hash: str
    started_at: datetime | None
    completed_at: datetime | None
    created_at: datetime | None
    age: str
    metrics: tuple[MetricView, ...]
    jobs: tuple[JobView, ...]
    argocd_health: Mapping[str, str]

    @property
    def summary(self) -> str:
        """The CLI's INFO column, e.g. "✔ 4,✖ 4,? 1,⚠ 1"."""
        parts = []
        for icon, count in (("✔", self.successful), ("✖", self.failed), ("?", self.inconclusive)):
            if count > 0:
                parts.append(f"{icon} {count}")
        if self.error > 0:
            parts.append(f"⚠ {self.error}")
        return ",".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "uid": self.uid,
            "revision": self.revision,
            "status": self.status,
            "icon": self.icon,
            "message": self.message,
            "successful": self.successful,
            "failed": self.failed,
            "inconclusive": self.inconclusive,
            "error": self.error,
            "rolloutType": self.rollout_type or None,
            "stepIndex": self.step_index,
            "podTemplateHash": self.pod_hash or None,
            "startedAt": rfc3339(self.started_at),
            "completedAt": rfc3339(self.completed_at),
            "createdAt": rfc3339(self.created_at),
            "age": self.age,
            "metrics": [m.to_dict() for m in self.metrics],
            "jobs": [j.to_dict() for j in self.jobs],
            "argoCDHealth": dict(self.argocd_health),
        }


def _int_or_string(value: Any) -> int | None:
    """An IntOrString limit/count: the int, or a string that holds one."""
    number = opt_int(value)
    if number is not None:
        return number
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value.strip())
    return None


def _provider(spec_metric: Mapping[str, Any]) -> tuple[str, str | None]:
    provider = as_map(spec_metric.get("provider"))
    for name in PROVIDERS:
        body = provider.get(name)
        if body is not None:
            query = as_map(body).get("query")
            return name, query if isinstance(query, str) else None
    for name in provider:
        return str(name), None
    return "", None


def _measurements_by_metric(status: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    """The first metric result's measurements for each name (``analysisutil.ArrayMeasurement``)."""
    found: dict[str, list[Mapping[str, Any]]] = {}
    for result in maps(status.get("metricResults")):
        found.setdefault(as_str(result.get("name")), maps(result.get("measurements")))
    return found


def analysis_run_view(run: Mapping[str, Any], now: datetime) -> AnalysisRunView:
    meta = dig_map(run, "metadata")
    status = dig_map(run, "status")
    labels = str_map(meta.get("labels"))
    namespace = as_str(meta.get("namespace"))
    by_name = _measurements_by_metric(status)
    results = maps(status.get("metricResults"))
    results_by_name = {as_str(r.get("name")): r for r in reversed(results)}

    successful = failed = inconclusive = error = 0
    jobs: list[JobView] = []
    for result in results:
        successful += as_int(result.get("successful"))
        failed += as_int(result.get("failed"))
        inconclusive += as_int(result.get("inconclusive"))
        error += as_int(result.get("error"))
        metric_name = as_str(result.get("name"))
        for m in by_name.get(metric_name, ()):
            metadata = m.get("metadata")
            if isinstance(metadata, Mapping) and JOB_NAME_KEY in metadata:
                started = parse_time(m.get("startedAt"))
                phase = as_str(m.get("phase"))
                jobs.append(
                    JobView(
                        name=as_str(metadata.get(JOB_NAME_KEY)),
                        namespace=as_str(metadata.get(JOB_NAMESPACE_KEY)) or namespace,
                        metric=metric_name,
                        status=phase,
                        icon=analysis_icon(phase),
                        started_at=started,
                        age=age(started, now),
                    )
                )

    metrics = []
    spec_metrics = maps(dig(run, "spec", "metrics"))
    seen = set()
    run_args = maps(dig(run, "spec", "args"))
    for spec_metric in spec_metrics:
        name = as_str(spec_metric.get("name"))
        seen.add(name)
        with suppress(ArgumentError):  # show the query as measured: {{args.…}} resolved, like upstream
            spec_metric = resolve_metric_args(dict(spec_metric), [dict(a) for a in run_args])
        metrics.append(_metric_view(name, spec_metric, results_by_name.get(name, {})))
    for result in results:  # results whose metric is not in the spec (spec trimmed or missing)
        name = as_str(result.get("name"))
        if name not in seen:
            seen.add(name)
            metrics.append(_metric_view(name, {}, result))

    phase = as_str(status.get("phase"))
    created = parse_time(meta.get("creationTimestamp"))
    health_status, health_message = analysis_run_health(run)
    return AnalysisRunView(
        name=as_str(meta.get("name")),
        namespace=namespace,
        uid=as_str(meta.get("uid")),
        revision=revision_of(run),
        status=phase,
        icon=analysis_icon(phase),
        message=as_str(status.get("message")),
        successful=successful,
        failed=failed,
        inconclusive=inconclusive,
        error=error,
        rollout_type=labels.get("rollout-type", ""),
        step_index=_int_or_string(labels.get("step-index")),
        pod_hash=labels.get(POD_TEMPLATE_HASH, ""),
        started_at=parse_time(status.get("startedAt")),
        completed_at=parse_time(status.get("completedAt")),
        created_at=created,
        age=age(created, now),
        metrics=tuple(metrics),
        jobs=tuple(jobs),
        argocd_health={"status": health_status, "message": health_message},
    )


def _metric_view(name: str, spec_metric: Mapping[str, Any], result: Mapping[str, Any]) -> MetricView:
    provider, query = _provider(spec_metric)
    address = dig(spec_metric, "provider", provider, "address") if provider else None
    measurements = tuple(
        MeasurementView(
            metric=name,
            value=as_str(m.get("value")),
            phase=as_str(m.get("phase")),
            message=as_str(m.get("message")),
            started_at=parse_time(m.get("startedAt")),
            finished_at=parse_time(m.get("finishedAt")),
            job_name=as_str(dig(m, "metadata", JOB_NAME_KEY)) or None,
        )
        for m in maps(result.get("measurements"))
    )
    interval = spec_metric.get("interval")
    initial_delay = spec_metric.get("initialDelay")
    return MetricView(
        name=name,
        provider=provider,
        address=address if isinstance(address, str) and address else None,
        query=query,
        interval=interval if isinstance(interval, str) else None,
        initial_delay=initial_delay if isinstance(initial_delay, str) else None,
        count=_int_or_string(spec_metric.get("count")),
        success_condition=as_str(spec_metric.get("successCondition")),
        failure_condition=as_str(spec_metric.get("failureCondition")),
        failure_limit=_int_or_string(spec_metric.get("failureLimit")),
        inconclusive_limit=_int_or_string(spec_metric.get("inconclusiveLimit")),
        consecutive_error_limit=_int_or_string(spec_metric.get("consecutiveErrorLimit")),
        consecutive_success_limit=_int_or_string(spec_metric.get("consecutiveSuccessLimit")),
        dry_run=as_bool(result.get("dryRun")),
        phase=as_str(result.get("phase")),
        message=as_str(result.get("message")),
        successful=as_int(result.get("successful")),
        failed=as_int(result.get("failed")),
        inconclusive=as_int(result.get("inconclusive")),
        error=as_int(result.get("error")),
        consecutive_error=as_int(result.get("consecutiveError")),
        measurements=measurements,
    )


def analysis_run_views(
    owner_uid: str, analysisruns: Iterable[Mapping[str, Any]], now: datetime
) -> tuple[AnalysisRunView, ...]:
    """``getAnalysisRunInfo``: runs owned by ``owner_uid``, newest revision first."""
    views = [analysis_run_view(run, now) for run in analysisruns if first_owner(run, {owner_uid}) is not None]
    views.sort(key=_order)
    return tuple(views)


class _Desc(str):
    """A string that sorts in reverse, for the name tie-breaker (name descending)."""

    def __lt__(self, other: str) -> bool:
        return str.__gt__(self, other)


def _order(view: AnalysisRunView) -> tuple[int, tuple[int, float], _Desc]:
    created = (0, 0.0) if view.created_at is None else (1, view.created_at.timestamp())
    return -view.revision, created, _Desc(view.name)
