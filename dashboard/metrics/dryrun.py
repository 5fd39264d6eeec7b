"""The analysis dry run: what verdict would this AnalysisTemplate give now, against the stable version?

Each metric's ``{{args.…}}`` are resolved with the stable version's pod-template hash standing in for the
canary's (``valueFrom.podTemplateHashValue`` and any argument equal to the canary hash), the query is asked
of Prometheus once, and the conditions are judged by ``dashboard.domain.analysis_eval`` — the very code
kubesim's AnalysisRuns use. Beyond the verdict it names three traps:

- an Error (a PromQL typo, an unresolvable argument, a condition the evaluator refuses): this would block
  every rollout;
- an empty result: the query matches nothing (a label typo, or the canary is not serving yet);
- a condition that could never fail: no value of the answer's shape (0, 1, NaN, ±Inf, the thresholds
  themselves and values around them…) makes it Failed or Inconclusive.

``judge_metric`` and ``dry_run_verdict`` are pure; ``run_dry_run`` does the I/O through ``PrometheusClient``.
Non-goals: the AnalysisRun state machine over time (count, interval, limits) — a dry run is one measurement.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dashboard.domain.analysis_eval import (
    ERROR,
    FAILED,
    INCONCLUSIVE,
    SUCCESSFUL,
    ArgumentError,
    ExpressionError,
    QueryAnswer,
    evaluate_result,
    resolve_metric_args,
)
from dashboard.metrics.client import Outcome, PrometheusClient

# Argo's order from best to worst (analysisutil.IsWorse).
_WORSE = [SUCCESSFUL, "Running", "Pending", INCONCLUSIVE, ERROR, FAILED]
_PROBES = (-1e9, -1.0, 0.0, 1e-4, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.9, 0.99, 1.0, 2.0, 10.0, 100.0, 1e9)
_NUMBER = re.compile(r"(?<![\w.\]])(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+)")


@dataclass
class MetricVerdict:
    name: str
    query: str
    phase: str
    value: str = ""
    message: str = ""
    problems: list[str] = field(default_factory=list)
    success_condition: str = ""
    failure_condition: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "query": self.query,
            "phase": self.phase,
            "value": self.value,
            "message": self.message,
            "problems": list(self.problems),
            "successCondition": self.success_condition,
            "failureCondition": self.failure_condition,
        }


@dataclass
class DryRun:
    verdict: str
    metrics: list[MetricVerdict]
    stable_hash: str | None
    prometheus: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "stableHash": self.stable_hash,
            "prometheus": self.prometheus,
            "metrics": [m.to_dict() for m in self.metrics],
        }


def stable_args(
    args: Sequence[Mapping[str, Any]], stable_hash: str | None, canary_hash: str | None = None
) -> list[dict[str, Any]]:
    """The run's arguments pointed at the stable version: pod-template-hash arguments get ``stable_hash``."""
    out: list[dict[str, Any]] = []
    for arg in args:
        item = {"name": str(arg.get("name", ""))}
        value_from = arg.get("valueFrom") or {}
        if (stable_hash and isinstance(value_from, Mapping) and value_from.get("podTemplateHashValue")) or (
            stable_hash and canary_hash and str(arg.get("value")) == canary_hash
        ):
            item["value"] = stable_hash
        elif arg.get("value") is not None:
            item["value"] = str(arg["value"])
        out.append(item)
    return out


def _probes(success: str, failure: str, shape: str) -> list[Any]:
    numbers = {float(n) for n in _NUMBER.findall(f"{success} {failure}")}
    values = set(_PROBES)
    for n in numbers:
        values.update({n, n * 0.5, n * 2, n - 1e-6, n + 1e-6, -n})
    ordered = [*sorted(values), math.nan, math.inf, -math.inf]
    return ordered if shape == "scalar" else [[v] for v in ordered]


def can_fail(success: str, failure: str, shape: str) -> bool:
    """Whether any plausible answer of this shape makes the conditions Failed or Inconclusive."""
    if not success and not failure:
        return False
    for probe in _probes(success, failure, shape):
        try:
            if evaluate_result(probe, success or None, failure or None) in (FAILED, INCONCLUSIVE):
                return True
        except ExpressionError:
            continue
    return False


def judge_metric(
    metric: Mapping[str, Any], outcome: Outcome | None, arg_error: str | None = None
) -> MetricVerdict:
    """One metric's verdict from its Prometheus outcome (pure)."""
    prom = (metric.get("provider") or {}).get("prometheus") or {}
    success = str(metric.get("successCondition") or "")
    failure = str(metric.get("failureCondition") or "")
    verdict = MetricVerdict(
        name=str(metric.get("name", "")),
        query=str(prom.get("query", "")),
        phase=ERROR,
        success_condition=success,
        failure_condition=failure,
    )
    block = "an Error here would block every rollout that uses this template"
    if arg_error is not None:
        verdict.message = f"Unable to resolve metric arguments: {arg_error}"
        verdict.problems.append(block)
        return verdict
    if not prom:
        verdict.message = "not a Prometheus metric: the dry run only queries Prometheus"
        return verdict
    if outcome is None or not outcome.ok or outcome.answer is None:
        verdict.message = outcome.message if outcome else "not measured"
        if outcome is not None and outcome.state == "error":
            verdict.problems.append(f"the query is broken: {block}")
        else:
            verdict.problems.append("Prometheus is unreachable: no verdict, and a real run would Error too")
        return verdict
    answer: QueryAnswer = outcome.answer
    verdict.value = answer.value
    shape = "scalar" if answer.result_type == "scalar" else "vector"
    if isinstance(answer.result, list) and not answer.result:
        verdict.problems.append(
            "the query matches nothing (empty result): check label names and values; "
            "upstream treats this as an Error measurement"
        )
    try:
        verdict.phase = evaluate_result(answer.result, success or None, failure or None)
    except ExpressionError as error:
        verdict.phase, verdict.message = ERROR, str(error)
        if not (isinstance(answer.result, list) and not answer.result):
            verdict.problems.append(block)
    if not can_fail(success, failure, shape):
        verdict.problems.append(
            "the conditions can never fail: no value tried (0, 1, NaN, ±Inf, the thresholds and around them) "
            "gives Failed or Inconclusive, so this analysis cannot stop a bad release"
        )
    return verdict


def dry_run_verdict(metrics: Sequence[MetricVerdict]) -> str:
    worst = SUCCESSFUL
    for m in metrics:
        if m.phase in _WORSE and _WORSE.index(m.phase) > _WORSE.index(worst):
            worst = m.phase
    return worst


async def run_dry_run(
    client: PrometheusClient,
    metrics: Sequence[Mapping[str, Any]],
    args: Sequence[Mapping[str, Any]],
    *,
    stable_hash: str | None,
    canary_hash: str | None = None,
) -> DryRun:
    """Evaluate every metric once against the stable version's current data."""
    resolved_args = stable_args(args, stable_hash, canary_hash)

    async def one(metric: Mapping[str, Any]) -> MetricVerdict:
        try:
            resolved = resolve_metric_args(dict(metric), resolved_args)
        except ArgumentError as error:
            return judge_metric(metric, None, str(error))
        query = str(((resolved.get("provider") or {}).get("prometheus") or {}).get("query", ""))
        outcome = await client.query(query) if query else None
        return judge_metric(resolved, outcome)

    verdicts = list(await asyncio.gather(*(one(m) for m in metrics)))
    return DryRun(dry_run_verdict(verdicts), verdicts, stable_hash, client.base_url)
