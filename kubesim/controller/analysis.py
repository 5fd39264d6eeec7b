"""The AnalysisRun reconciler, following Argo Rollouts' analysis/analysis.go.

Per metric: take the first measurement at once (or after ``initialDelay``), then one every ``interval``
(10 s after an Error), until ``count`` is reached. Each measurement's phase comes from the metric's
``successCondition`` / ``failureCondition`` (``expr.assess``); the metric's phase from ``failureLimit``,
``inconclusiveLimit`` and ``consecutiveErrorLimit`` (default 4); the run's phase is the worst completed
metric, with the upstream message ``Metric "x" assessed Failed due to failed (1) > failureLimit (0)``.
A failed, inconclusive or errored metric (or ``spec.terminate``) makes the run stop measuring.

AnalysisRuns have no status subresource, so status is written through the main resource.

Argument templating and condition evaluation live in ``dashboard.domain.analysis_eval`` (shared with the
dashboard's dry run). A ``job`` metric runs a batch/v1 Job (``kubesim.controller.jobs``): its measurement
stays Running until the Job completes or fails. Every other provider is answered by the pluggable
``MetricProvider``. Non-goals: dry-run metrics, measurement retention settings, the web provider.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from dashboard.domain.analysis_eval import (
    ArgumentError,
    ExpressionError,
    evaluate_result,
    resolve_metric_args,
)
from kubesim.clock import Clock, parse_duration, parse_rfc3339, rfc3339
from kubesim.controller.common import ANALYSIS_RUNS, ROLLOUTS_MANAGER, Cache, Enqueue, Key, Obj
from kubesim.controller.events import Recorder
from kubesim.controller.jobs import is_job_metric, resume_job, start_job
from kubesim.metrics import MetricProvider

COMPLETED = ("Successful", "Failed", "Error", "Inconclusive")
RESUME_SECONDS = 1.0  # how soon a Running Job measurement is looked at again
_WORSE_ORDER = ["Successful", "Running", "Pending", "Inconclusive", "Error", "Failed"]
ERROR_RETRY_SECONDS = 10.0
MEASUREMENT_HISTORY_LIMIT = 10


def _int(value: Any, default: int) -> int:
    if value is None:
        return default
    try:
        return int(str(value))
    except ValueError:
        return default


def resolve_args(metric: Obj, args: list[Obj]) -> Obj:
    """Substitute ``{{args.name}}`` like analysisutil.ResolveMetricArgs (raises ArgumentError)."""
    return resolve_metric_args(metric, args)


def metric_failure(metric: Obj, result: Obj) -> tuple[str, str]:
    """``assessMetricFailureInconclusiveOrError``: the limit a metric broke, if any, and why."""
    phase = message = ""
    failure_limit = _int(metric.get("failureLimit"), 0)
    if result.get("failed", 0) > failure_limit:
        phase, message = "Failed", f"failed ({result.get('failed', 0)}) > failureLimit ({failure_limit})"
    inconclusive_limit = _int(metric.get("inconclusiveLimit"), 0)
    if result.get("inconclusive", 0) > inconclusive_limit:
        phase = "Inconclusive"
        message = f"inconclusive ({result.get('inconclusive', 0)}) > inconclusiveLimit ({inconclusive_limit})"
    error_limit = _int(metric.get("consecutiveErrorLimit"), 4)
    if result.get("consecutiveError", 0) > error_limit:
        phase = "Error"
        message = (
            f"consecutiveErrors ({result.get('consecutiveError', 0)}) > consecutiveErrorLimit ({error_limit})"
        )
    return phase, message


def effective_count(metric: Obj) -> int | None:
    if metric.get("count") is not None:
        count = _int(metric.get("count"), 0)
        return count if count > 0 else None
    if not metric.get("interval"):
        return 1  # no interval and no count: measure once
    return None


def metric_phase(metric: Obj, result: Obj, terminating: bool) -> str:
    """``assessMetricStatus``."""
    if result.get("phase") in COMPLETED:
        return str(result["phase"])
    measurements = result.get("measurements") or []
    if not measurements:
        return "Successful" if terminating else "Pending"
    if measurements[-1].get("phase") not in COMPLETED:
        return "Running"
    phase, _ = metric_failure(metric, result)
    if phase:
        return phase
    success_limit = _int(metric.get("consecutiveSuccessLimit"), 0)
    if success_limit > 0 and result.get("consecutiveSuccess", 0) >= success_limit:
        return "Successful"
    count = effective_count(metric)
    if count is not None and result.get("count", 0) >= count:
        failure_applicable = metric.get("failureLimit") is None or _int(metric.get("failureLimit"), 0) >= 0
        if success_limit > 0:
            return "Inconclusive" if failure_applicable else "Failed"
        return "Successful"
    return "Successful" if terminating else "Running"


def _event_type(phase: str) -> str:
    return "Warning" if phase in ("Failed", "Error") else "Normal"


def is_worse(current: str, new: str) -> bool:
    return _WORSE_ORDER.index(new) > _WORSE_ORDER.index(current)


class AnalysisController:
    def __init__(
        self, store: Any, cache: Cache, clock: Clock, provider: MetricProvider, enqueue: Enqueue
    ) -> None:
        self.store = store
        self.cache = cache
        self.clock = clock
        self.provider = provider
        self.enqueue = enqueue
        self.events = Recorder(store, clock)
        # Exact finish times (status timestamps have one-second precision, too coarse at high speed).
        self._finished: dict[tuple[str, str], datetime] = {}

    def reconcile(self, key: Key) -> None:
        run = self.cache.get(ANALYSIS_RUNS, *key)
        if run is None:
            return
        old_status = run.get("status") or {}
        if old_status.get("phase") in COMPLETED:
            return
        status, next_in = self.compute(run)
        if status != old_status:
            self.store.patch(ANALYSIS_RUNS, key[0], key[1], {"status": status}, manager=ROLLOUTS_MANAGER)
            self._completion_events(run, old_status, status)
        if next_in is not None and status.get("phase") not in COMPLETED:
            self.enqueue("analysisrun", key, max(next_in, 0.0))

    def _completion_events(self, run: Obj, old: Obj, new: Obj) -> None:
        """analysis.go: "Metric '<name>' Completed. Result: <phase>" per metric, then
        ``recordAnalysisRunCompletionEvent``; Failed and Error are Warnings."""
        before = {r.get("name"): r.get("phase") for r in old.get("metricResults") or []}
        for result in new.get("metricResults") or []:
            phase = result.get("phase")
            if phase in COMPLETED and before.get(result.get("name")) != phase:
                message = f"Metric '{result.get('name')}' Completed. Result: {phase}"
                self.events.record(run, _event_type(str(phase)), f"Metric{phase}", message)
        phase = new.get("phase")
        if phase in COMPLETED and old.get("phase") != phase:
            message = f"Analysis Completed. Result: {phase}"
            self.events.record(run, _event_type(str(phase)), f"AnalysisRun{phase}", message)

    def _last_finished(self, run: Obj, name: str, measurement: Obj) -> datetime | None:
        exact = self._finished.get((run["metadata"]["uid"], name))
        if exact is not None:
            return exact
        return parse_rfc3339(str(measurement.get("finishedAt", "")))

    def compute(self, run: Obj) -> tuple[Obj, float | None]:
        """The run's next status, and in how many simulated seconds it wants to be looked at again."""
        now = self.clock.now()
        stamp = rfc3339(now)
        spec = run.get("spec") or {}
        status: Obj = json.loads(json.dumps(run.get("status") or {}))
        status.setdefault("startedAt", stamp)
        results: list[Obj] = status.setdefault("metricResults", [])
        by_name = {r["name"]: r for r in results}
        try:
            metrics = [resolve_args(m, spec.get("args") or []) for m in spec.get("metrics") or []]
        except ArgumentError as error:
            status.update(
                phase="Error", message=f"Unable to resolve metric arguments: {error}", completedAt=stamp
            )
            return status, None
        terminating = bool(spec.get("terminate")) or any(
            r.get("phase") in ("Failed", "Error", "Inconclusive") for r in results
        )
        started = parse_rfc3339(str(status["startedAt"])) or now
        next_in: float | None = None

        for metric in metrics:
            name = str(metric.get("name"))
            result = by_name.get(name)
            if result is not None and result.get("phase") in COMPLETED:
                continue
            measurements = (result or {}).get("measurements") or []
            if result is not None and measurements and measurements[-1].get("phase") == "Running":
                # A Job measurement in flight: Resume (or Terminate) it before anything else.
                wait = self._resume(run, result, stamp, terminating)
                if wait is not None:
                    next_in = _sooner(next_in, wait)
                    continue
                self._finished[(run["metadata"]["uid"], name)] = now
                measurements = result["measurements"]
                count = effective_count(metric)
                if not terminating and (count is None or result.get("count", 0) < count):
                    next_in = _sooner(next_in, parse_duration(metric.get("interval")) or ERROR_RETRY_SECONDS)
                continue
            due = False
            if terminating:
                due = False
            elif not measurements:
                delay = parse_duration(metric.get("initialDelay")) if metric.get("initialDelay") else 0.0
                waited = (now - started).total_seconds() * self.clock.speed
                if delay is None or waited >= delay:
                    due = True
                else:
                    next_in = _sooner(next_in, delay - waited)
            else:
                count = effective_count(metric)
                if count is None or (result or {}).get("count", 0) < count:
                    last = measurements[-1]
                    interval = (
                        ERROR_RETRY_SECONDS
                        if last.get("phase") == "Error"
                        else parse_duration(metric.get("interval")) or ERROR_RETRY_SECONDS
                    )
                    finished = self._last_finished(run, name, last) or now
                    elapsed = (now - finished).total_seconds() * self.clock.speed
                    if elapsed >= interval - 1e-6:
                        due = True
                    else:
                        next_in = _sooner(next_in, interval - elapsed)
            if due:
                if result is None:
                    result = {"name": name, "phase": "Running"}
                    results.append(result)
                    by_name[name] = result
                self._measure(run, metric, result, stamp)
                self._finished[(run["metadata"]["uid"], name)] = now
                count = effective_count(metric)
                if result["measurements"][-1]["phase"] == "Running":
                    next_in = _sooner(next_in, RESUME_SECONDS)
                elif count is None or result.get("count", 0) < count:
                    interval = (
                        ERROR_RETRY_SECONDS
                        if result["measurements"][-1]["phase"] == "Error"
                        else parse_duration(metric.get("interval")) or ERROR_RETRY_SECONDS
                    )
                    next_in = _sooner(next_in, interval)

        phase, message = self._assess(status, metrics, terminating, bool(spec.get("terminate")))
        if phase != status.get("phase"):
            status["phase"] = phase
            if message:
                status["message"] = message
            else:
                status.pop("message", None)
            if phase in COMPLETED:
                status["completedAt"] = stamp
        return status, next_in

    def _resume(self, run: Obj, result: Obj, stamp: str, terminating: bool) -> float | None:
        """The Job provider's Resume / Terminate of the last (Running) measurement: seconds until the next
        look while it still runs, None once it finished."""
        last = result["measurements"][-1]
        if terminating:  # Terminate: the Job is left to its owner's garbage collection here
            updated = {**last, "phase": "Inconclusive", "finishedAt": stamp}
        else:
            updated = resume_job(self.store, run, last, stamp)
        result["measurements"][-1] = updated
        if updated.get("phase") == "Running":
            return RESUME_SECONDS
        if not terminating:
            self._tally(result, str(updated["phase"]))
        return None

    def _measure(self, run: Obj, metric: Obj, result: Obj, stamp: str) -> None:
        if is_job_metric(metric):
            started = start_job(self.store, run, metric, result, stamp)
            if started["phase"] == "Error":
                self._tally(result, "Error")
            measurements = [*(result.get("measurements") or []), started]
            result["measurements"] = measurements[-MEASUREMENT_HISTORY_LIMIT:]
            return
        index = int(result.get("count", 0)) + int(result.get("error", 0))
        measured = self.provider.measure(run, metric, index)
        measurement: Obj = {"phase": "Error", "startedAt": stamp, "finishedAt": stamp}
        if measured.metadata:
            measurement["metadata"] = dict(measured.metadata)
        if measured.error is not None:
            measurement["message"] = measured.error
        else:
            measurement["value"] = measured.value
            try:
                measurement["phase"] = evaluate_result(
                    measured.result, metric.get("successCondition"), metric.get("failureCondition")
                )
            except ExpressionError as error:
                measurement["message"] = str(error)
        self._tally(result, str(measurement["phase"]))
        measurements = [*(result.get("measurements") or []), measurement]
        result["measurements"] = measurements[-MEASUREMENT_HISTORY_LIMIT:]

    @staticmethod
    def _tally(result: Obj, phase: str) -> None:
        """The metric result's counters for one finished measurement."""
        key = {"Successful": "successful", "Failed": "failed", "Inconclusive": "inconclusive"}.get(phase)
        if key:
            result[key] = result.get(key, 0) + 1
            result["count"] = result.get("count", 0) + 1
            result.pop("consecutiveError", None)
            if phase == "Successful":
                result["consecutiveSuccess"] = result.get("consecutiveSuccess", 0) + 1
            else:
                result.pop("consecutiveSuccess", None)
        else:
            result["error"] = result.get("error", 0) + 1
            result["consecutiveError"] = result.get("consecutiveError", 0) + 1
            result.pop("consecutiveSuccess", None)

    def _assess(
        self, status: Obj, metrics: list[Obj], terminating: bool, terminate_requested: bool
    ) -> tuple[str, str]:
        """``assessRunStatus``: per-metric phases, the run summary, and the run's phase and message."""
        worst, worst_message = "", "Run Terminated" if terminate_requested else ""
        everything_completed = True
        summary = {"count": 0, "successful": 0, "failed": 0, "inconclusive": 0, "error": 0}
        by_name = {r["name"]: r for r in status["metricResults"]}
        for metric in metrics:
            summary["count"] += 1
            result = by_name.get(str(metric.get("name")))
            if result is None:
                everything_completed = False
                continue
            phase = metric_phase(metric, result, terminating)
            if phase != result.get("phase"):
                if phase in COMPLETED:
                    last = (result.get("measurements") or [{}])[-1]
                    if last.get("message"):
                        result["message"] = last["message"]
                result["phase"] = phase
            if phase not in COMPLETED:
                everything_completed = False
                continue
            failure_phase, reason = metric_failure(metric, result)
            if not worst or is_worse(worst, phase):
                worst = phase
                if reason:
                    worst_message = f'Metric "{metric.get("name")}" assessed {phase} due to {reason}'
                    if result.get("message"):
                        worst_message += f': "Error Message: {result["message"]}"'
            summary_key = {"Error": "error", "Failed": "failed", "Inconclusive": "inconclusive"}.get(
                failure_phase, "successful"
            )
            summary[summary_key] += 1
        status["runSummary"] = {k: v for k, v in summary.items() if v}
        if terminating:
            return (worst or "Successful"), worst_message.strip()
        if not everything_completed or not worst:
            return "Running", ""
        return worst, worst_message.strip()


def _sooner(current: float | None, candidate: float) -> float:
    return candidate if current is None else min(current, candidate)
