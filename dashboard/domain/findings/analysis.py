"""Findings from the release's AnalysisRuns.

- ``analysis-failed`` (critical), ``analysis-inconclusive`` (warning): the latest run of a kind (step i,
  background, pre/post-promotion) for the current pod hash ended that way.
- ``metrics-provider-error`` (critical): the analysis itself errored (phase Error, a running metric that
  keeps erroring, or one whose last measurement says the provider cannot be reached — connection refused,
  context deadline exceeded, no such host): automated rollback cannot protect this release.
- ``stale-analysis-threshold`` (warning): a metric's threshold sits far from the metric's baseline. The
  baseline is the stable version's recent value from Prometheus when the caller passes it in ``baselines``
  (``dashboard.metrics.baseline`` computes it: the p95 of the last hour for an upper bound, the p5 for a
  lower one), otherwise the measurements of the recent successful runs at hand.

Non-goals: evaluating conditions, querying the provider (the caller brings the Prometheus baselines).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ...jsonbody import loads as bounded_json_loads
from ..objects import as_int, as_str, dig, dig_map, dig_str, maps, parse_time, rfc3339, str_map
from .base import CRITICAL, HASH_LABEL, WARNING, Context, Finding

ANALYSIS_FAILED = "analysis-failed"
ANALYSIS_INCONCLUSIVE = "analysis-inconclusive"
METRICS_PROVIDER_ERROR = "metrics-provider-error"
STALE_ANALYSIS_THRESHOLD = "stale-analysis-threshold"

# "result[0] < 0.05", "result >= 0.995", "0.05 > result[0]" is not supported (upstream examples never do it).
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_CONDITION = re.compile(rf"^\s*result(?:\[0\])?\s*(<=|<|>=|>)\s*({_NUMBER})\s*$")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# How Go's HTTP client words a backend it cannot reach (the provider's Error measurement messages): one such
# measurement is enough, since no retry fixes a provider that is down.
_UNREACHABLE = re.compile(
    r"connection refused|context deadline exceeded|no such host|i/o timeout|network is unreachable"
    r"|no route to host|connection reset by peer|Client\.Timeout exceeded",
    re.IGNORECASE,
)


def _time(run: Mapping[str, Any]) -> datetime:
    return (
        parse_time(dig(run, "status", "completedAt"))
        or parse_time(dig(run, "status", "startedAt"))
        or parse_time(dig(run, "metadata", "creationTimestamp"))
        or EPOCH
    )


def _kind(run: Mapping[str, Any]) -> tuple[str, str]:
    labels = str_map(dig(run, "metadata", "labels"))
    return labels.get("rollout-type", ""), labels.get("step-index", "")


def _describe_kind(run: Mapping[str, Any]) -> str:
    kind, step = _kind(run)
    if kind == "Step" and step:
        return f"step {step} analysis"
    return f"{kind.lower()} analysis" if kind else "analysis"


def latest_runs(ctx: Context) -> list[Mapping[str, Any]]:
    """The newest run of each kind for the current pod hash."""
    latest: dict[tuple[str, str], Mapping[str, Any]] = {}
    for run in ctx.analysis_runs:
        if str_map(dig(run, "metadata", "labels")).get(HASH_LABEL) != ctx.current_hash:
            continue
        key = _kind(run)
        if key not in latest or (_time(run), dig_str(run, "metadata", "name")) > (
            _time(latest[key]),
            dig_str(latest[key], "metadata", "name"),
        ):
            latest[key] = run
    return sorted(latest.values(), key=lambda r: dig_str(r, "metadata", "name"))


def _metric_summaries(run: Mapping[str, Any], phases: set[str]) -> list[dict[str, Any]]:
    summaries = []
    for result in maps(dig(run, "status", "metricResults")):
        if as_str(result.get("phase")) not in phases and not (
            "Error" in phases and as_int(result.get("consecutiveError")) > 0
        ):
            continue
        measurements = maps(result.get("measurements"))
        summaries.append(
            {
                "metric": as_str(result.get("name")),
                "phase": as_str(result.get("phase")),
                "successful": as_int(result.get("successful")),
                "failed": as_int(result.get("failed")),
                "inconclusive": as_int(result.get("inconclusive")),
                "error": as_int(result.get("error")),
                "consecutiveError": as_int(result.get("consecutiveError")),
                "lastValues": [
                    as_str(m.get("value")) for m in measurements[-3:] if m.get("value") is not None
                ],
                "lastMessage": next(
                    (as_str(m.get("message")) for m in reversed(measurements) if m.get("message")), None
                ),
                "message": as_str(result.get("message")) or None,
            }
        )
    return summaries


def _spec_metric(run: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return next((m for m in maps(dig(run, "spec", "metrics")) if m.get("name") == name), {})


def _provider(metric: Mapping[str, Any]) -> tuple[str, str | None]:
    provider = dig_map(metric, "provider")
    for name, body in provider.items():
        address = dig(body, "address")
        return str(name), address if isinstance(address, str) else None
    return "", None


def analysis_outcomes(ctx: Context) -> list[Finding]:
    if not ctx.current_hash or ctx.fully_promoted:
        return []
    findings = []
    for run in latest_runs(ctx):
        phase = dig_str(run, "status", "phase")
        name = dig_str(run, "metadata", "name")
        since = _time(run)
        runbook = ctx.runbook
        if phase == "Failed":
            metrics = _metric_summaries(run, {"Failed"})
            names = ", ".join(m["metric"] for m in metrics) or "a metric"
            findings.append(
                ctx.finding(
                    ANALYSIS_FAILED,
                    CRITICAL,
                    f"Analysis failed: {names}",
                    f"The {_describe_kind(run)} {name} failed on {names}, so the controller aborts "
                    "this update "
                    "and sends traffic back to stable. Read the measurements before retrying: a "
                    "retry runs the "
                    "same canary against the same threshold.",
                    {
                        "analysisRun": name,
                        "phase": phase,
                        "message": dig_str(run, "status", "message") or None,
                        "metrics": metrics,
                        "aborted": ctx.aborted,
                    },
                    [runbook.analysis_run(name), runbook.get_rollout()],
                    since,
                    subject=name,
                )
            )
        elif phase == "Inconclusive":
            metrics = _metric_summaries(run, {"Inconclusive"})
            findings.append(
                ctx.finding(
                    ANALYSIS_INCONCLUSIVE,
                    WARNING,
                    "Analysis inconclusive: a person has to decide",
                    f"The {_describe_kind(run)} {name} was inconclusive, so the rollout pauses until someone "
                    "promotes or aborts it. Look at the measurements and decide; nothing proceeds on "
                    "its own.",
                    {"analysisRun": name, "phase": phase, "metrics": metrics},
                    [runbook.analysis_run(name), runbook.argo("promote"), runbook.argo("abort")],
                    since,
                    subject=name,
                )
            )
        else:
            finding = _provider_error(ctx, run, phase)
            if finding is not None:
                findings.append(finding)
    return findings


def _unreachable(result: Mapping[str, Any]) -> str | None:
    """The last measurement's message when it is an Error saying the provider cannot be reached."""
    measurements = maps(result.get("measurements"))
    last = measurements[-1] if measurements else {}
    message = as_str(last.get("message"))
    return message if as_str(last.get("phase")) == "Error" and _UNREACHABLE.search(message) else None


