"""Where Flagger's status misleads (notes/flagger.md §0): each case a ``Note`` saying what the status says,
what is true, and where the truth came from.

``read_weights`` and ``read_iterations`` return the values the view shows and note where the status
disagrees (canaryWeight zeroed and iterations at analysis.iterations - 1 in WaitingPromotion); the other
functions only add notes: failedChecks reset by a rollback or carried over after success, config-only
revisions, the revision Waiting has not recorded, a failed promotion leaving traffic on the canary, and
lastTransitionTime being the last status write.

Non-goals: findings (``findings.flagger`` reads the corrected failed checks from the note), the phase.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..objects import opt_int, parse_time, rfc3339
from .events import CanaryEvent
from .metrics import FlaggerMetrics
from .spec import ANALYSIS_PHASES


@dataclass(frozen=True)
class Note:
    """A place where Flagger's status misleads: what it says, what is true, and where that came from."""

    code: str
    field: str
    status_value: Any
    value: Any
    source: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "field": self.field,
            "statusValue": self.status_value,
            "value": self.value,
            "source": self.source,
            "text": self.text,
        }


def _last(events: Sequence[CanaryEvent], *kinds: str) -> CanaryEvent | None:
    return next((e for e in reversed(events) if e.kind in kinds), None)


def read_weights(
    phase: str,
    strategy: str,
    raw: int | None,
    top: int,
    metrics: FlaggerMetrics | None,
    route: tuple[int, int] | None,
    routing: tuple[str, str, str] | None,
    events: Sequence[CanaryEvent],
    notes: list[Note],
) -> tuple[int | None, int | None, str | None]:
    """(setWeight, actualWeight, where the actual weight came from)."""
    set_weight = raw
    actual: int | None = None
    source: str | None = None
    if metrics is not None and metrics.canary_weight is not None:
        actual, source = metrics.canary_weight, "flagger_canary_weight"
    elif route is not None and routing is not None:
        actual, source = route[1], f"{routing[0]} {routing[2]}"
    if phase == "WaitingPromotion" and strategy == "canary":
        # setStatusPhase zeroes canaryWeight, but the router keeps sending the max weight (issue #1819).
        last_advance = _last(events, "weight")
        held = actual
        where = source
        if held is None and last_advance is not None:
            held, where = int(last_advance.fields["weight"]), f"event '{last_advance.message}'"
        if held is None:
            held, where = (
                top,
                "spec.analysis (Flagger only asks for promotion once the max weight is reached)",
            )
        set_weight = held
        if actual is None:
            actual, source = held, where
        if raw != held:
            notes.append(
                Note(
                    "weight-zero-while-waiting-promotion",
                    "status.canaryWeight",
                    raw,
                    held,
                    where or "",
                    f"status.canaryWeight reads {raw} in WaitingPromotion, but the router still sends "
                    f"{held}% to the canary (Flagger resets the status field when the phase changes; "
                    "issue #1819).",
                )
            )
    elif actual is None and raw is not None:
        actual, source = raw, "status.canaryWeight"
    return set_weight, actual, source


def read_iterations(
    phase: str, strategy: str, raw: int | None, analysis: Mapping[str, Any], notes: list[Note]
) -> int | None:
    """The iterations the view shows: the truth in WaitingPromotion, noting the status's value."""
    if raw is None:
        return None
    if phase == "WaitingPromotion":
        wanted = opt_int(analysis.get("iterations")) or 0
        truth = wanted if strategy != "canary" else 0
        if raw != truth:
            notes.append(
                Note(
                    "iterations-while-waiting-promotion",
                    "status.iterations",
                    raw,
                    truth,
                    "spec.analysis.iterations",
                    f"status.iterations reads {raw} in WaitingPromotion: Flagger writes "
                    f"analysis.iterations - 1 there ({wanted} - 1). "
                    + (
                        "The canary strategy does not count iterations at all."
                        if strategy == "canary"
                        else f"All {wanted} iterations have run; it is waiting for promotion approval."
                    ),
                )
            )
        return truth
    return raw


