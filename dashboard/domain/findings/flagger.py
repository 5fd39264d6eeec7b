"""Findings for a Flagger Canary, from its view (the Canary has no ReplicaSets or AnalysisRuns of ours).

``canary_findings(view)``: a Failed canary raises ``analysis-failed`` (critical) with the failed checks as
they were before Flagger's rollback reset ``status.failedChecks`` to 0 (the view's ``failed-checks`` note
holds the truth), or, when no check failed, ``progress-deadline-exceeded`` (the promotion never became
ready). Non-goals: Argo Rollouts' detectors (``dashboard.domain.findings``), I/O.
"""

from __future__ import annotations

import shlex
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from .analysis import ANALYSIS_FAILED
from .base import CRITICAL, Finding
from .progress import CODE as PROGRESS_DEADLINE_EXCEEDED

if TYPE_CHECKING:
    from ..flagger import CanaryView


def failed_checks(view: CanaryView) -> int:
    """How many checks failed: the note's corrected value on a Failed canary, else the status."""
    note = next((n for n in view.notes if n.field == "status.failedChecks"), None)
    if note is not None and isinstance(note.value, int):
        return note.value
    return view.failed_checks


def canary_findings(view: CanaryView, now: datetime) -> tuple[Finding, ...]:
    if view.phase != "Failed":
        return ()
    failed = failed_checks(view)
    since = (view.phase_since or view.updated_at or now).astimezone(UTC)
    ns, name = shlex.quote(view.namespace), shlex.quote(view.name)
    runbook = (
        f"kubectl -n {ns} describe canary {name}",
        f"kubectl -n {ns} get events --field-selector involvedObject.name={name} --sort-by=.lastTimestamp",
    )
    bad = [c.name for c in view.checks if c.last_result == "Failed"]
    evidence = {
        "phase": view.phase,
        "failedChecks": failed,
        "statusFailedChecks": view.failed_checks,
        "threshold": view.threshold,
        "failedCheckNames": bad,
        "message": view.message,
    }
    if failed:
        return (
            Finding(
                code=ANALYSIS_FAILED,
                severity=CRITICAL,
                cluster=view.cluster,
                namespace=view.namespace,
                rollout=view.name,
                title=f"Canary analysis failed: rolled back after {failed} failed checks",
                explanation=(
                    f"Flagger counted {failed} failed checks (threshold {view.threshold})"
                    + (f" — {', '.join(bad)}" if bad else "")
                    + " and rolled the canary back: the primary serves all traffic. Its status now reads "
                    f"failedChecks {view.failed_checks}, because the rollback writes a fresh status. Fix "
                    "the release (or the check) and push a new revision; re-running the same one fails again."
                ),
                evidence=evidence,
                runbook=runbook,
                action=None,
                since=since,
            ),
        )
    return (
        Finding(
            code=PROGRESS_DEADLINE_EXCEEDED,
            severity=CRITICAL,
            cluster=view.cluster,
            namespace=view.namespace,
            rollout=view.name,
            title="Canary failed without a failed check: the promotion did not become ready",
            explanation=(
                f"Flagger marked the canary Failed ({view.message or 'no message'}) with no failed check: "
                "the canary or the primary did not become ready within progressDeadlineSeconds. The primary "
                "keeps serving; look at the workload's pods before pushing again."
            ),
            evidence=evidence,
            runbook=runbook,
            action=None,
            since=since,
        ),
    )