def _provider_error(ctx: Context, run: Mapping[str, Any], phase: str) -> Finding | None:
    streak = ctx.thresholds.provider_error_streak
    results = maps(dig(run, "status", "metricResults"))
    unreachable = [msg for r in results for msg in [_unreachable(r)] if msg]
    erroring = [
        r
        for r in results
        if as_str(r.get("phase")) == "Error"
        or (phase == "Running" and as_int(r.get("consecutiveError")) >= streak)
        or _unreachable(r)
    ]
    if phase != "Error" and not erroring:
        return None
    name = dig_str(run, "metadata", "name")
    metrics = _metric_summaries(run, {"Error"})
    providers = []
    for metric in metrics:
        kind, address = _provider(_spec_metric(run, metric["metric"]))
        providers.append({"metric": metric["metric"], "provider": kind or None, "address": address})
    runbook = ctx.runbook
    commands = [runbook.analysis_run(name), runbook.get_rollout()]
    if not ctx.aborted:
        commands.append(runbook.argo("abort"))
    if ctx.stable_hash:
        commands.append(runbook.pods_of(ctx.stable_hash))
    for provider in providers:
        if provider["provider"] == "prometheus" and provider["address"]:
            command = f"curl -sf {provider['address'].rstrip('/')}/-/ready"
            if command not in commands:  # metrics usually share one Prometheus
                commands.append(command)
    first_error = min(
        (
            t
            for r in erroring
            for m in maps(r.get("measurements"))
            if as_str(m.get("phase")) == "Error"
            for t in [parse_time(m.get("startedAt")) or parse_time(m.get("finishedAt"))]
            if t is not None
        ),
        default=None,
    )
    if unreachable:
        title = "Analysis errored: the metrics provider is unreachable"
        cause = f"its metrics provider cannot be reached ({unreachable[-1]})"
    else:
        title = "Analysis errored: the metrics provider may be down"
        cause = f"it could not measure ({phase}): the metrics backend may be down"
    return ctx.finding(
        METRICS_PROVIDER_ERROR,
        CRITICAL,
        title,
        f"The {_describe_kind(run)} {name} is blind: {cause}, so automated rollback cannot protect this "
        "release. Follow the manual procedure: "
        + ("the update is aborted already; " if ctx.aborted else "abort to send traffic back to stable, ")
        + "confirm the stable pods serve, and check the provider before any retry.",
        {
            "analysisRun": name,
            "phase": phase,
            "metrics": metrics,
            "providers": providers,
            "unreachable": unreachable,
            "aborted": ctx.aborted,
        },
        commands,
        first_error or _time(run),
        subject=name,
    )


