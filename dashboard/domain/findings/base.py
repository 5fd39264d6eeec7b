"""What every detector shares: the Finding, the thresholds, and the facts read once per evaluation.

``Context`` gathers the rollout's own facts (phase, hashes, its ReplicaSets and AnalysisRuns, the Argo CD
Applications that manage it) so that each detector is a short pure function ``(Context) -> list[Finding]``.
``Runbook`` fills the seeds' commands with real names.

Non-goals: deciding anything (the detector modules do), Django settings (thresholds are passed in).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from ..objects import (
    as_bool,
    as_str,
    atoi,
    dig,
    dig_map,
    dig_str,
    maps,
    opt_int,
    owner_uids,
    parse_time,
    rfc3339,
    str_map,
)
from ..observations import Observations, RolloutObjects
from ..phase import rollout_phase
from ..rs_roles import DEFAULT_GRACE_SECONDS, Role, replica_set_roles

CRITICAL = "critical"
WARNING = "warning"
INFO = "info"
SEVERITY_ORDER = {CRITICAL: 0, WARNING: 1, INFO: 2}

HASH_LABEL = "rollouts-pod-template-hash"
REVISION_ANNOTATION = "rollout.argoproj.io/revision"
SCALE_DOWN_DEADLINE = "scale-down-deadline"
UNWEDGE = "unwedge"


@dataclass(frozen=True)
class Thresholds:
    """Every tunable of the detectors, in seconds unless named otherwise."""

    stuck_at_step_zero_seconds: float = 300.0  # settings.STUCK_AT_STEP_ZERO_SECONDS
    rerender_window_seconds: float = 120.0  # two renders closer than this are one release rendered twice
    weight_fight_window_seconds: float = 300.0
    weight_fight_min_changes: int = 3
    # The routing object may lag the rollout's step by a reconcile; longer than this is drift.
    router_drift_seconds: float = 60.0
    # A passed scale-down deadline the controller has not acted on yet; the same grace the view's roles use.
    scale_down_grace_seconds: float = DEFAULT_GRACE_SECONDS
    stale_threshold_factor: float = 3.0
    stale_min_runs: int = 5  # successful runs before their measurements count as a baseline
    stale_min_measurements: int = 10
    provider_error_streak: int = 3  # consecutive errored measurements in a running analysis


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    cluster: str
    namespace: str
    rollout: str
    title: str
    explanation: str
    evidence: Mapping[str, Any]
    runbook: tuple[str, ...]
    action: str | None
    since: datetime
    subject: str = ""  # what the finding is about beyond the rollout (a ReplicaSet, an AnalysisRun)
    # Everything ``action`` needs (e.g. {"replicaSet": …}), so the finding's button asks nothing more.
    action_params: Mapping[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.code, self.subject

    def to_dict(self) -> dict[str, Any]:
        """The Finding JSON of DESIGN §3."""
        return {
            "code": self.code,
            "severity": self.severity,
            "cluster": self.cluster,
            "namespace": self.namespace,
            "rollout": self.rollout,
            "title": self.title,
            "explanation": self.explanation,
            "evidence": dict(self.evidence),
            "runbook": list(self.runbook),
            "action": self.action,
            "actionParams": dict(self.action_params) if self.action_params is not None else None,
            "since": rfc3339(self.since),
            "subject": self.subject or None,  # with the code, what identifies the finding over time
        }


@dataclass(frozen=True)
class ReplicaSetFacts:
    name: str
    hash: str
    revision: int
    replicas: int  # spec.replicas: what the controller wants, not what is running yet
    available: int
    created: datetime | None
    deadline: datetime | None
    template: Mapping[str, Any]


@dataclass(frozen=True)
class Context:
    cluster: str
    objects: RolloutObjects
    history: Observations
    now: datetime
    thresholds: Thresholds
    applications: Sequence[Mapping[str, Any]]
    pipelines: Mapping[str, str]
    given_roles: Mapping[str, Role] | None = field(default=None)  # the build's, when it has them

    @cached_property
    def rollout(self) -> Mapping[str, Any]:
        return self.objects.rollout

    @cached_property
    def namespace(self) -> str:
        return dig_str(self.rollout, "metadata", "namespace")

    @cached_property
    def name(self) -> str:
        return dig_str(self.rollout, "metadata", "name")

    @cached_property
    def uid(self) -> str:
        return dig_str(self.rollout, "metadata", "uid")

    @cached_property
    def status(self) -> Mapping[str, Any]:
        return dig_map(self.rollout, "status")

    @cached_property
    def phase(self) -> tuple[str, str]:
        return rollout_phase(self.rollout)

    @cached_property
    def current_hash(self) -> str:
        return as_str(self.status.get("currentPodHash"))

    @cached_property
    def stable_hash(self) -> str:
        return as_str(self.status.get("stableRS"))

    @cached_property
    def step_index(self) -> int | None:
        return opt_int(self.status.get("currentStepIndex"))

    @cached_property
    def aborted(self) -> bool:
        return as_bool(self.status.get("abort"))

    @cached_property
    def canary(self) -> Mapping[str, Any] | None:
        canary = dig(self.rollout, "spec", "strategy", "canary")
        return canary if isinstance(canary, Mapping) else None

    @cached_property
    def steps(self) -> list[Mapping[str, Any]]:
        return maps(self.canary.get("steps")) if self.canary is not None else []

    @cached_property
    def fully_promoted(self) -> bool:
        return bool(self.current_hash) and self.current_hash == self.stable_hash

    @cached_property
    def replica_sets(self) -> list[ReplicaSetFacts]:
        """The ReplicaSets this rollout controls, newest revision first."""
        found = []
        for rs in self.objects.replicasets:
            if self.uid not in owner_uids(rs):
                continue
            annotations = str_map(dig(rs, "metadata", "annotations"))
            replicas = opt_int(dig(rs, "spec", "replicas"))
            found.append(
                ReplicaSetFacts(
                    name=dig_str(rs, "metadata", "name"),
                    hash=str_map(dig(rs, "metadata", "labels")).get(HASH_LABEL, ""),
                    revision=atoi(annotations.get(REVISION_ANNOTATION)) or 0,
                    replicas=1 if replicas is None else replicas,
                    available=opt_int(dig(rs, "status", "availableReplicas")) or 0,
                    created=parse_time(dig(rs, "metadata", "creationTimestamp")),
                    deadline=parse_time(annotations.get(SCALE_DOWN_DEADLINE)),
                    template=dig_map(rs, "spec", "template"),
                )
            )
        found.sort(key=lambda rs: (-rs.revision, rs.name))
        return found

    @cached_property
    def roles(self) -> Mapping[str, Role]:
        """The role of each of the rollout's ReplicaSets by name: the one answer the view shows."""
        if self.given_roles is not None:
            return self.given_roles
        return replica_set_roles(
            self.rollout, self.objects.replicasets, self.now, self.thresholds.scale_down_grace_seconds
        )

    def replica_set(self, pod_hash: str) -> ReplicaSetFacts | None:
        return next((rs for rs in self.replica_sets if pod_hash and rs.hash == pod_hash), None)

    @cached_property
    def current_rs(self) -> ReplicaSetFacts | None:
        return self.replica_set(self.current_hash)

    @cached_property
    def analysis_runs(self) -> list[Mapping[str, Any]]:
        return [run for run in self.objects.analysisruns if self.uid in owner_uids(run)]

    @cached_property
    def selector(self) -> str:
        labels = str_map(dig(self.rollout, "spec", "selector", "matchLabels"))
        return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or f"app={self.name}"

    @cached_property
    def runbook(self) -> Runbook:
        return Runbook(self.namespace, self.name, self.selector)

    @cached_property
    def managing_applications(self) -> list[Mapping[str, Any]]:
        """The Argo CD Applications that list this Rollout among their resources (or track it by label)."""
        instance = str_map(dig(self.rollout, "metadata", "labels")).get("app.kubernetes.io/instance")
        found = []
        for app in self.applications:
            resources = maps(dig(app, "status", "resources"))
            listed = any(
                r.get("kind") == "Rollout"
                and r.get("name") == self.name
                and r.get("namespace") == self.namespace
                for r in resources
            )
            if listed or (not resources and instance and dig_str(app, "metadata", "name") == instance):
                found.append(app)
        return found

    def finding(
        self,
        code: str,
        severity: str,
        title: str,
        explanation: str,
        evidence: Mapping[str, Any],
        runbook: Sequence[str],
        since: datetime,
        *,
        action: str | None = None,
        action_params: Mapping[str, Any] | None = None,
        subject: str = "",
    ) -> Finding:
        return Finding(
            code=code,
            severity=severity,
            cluster=self.cluster,
            namespace=self.namespace,
            rollout=self.name,
            title=title,
            explanation=explanation,
            evidence=evidence,
            runbook=tuple(runbook),
            action=action,
            action_params=action_params if action is not None else None,
            since=since.astimezone(UTC),
            subject=subject,
        )


