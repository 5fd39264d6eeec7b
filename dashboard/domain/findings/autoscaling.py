"""Findings about the HorizontalPodAutoscaler of a rollout (issue 19, the seed's autoscaling conflict).

- ``autoscaler-targets-workload-ref`` (warning): the HPA's ``scaleTargetRef`` names the Deployment the
  Rollout's ``workloadRef`` points to. The rollouts controller keeps that Deployment's pods out of service
  (it runs its own ReplicaSets), so the HPA scales nothing that serves traffic; it must target the Rollout.
- ``autoscaler-sync-conflict`` (warning): the HPA and the GitOps sync both write the Rollout's
  ``spec.replicas`` (their writes as the watcher saw them, or both owning it in ``managedFields``): each
  undoes the other, and the sync resets the capacity the HPA added under load.
- ``autoscaler-at-max-during-analysis`` (warning): the HPA is pinned at ``maxReplicas`` while an analysis
  runs: the canary is saturated, so the analysis measures a saturated canary, not the new version.

Non-goals: reading the HPA (``dashboard.domain.autoscalers``), autoscaling/v1.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ..autoscalers import ROLLOUT, autoscaler_for, autoscaler_view
from ..objects import dig_str, parse_time, rfc3339
from ..observations import replicas_owners
from .base import WARNING, Context, Finding

AUTOSCALER_TARGETS_WORKLOAD_REF = "autoscaler-targets-workload-ref"
AUTOSCALER_SYNC_CONFLICT = "autoscaler-sync-conflict"
AUTOSCALER_AT_MAX_DURING_ANALYSIS = "autoscaler-at-max-during-analysis"
# Who writes spec.replicas for an HPA: the HPA controller, through the scale subresource.
HPA_MANAGERS = ("kube-controller-manager", "horizontal-pod-autoscaler", "hpa-controller")
GITOPS_PREFIXES = ("argocd", "argo-cd", "kustomize-controller", "helm-controller", "flux")


def _hpa(ctx: Context) -> Mapping[str, Any] | None:
    return autoscaler_for(ctx.rollout, ctx.objects.autoscalers) if ctx.objects.autoscalers else None


def _get_hpa(ctx: Context, name: str) -> str:
    return f"kubectl -n {shlex.quote(ctx.namespace)} get hpa {shlex.quote(name)} -o yaml"


def _is_hpa(manager: str, subresource: str) -> bool:
    return subresource == "scale" or any(manager.startswith(m) for m in HPA_MANAGERS)


def _is_gitops(manager: str) -> bool:
    return manager.startswith(GITOPS_PREFIXES)


def targets_workload_ref(ctx: Context) -> list[Finding]:
    hpa = _hpa(ctx)
    if hpa is None:
        return []
    view = autoscaler_view(hpa, ctx.rollout)
    if not view["targetsWorkloadRef"]:
        return []
    name = str(view["name"])
    patch = (
        '{"spec":{"scaleTargetRef":{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","name":"'
        + ctx.name
        + '"}}}'
    )
    return [
        ctx.finding(
            AUTOSCALER_TARGETS_WORKLOAD_REF,
            WARNING,
            f"HPA {name} scales the Deployment {view['targetName']}, not the Rollout",
            f"HorizontalPodAutoscaler {name} targets {view['targetKind']} {view['targetName']}, the "
            "workload this Rollout references through workloadRef. The rollouts controller runs the pods "
            "in its own ReplicaSets, so scaling that Deployment changes nothing that serves traffic, and "
            "the Rollout's replicas are never autoscaled. Point scaleTargetRef at the Rollout "
            f"(apiVersion argoproj.io/v1alpha1, kind Rollout, name {ctx.name}); the rollouts controller "
            "then splits the count between canary and stable.",
            {
                "autoscaler": name,
                "scaleTargetRef": {"kind": view["targetKind"], "name": view["targetName"]},
                "workloadRef": dig_str(ctx.rollout, "spec", "workloadRef", "name"),
                "rollout": ctx.name,
                "currentReplicas": view["currentReplicas"],
                "desiredReplicas": view["desiredReplicas"],
            },
            [
                _get_hpa(ctx, name),
                f"kubectl -n {shlex.quote(ctx.namespace)} patch hpa {shlex.quote(name)} --type merge "
                f"-p {shlex.quote(patch)}",
            ],
            parse_time(dig_str(hpa, "metadata", "creationTimestamp")) or ctx.now,
            subject=name,
        )
    ]


def sync_conflict(ctx: Context) -> list[Finding]:
    hpa = _hpa(ctx)
    if hpa is None:
        return []
    view = autoscaler_view(hpa, ctx.rollout)
    if view["targetKind"] != ROLLOUT:
        return []
    window_start = ctx.now - timedelta(seconds=ctx.thresholds.weight_fight_window_seconds)
    writes = [w for w in ctx.history.replica_writes if w.at >= window_start and w.writer]
    hpa_writes = [w for w in writes if _is_hpa(str(w.writer), "")]
    sync_writes = [w for w in writes if _is_gitops(str(w.writer))]
    owners = replicas_owners(ctx.rollout)
    hpa_owners = sorted({m for m, sub, _ in owners if _is_hpa(m, sub)})
    sync_owners = sorted({m for m, sub, _ in owners if _is_gitops(m) and not _is_hpa(m, sub)})
    seen = bool(hpa_writes and sync_writes)
    if not seen and not (hpa_owners and sync_owners):
        return []
    writers = sorted({str(w.writer) for w in writes} | set(hpa_owners) | set(sync_owners))
    apps = [dig_str(a, "metadata", "name") for a in ctx.managing_applications]
    fix = (
        "Let the HPA own the replica count: remove spec.replicas from the Rollout in Git, or have Argo CD "
        f"ignore it (ignoreDifferences: [{{group: argoproj.io, kind: Rollout, name: {ctx.name}, "
        "jsonPointers: [/spec/replicas]}] with syncOptions: [RespectIgnoreDifferences=true])."
    )
    runbook = [
        f"kubectl -n {shlex.quote(ctx.namespace)} get rollout {shlex.quote(ctx.name)} --show-managed-fields "
        '-o jsonpath=\'{range .metadata.managedFields[*]}{.manager}{"\\t"}{.subresource}{"\\t"}{.time}'
        '{"\\n"}{end}\'',
        _get_hpa(ctx, str(view["name"])),
    ]
    runbook += [f"argocd app diff {app}" for app in apps]
    since = min((w.at for w in writes), default=None) or ctx.now
    return [
        ctx.finding(
            AUTOSCALER_SYNC_CONFLICT,
            WARNING,
            "The HPA and the GitOps sync both write spec.replicas",
            f"HorizontalPodAutoscaler {view['name']} scales the Rollout while the sync keeps writing the "
            f"replica count from the repository ({', '.join(writers)}): each write undoes the other, and a "
            f"sync under load takes away the capacity the HPA added. {fix}",
            {
                "autoscaler": view["name"],
                "writers": writers,
                "changes": [
                    {"at": rfc3339(w.at), "replicas": w.value, "writer": w.writer} for w in writes[-10:]
                ],
                "ownersNow": [m for m, _, _ in owners],
                "rolloutReplicas": view["rolloutReplicas"],
                "hpaDesired": view["desiredReplicas"],
                "applications": apps,
                "ownershipFix": fix,
            },
            runbook,
            since,
            subject=str(view["name"]),
        )
    ]


def at_max_during_analysis(ctx: Context) -> list[Finding]:
    hpa = _hpa(ctx)
    if hpa is None:
        return []
    view = autoscaler_view(hpa, ctx.rollout)
    if not view["atMax"]:
        return []
    running = [
        run for run in ctx.analysis_runs if dig_str(run, "status", "phase") in ("Running", "Pending", "")
    ]
    if not running:
        return []
    run_name = dig_str(running[0], "metadata", "name")
    return [
        ctx.finding(
            AUTOSCALER_AT_MAX_DURING_ANALYSIS,
            WARNING,
            f"The autoscaler is pinned at its maximum ({view['maxReplicas']}) during analysis",
            f"HorizontalPodAutoscaler {view['name']} runs {view['currentReplicas']} of at most "
            f"{view['maxReplicas']} replicas while AnalysisRun {run_name} measures the canary: the pods are "
            "saturated, so the analysis reads a saturated canary (latency, errors) rather than the new "
            "version. Raise maxReplicas or pause the rollout until load drops before trusting the result.",
            {
                "autoscaler": view["name"],
                "currentReplicas": view["currentReplicas"],
                "maxReplicas": view["maxReplicas"],
                "desiredReplicas": view["desiredReplicas"],
                "metrics": view["metrics"],
                "analysisRun": run_name,
            },
            [_get_hpa(ctx, str(view["name"])), ctx.runbook.analysis_run(run_name)],
            parse_time(dig_str(running[0], "metadata", "creationTimestamp")) or ctx.now,
            subject=str(view["name"]),
        )
    ]