# ---- stale thresholds ------------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = bounded_json_loads(value, what="the measurement value", max_bytes=64 * 1024)
    except ValueError:
        return None
    while isinstance(parsed, list) and parsed:
        parsed = parsed[0]
    if isinstance(parsed, bool) or not isinstance(parsed, int | float) or not math.isfinite(parsed):
        return None
    return float(parsed)


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def threshold_bound(metric: Mapping[str, Any]) -> tuple[str, float, str] | None:
    """("upper"|"lower", threshold, condition text): which side of the threshold a good value lies on."""
    for key, good_below in (("successCondition", ("<", "<=")), ("failureCondition", (">", ">="))):
        text = as_str(metric.get(key))
        match = _CONDITION.match(text)
        if match:
            side = "upper" if match.group(1) in good_below else "lower"
            return side, float(match.group(2)), f"{key}: {text.strip()}"
    return None


def stale_thresholds(ctx: Context, baselines: Mapping[str, float] | None = None) -> list[Finding]:
    """``baselines``: metric name → the stable version's recent value from Prometheus (see module doc)."""
    limits = ctx.thresholds
    baselines = {k: v for k, v in (baselines or {}).items() if math.isfinite(v)}
    successful = sorted(
        (r for r in ctx.analysis_runs if dig_str(r, "status", "phase") == "Successful"), key=_time
    )
    if len(successful) < limits.stale_min_runs and not baselines:
        return []
    newest_spec: dict[str, Mapping[str, Any]] = {}
    for run in sorted(ctx.analysis_runs, key=_time):
        for metric in maps(dig(run, "spec", "metrics")):
            newest_spec[as_str(metric.get("name"))] = metric
    findings = []
    for metric_name, metric in sorted(newest_spec.items()):
        bound = threshold_bound(metric)
        if bound is None:
            continue
        side, threshold, condition_text = bound
        if metric_name in baselines:
            findings.extend(
                _stale_against_baseline(ctx, metric_name, side, threshold, condition_text, baselines)
            )
            continue
        values: list[float] = []
        runs_with_metric: list[Mapping[str, Any]] = []
        for run in successful:
            found = [
                v
                for r in maps(dig(run, "status", "metricResults"))
                if r.get("name") == metric_name
                for m in maps(r.get("measurements"))
                if as_str(m.get("phase")) == "Successful"
                for v in [_number(m.get("value"))]
                if v is not None
            ]
            if found:
                values.extend(found)
                runs_with_metric.append(run)
        if len(runs_with_metric) < limits.stale_min_runs or len(values) < limits.stale_min_measurements:
            continue
        p95, p5 = percentile(values, 0.95), percentile(values, 0.05)
        verdict = _verdict(side, threshold, p95, p5, limits.stale_threshold_factor)
        if verdict is None:
            continue
        since = _time(runs_with_metric[limits.stale_min_runs - 1])
        findings.append(
            ctx.finding(
                STALE_ANALYSIS_THRESHOLD,
                WARNING,
                f"Stale threshold on {metric_name}",
                f"The {metric_name} threshold ({condition_text}) sits far from what the last "
                f"{len(runs_with_metric)} successful runs measured (p5 {p5:g}, p95 {p95:g}), so it "
                f"{verdict}. "
                "Re-derive it from the current baseline.",
                {
                    "metric": metric_name,
                    "condition": condition_text,
                    "threshold": threshold,
                    "side": side,
                    "p95": p95,
                    "p5": p5,
                    "factor": limits.stale_threshold_factor,
                    "runs": [dig_str(r, "metadata", "name") for r in runs_with_metric],
                    "measurements": len(values),
                    "since": rfc3339(since),
                    "baseline": "measurements",
                },
                [f"kubectl -n {ctx.namespace} get analysistemplates,clusteranalysistemplates -o yaml"],
                since,
                subject=metric_name,
            )
        )
    return findings


