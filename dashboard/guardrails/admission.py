"""The action service's question to the guard rails: may this action be accepted now?

``admit`` answers from ``rules.guard_for`` (the same answer the page's buttons show): the freeze (and a
broken glass), the reason, the approvals. It sits below both the action service and the request flow
(``dashboard.guardrails.service``), which runs an approved action through the action service.

Non-goals: requests and votes (``service``), the rules' syntax (``rules``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from dashboard.access.policy import BREAK_GLASS
from dashboard.access.rbac import Access
from dashboard.actions.models import AuditEntry
from dashboard.guardrails.loader import current_rules
from dashboard.guardrails.models import ApprovalRequest, Vote
from dashboard.guardrails.rules import Guard, guard_for


def guard_of(action: str, key: str, view: Mapping[str, Any] | None, now: datetime | None = None) -> Guard:
    labels = (view or {}).get("labels") or {}
    return guard_for(current_rules(), action, key, labels, now or timezone.now())


@dataclass(frozen=True)
class Admission:
    refusal: str = ""  # the audit row's detail when turned away ("" = go ahead)
    guard: Mapping[str, Any] | None = None  # what the accepted row records
    break_glass: str = ""  # the freeze broken, to notify at once


def admit(
    access: Access,
    guard: Guard,
    key: str,
    *,
    reason: str,
    break_glass: bool,
    request: ApprovalRequest | None,
    now: datetime,
) -> Admission:
    """Whether an action may be accepted now. The detail's first words decide the HTTP status
    (``dashboard.web.actions_api``): ``frozen:`` 409, ``needs approval:`` 409, ``reason required:`` 422,
    ``not permitted`` 403."""
    recorded: dict[str, Any] = {}
    refusal, broken = freeze_refusal(access, guard, key, reason=reason, break_glass=break_glass, now=now)
    if refusal:
        return Admission(refusal)
    if broken:
        recorded["breakGlass"] = broken
    if request is None:
        problem = guard.reason_problem(reason)
        if problem:
            return Admission(f"reason required: {problem}")
        if guard.approval is not None:
            return Admission(
                f"needs approval: {guard.action} on {key} needs {approvals_words(guard.approval.count)} from "
                f"{', '.join(guard.approval.approvers)}; request it (POST /api/v1/requests)"
            )
    else:
        recorded["request"] = request.pk
        recorded["approvers"] = list(
            request.approvals.filter(vote=Vote.APPROVE).values_list("approver", flat=True)
        )
    return Admission("", recorded, broken)


def freeze_refusal(
    access: Access, guard: Guard, key: str, *, reason: str, break_glass: bool, now: datetime
) -> tuple[str, str]:
    """(refusal, "") while a freeze stands in the way; ("", the freeze's name) when the glass is broken
    (the permission and a reason); ("", "") when nothing is frozen."""
    if guard.freeze is None:
        return "", ""
    until = guard.freeze.until_text(now)
    if not break_glass:
        offer = " — you may break glass with a reason" if access.can(BREAK_GLASS, key) else ""
        return (
            f"frozen: {guard.action} is frozen by “{guard.freeze.name}” until {until}; abort and pause "
            f"are never frozen{offer}",
            "",
        )
    if not access.can(BREAK_GLASS, key):
        return f"not permitted to break glass on {key} (“{guard.freeze.name}” until {until})", ""
    if not reason.strip():
        return f"reason required: breaking the glass of “{guard.freeze.name}” needs a reason", ""
    return "", guard.freeze.name


def approvals_words(count: int) -> str:
    return "1 approval" if count == 1 else f"{count} approvals"


def status_of(detail: str) -> tuple[int, str]:
    if detail.startswith("frozen"):
        return 409, "frozen"
    if detail.startswith("not permitted"):
        return 403, "forbidden"
    if detail.startswith("reason required"):
        return 422, "reason-required"
    if detail.startswith("needs approval"):
        return 409, "approval-required"
    return 400, "bad-request"


def notify_break_glass(entry: AuditEntry, freeze: str) -> None:
    """A glass broken on a direct action: notified at once, as critical, with the reason."""
    from dashboard.notify.service import notify_event

    notify_event(
        {
            "type": "action.break-glass",
            "at": entry.at.isoformat(),
            "cluster": entry.cluster,
            "namespace": entry.namespace,
            "rollout": entry.rollout,
            "severity": "critical",
            "title": f"{entry.actor} broke the glass of “{freeze}” to {entry.action}: {entry.reason}"[:500],
            "dedupe": f"break-glass:{entry.pk}",
            "detail": {
                "action": entry.action,
                "actor": entry.actor,
                "outcome": "break-glass",
                "reason": entry.reason,
                "freeze": freeze,
            },
        }
    )