def failed_checks_notes(
    phase: str,
    failed: int,
    threshold: int,
    events: Sequence[CanaryEvent],
    condition: Mapping[str, str],
    notes: list[Note],
) -> None:
    """Note a failedChecks reset by the rollback (Failed) or carried over (Succeeded)."""
    if phase == "Failed":
        reached = _last(events, "rollback-threshold")
        if reached is not None:
            truth: int | None = int(reached.fields["checks"])
            source = f"event '{reached.message}'"
        else:
            since = parse_time(condition.get("lastTransitionTime"))
            halts = [
                e
                for e in events
                if e.kind
                in ("metric-failed", "metric-no-values", "pre-rollout-failed", "rollout-hook-failed")
            ]
            if since is not None:
                halts = [e for e in halts if e.last is None or e.last <= since]
            truth = sum(e.count for e in halts) if halts else None
            source = "Warning events before the failure"
        if truth is None:
            return  # no check failed that we can see (e.g. a failed promotion): nothing to correct
        notes.append(
            Note(
                "failed-checks-reset-on-failure",
                "status.failedChecks",
                failed,
                truth,
                source,
                f"status.failedChecks reads {failed} on a Failed canary: the rollback writes a fresh status."
                + (
                    f" The analysis failed after {truth} failed checks (threshold {threshold})."
                    if truth
                    else ""
                ),
            )
        )
    elif phase == "Succeeded" and failed > 0:
        notes.append(
            Note(
                "failed-checks-carried-over",
                "status.failedChecks",
                failed,
                0,
                "status.phase Succeeded",
                f"status.failedChecks reads {failed} although the canary Succeeded: the count is from "
                "the run that just finished (Flagger resets it only when the next revision starts), "
                "not a current problem.",
            )
        )


def revision_notes(
    phase: str,
    applied: str,
    promoted: str,
    tracked: Mapping[str, str],
    events: Sequence[CanaryEvent],
    notes: list[Note],
) -> None:
    """Note a config-only revision, and that Waiting has not recorded its revision yet."""
    if phase in ANALYSIS_PHASES and applied and applied == promoted:
        configs = ", ".join(sorted(tracked)) or "none tracked"
        notes.append(
            Note(
                "config-only-revision",
                "status.lastAppliedSpec",
                applied,
                "ConfigMap/Secret change",
                f"status.trackedConfigs ({configs})",
                "lastAppliedSpec equals lastPromotedSpec, yet an analysis is running: the pod template "
                "did not change, a tracked ConfigMap or Secret did. Compare trackedConfigs with the "
                "-primary copies to see which.",
            )
        )
    if phase == "Waiting":
        notes.append(
            Note(
                "waiting-revision-not-recorded",
                "status.lastAppliedSpec",
                applied,
                "the target's new pod template",
                "spec.targetRef (the target workload)",
                "In Waiting the new revision is not recorded yet: lastAppliedSpec and trackedConfigs "
                "still describe the promoted revision until the confirm-rollout gate opens. The target "
                "workload shows what is waiting.",
            )
        )


def failed_promotion_note(
    phase: str,
    raw_weight: int | None,
    condition_message: str,
    events: Sequence[CanaryEvent],
    notes: list[Note],
) -> None:
    """Note that a canary that failed during promotion keeps all traffic."""
    failed_promotion = _last(events, "promotion-failed")
    if phase == "Failed" and (raw_weight == 100 or failed_promotion is not None):
        source = f"event '{failed_promotion.message}'" if failed_promotion else "status.canaryWeight 100"
        notes.append(
            Note(
                "failed-promotion-traffic-on-canary",
                "status.conditions[Promoted].message",
                condition_message,
                "all traffic on the canary workload",
                source,
                "This Failed canary failed during promotion: the primary did not become ready, so "
                "Flagger routed all traffic to the canary workload and kept it running. "
                "The condition's 'scaled to zero' is "
                "not true here.",
            )
        )


def time_notes(
    phase: str, status: Mapping[str, Any], condition: Mapping[str, str], notes: list[Note]
) -> None:
    """Note that lastTransitionTime is the last status write, not when the phase began."""
    status_time = parse_time(status.get("lastTransitionTime"))
    since = parse_time(condition.get("lastUpdateTime")) or parse_time(condition.get("lastTransitionTime"))
    if phase in ("Failed", "WaitingPromotion") and status_time and since and status_time > since:
        notes.append(
            Note(
                "last-transition-time-is-last-write",
                "status.lastTransitionTime",
                rfc3339(status_time),
                rfc3339(since),
                "status.conditions[Promoted].lastUpdateTime",
                f"status.lastTransitionTime is the last status write, rewritten every interval while {phase} "
                f"(issue #1696); the phase began at {rfc3339(since)}.",
            )
        )
