"""Diagnostics: findings for the known failure modes of a rollout (issue 8), as pure functions.

``detect_findings(view, objects=…, history=…, now=…)`` runs every detector over one rollout's objects, its
recent history (``dashboard.domain.observations``) and the time, and returns the findings, most severe
first. ``finding_changes(previous, current, at=…)`` turns two evaluations into ``finding.raised`` /
``finding.cleared`` timeline events keyed by code and subject. The codes are a contract (DESIGN §3).

Non-goals: I/O, Django settings (thresholds are passed in), performing actions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from ..observations import EMPTY, Observations, RolloutObjects, observe
from ..rs_roles import Role
from ..timeline import FINDING_CLEARED, FINDING_RAISED, format_time
from . import analysis, autoscaling, gitops, progress, releases, replicasets, traffic
from .base import CRITICAL, INFO, SEVERITY_ORDER, WARNING, Context, Finding, Thresholds

CODES = (
    releases.RERENDER_RACE,
    releases.CONFIG_ONLY_REVISION,
    gitops.PAUSED_REPORTED_DEGRADED,
    releases.STUCK_AT_STEP_ZERO,
    replicasets.CODE,
    progress.CODE,
    analysis.ANALYSIS_FAILED,
    analysis.ANALYSIS_INCONCLUSIVE,
    analysis.METRICS_PROVIDER_ERROR,
    traffic.WEIGHT_FIGHT,
    traffic.TRAFFIC_AHEAD_OF_CAPACITY,
    traffic.ROUTER_WEIGHT_DRIFT,
    autoscaling.AUTOSCALER_SYNC_CONFLICT,
    autoscaling.AUTOSCALER_TARGETS_WORKLOAD_REF,
    autoscaling.AUTOSCALER_AT_MAX_DURING_ANALYSIS,
    gitops.PIPELINE_RED_ROLLOUT_HEALTHY,
    analysis.STALE_ANALYSIS_THRESHOLD,
    traffic.REPLICA_WEIGHTED_CANARY,
)

__all__ = [
    "CODES",
    "CRITICAL",
    "INFO",
    "WARNING",
    "Finding",
    "Observations",
    "RolloutObjects",
    "Thresholds",
    "detect_findings",
    "finding_changes",
    "history_moves_with_time",
    "observe",
]

DEFAULT_THRESHOLDS = Thresholds()


def history_moves_with_time(history: Observations | None) -> bool:
    """Whether the clock alone can raise a finding from ``history``: only while the router disagrees with
    the rollout (drift is raised once it has lasted ``router_drift_seconds``). The weight and replica
    writes only age out of the fight window, which can end a fight but never start one (fewer writes,
    fewer revisited values), and a rollout with findings is rechecked for them anyway; so a rollout that
    once moved its canary weight is not re-evaluated for that forever."""
    return history is not None and history.router_drift_since is not None


def _cluster_of(view: Any) -> str:
    if view is None:
        return ""
    cluster = view.get("cluster") if isinstance(view, Mapping) else getattr(view, "cluster", "")
    return cluster if isinstance(cluster, str) else ""


def detect_findings(
    view: Any,
    *,
    objects: RolloutObjects,
    history: Observations | None = None,
    now: datetime,
    applications: Sequence[Mapping[str, Any]] | None = None,
    pipelines: Mapping[str, str] | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    baselines: Mapping[str, float] | None = None,
    roles: Mapping[str, Role] | None = None,
) -> list[Finding]:
    """Every finding for the rollout in ``objects``, most severe first.

    ``view`` (a RolloutView or its dict, or None) only supplies the cluster name; everything else is read
    from the objects so that a view, a dump and a recording agree. ``applications`` defaults to
    ``objects.applications``; ``pipelines`` maps commit SHAs to pipeline states when they are known;
    ``baselines`` maps analysis metric names to the stable version's recent value from Prometheus
    (``dashboard.metrics.baseline``), which ``stale-analysis-threshold`` then prefers to past runs;
    ``roles`` are the ReplicaSets' roles the view was built with (computed here when not given).
    """
    ctx = Context(
        cluster=_cluster_of(view),
        objects=objects,
        history=history or EMPTY,
        now=now if now.tzinfo else now.replace(tzinfo=UTC),
        thresholds=thresholds,
        applications=tuple(objects.applications if applications is None else applications),
        pipelines=dict(pipelines or {}),
        given_roles=roles,
    )
    orphans = replicasets.orphans(ctx)
    found = [
        *releases.rerender_race(ctx, orphans),
        *releases.config_only_revision(ctx),
        *releases.stuck_at_step_zero(ctx),
        *replicasets.detect(ctx, orphans),
        *progress.detect(ctx),
        *analysis.analysis_outcomes(ctx),
        *analysis.stale_thresholds(ctx, baselines),
        *traffic.weight_fight(ctx),
        *traffic.traffic_ahead_of_capacity(ctx),
        *traffic.router_weight_drift(ctx),
        *autoscaling.targets_workload_ref(ctx),
        *autoscaling.sync_conflict(ctx),
        *autoscaling.at_max_during_analysis(ctx),
        *traffic.replica_weighted_canary(ctx),
        *gitops.paused_reported_degraded(ctx),
        *gitops.pipeline_red_rollout_healthy(ctx),
    ]
    found.sort(key=lambda f: (SEVERITY_ORDER.get(f.severity, 9), CODES.index(f.code), f.subject))
    return found


def finding_changes(
    previous: Sequence[Finding], current: Sequence[Finding], *, at: datetime | None = None
) -> list[dict[str, Any]]:
    """Timeline events for findings that appeared (``finding.raised``) or went away (``finding.cleared``).

    Findings are matched by (code, subject), so a finding whose evidence changes is neither raised nor
    cleared again. ``at`` defaults to the finding's ``since`` for raises (when it began).
    """
    before = {f.key: f for f in previous}
    after = {f.key: f for f in current}
    events = []
    for key, finding in after.items():
        if key not in before:
            events.append(_event(FINDING_RAISED, finding, at or finding.since))
    for key, finding in before.items():
        if key not in after:
            events.append(_event(FINDING_CLEARED, finding, at or datetime.now(UTC)))
    return events


def _event(kind: str, finding: Finding, at: datetime) -> dict[str, Any]:
    subject = f":{finding.subject}" if finding.subject else ""
    since = format_time(finding.since)
    return {
        "kind": kind,
        "at": format_time(at),
        "key": f"{finding.cluster}/{finding.namespace}/{finding.rollout}",
        "cluster": finding.cluster,
        "namespace": finding.namespace,
        "rollout": finding.rollout,
        "dedupe": f"finding:{finding.code}{subject}:{since}"
        + (":cleared" if kind == FINDING_CLEARED else ""),
        "title": finding.title if kind == FINDING_RAISED else f"Cleared: {finding.title}",
        "data": {
            "code": finding.code,
            "subject": finding.subject or None,
            "severity": finding.severity,
            "since": since,
        },
    }