def _stale_against_baseline(
    ctx: Context,
    metric_name: str,
    side: str,
    threshold: float,
    condition_text: str,
    baselines: Mapping[str, float],
) -> list[Finding]:
    """The same verdict, judged against the stable version's value from Prometheus (no run count needed)."""
    baseline = baselines[metric_name]
    factor = ctx.thresholds.stale_threshold_factor
    verdict = _verdict(side, threshold, baseline, baseline, factor)
    if verdict is None:
        return []
    quantile = "p95" if side == "upper" else "p5"
    runs = [
        r
        for r in ctx.analysis_runs
        if any(m.get("name") == metric_name for m in maps(dig(r, "spec", "metrics")))
    ]
    since = max((_time(r) for r in runs), default=ctx.now)  # the newest run that used this threshold
    return [
        ctx.finding(
            STALE_ANALYSIS_THRESHOLD,
            WARNING,
            f"Stale threshold on {metric_name}",
            f"The {metric_name} threshold ({condition_text}) sits far from what the stable version measured "
            f"in Prometheus over the last hour ({quantile} {baseline:g}), so it {verdict}. "
            "Re-derive it from the current baseline.",
            {
                "metric": metric_name,
                "condition": condition_text,
                "threshold": threshold,
                "side": side,
                quantile: baseline,
                "factor": factor,
                "baseline": "prometheus",
            },
            [
                f"kubectl -n {ctx.namespace} get analysistemplates,clusteranalysistemplates -o yaml",
                ctx.runbook.get_rollout(),
            ],
            since,
            subject=metric_name,
        )
    ]


def _verdict(side: str, threshold: float, p95: float, p5: float, factor: float) -> str | None:
    """Why the threshold is too far from the baseline to catch a bad canary, or None."""
    if side == "upper" and p95 > 0 and threshold > factor * p95:
        return f"would pass a canary {threshold / p95:.1f}x worse than normal"
    if side == "lower" and threshold > 0 and p5 > factor * threshold:
        return f"would pass a canary measuring {threshold / p5:.2f} of normal"
    return None