@dataclass(frozen=True)
class Runbook:
    """The seeds' commands with the real namespace, rollout and ReplicaSet names filled in."""

    namespace: str
    rollout: str
    selector: str

    def _ns(self) -> str:
        return f"kubectl -n {shlex.quote(self.namespace)}"

    def _ro(self) -> str:
        return shlex.quote(self.rollout)

    def watch_step_and_hash(self) -> str:
        return (
            f"{self._ns()} get rollout {self._ro()} -w "
            "-o custom-columns=PHASE:.status.phase,STEP:.status.currentStepIndex,HASH:.status.currentPodHash"
        )

    def diff_templates(self) -> str:
        return (
            f"{self._ns()} get rs -l {shlex.quote(self.selector)} -o json | jq -r '.items[] | "
            '.metadata.name + " " + (.spec.template.metadata.annotations|tostring)\''
        )

    def phase_and_message(self) -> str:
        return (
            f"{self._ns()} get rollout {self._ro()} "
            "-o jsonpath='{.status.phase}{\"\\t\"}{.status.message}'"
        )

    def phase_and_step(self) -> str:
        return (
            f"{self._ns()} get rollout {self._ro()} "
            "-o jsonpath='{.status.phase}{\"\\t\"}{.status.currentStepIndex}'"
        )

    def scale_to_zero(self, replica_set: str) -> str:
        return f"{self._ns()} scale rs {shlex.quote(replica_set)} --replicas=0"

    def get_rollout(self) -> str:
        return f"kubectl argo rollouts -n {shlex.quote(self.namespace)} get rollout {self._ro()}"

    def argo(self, verb: str) -> str:
        return f"kubectl argo rollouts -n {shlex.quote(self.namespace)} {verb} {self._ro()}"

    def analysis_run(self, run: str) -> str:
        return f"{self._ns()} get analysisrun {shlex.quote(run)} -o yaml"

    def pods_of(self, pod_hash: str) -> str:
        return f"{self._ns()} get pods -l {HASH_LABEL}={shlex.quote(pod_hash)} -o wide"

    def describe_rs(self, replica_set: str) -> str:
        return f"{self._ns()} describe rs {shlex.quote(replica_set)}"

    def managed_fields(self) -> str:
        return (
            f"{self._ns()} get rollout {self._ro()} --show-managed-fields "
            '-o jsonpath=\'{range .metadata.managedFields[*]}{.manager}{"\\t"}{.operation}{"\\t"}'
            '{.time}{"\\n"}{end}\''
        )


def earliest(*moments: datetime | None) -> datetime | None:
    present = [m for m in moments if m is not None]
    return min(present) if present else None


def seconds_between(later: datetime, earlier: datetime) -> float:
    return (later - earlier).total_seconds()


def condition(rollout: Mapping[str, Any], reason: str) -> Mapping[str, Any] | None:
    """The first status condition with this reason (``CalculateRolloutPhase`` ignores the status)."""
    return next((c for c in maps(dig(rollout, "status", "conditions")) if c.get("reason") == reason), None)
