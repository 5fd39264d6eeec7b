"""Requests for approval and the votes on them: the guard rails' state changes, each audited.

``request_create`` opens a request for a guarded action (what the requester saw, the reason, the rule's
terms); ``request_vote`` records an approval or a denial under a row lock on the request, so of any
number of approvals landing together exactly one moves the request to ``approved`` and runs the action —
as the requester, through ``dashboard.actions.service.rollout_act``, with the approvers in the audit.
An approval is bound to what its approver saw (pod-template hash and step): when that, or the live
rollout, differs from what the requester saw, the rollout has moved on and the request is void.
Requests past their expiry are closed as ``expired`` when next touched (``close_due``). Every move is an
audit row, is announced to every open page of the rollout and notifies (with a link to the request).

What ``rollout_act`` asks before accepting an action is ``dashboard.guardrails.admission``.

Non-goals: HTTP (``dashboard.guardrails.views``), the rules' syntax (``rules``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from asgiref.sync import async_to_sync
from django.db import IntegrityError, transaction
from django.utils import timezone

from dashboard.access.policy import ACTIONS, GET
from dashboard.access.rbac import access_for
from dashboard.actions.models import AuditEntry, Outcome
from dashboard.guardrails.admission import approvals_words, freeze_refusal, guard_of, status_of
from dashboard.guardrails.models import Approval, ApprovalRequest, State, Vote
from dashboard.guardrails.rules import Approval as Terms
from dashboard.guardrails.rules import may_approve

log = logging.getLogger(__name__)
REQUEST_CHANGED = "guard.request"
BOUND = ("podHash", "stepIndex", "checksum")  # what an approval is bound to (checksum: a Canary's)
MAX_REASON = 2000
MAX_COMMENT = 2000


class GuardRefusal(Exception):
    """A guard-rail call turned away: ``status`` (400/403/404/409/422), ``code`` and the words."""

    def __init__(self, status: int, code: str, message: str, field: str = "") -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field


# --- requests ---------------------------------------------------------------------------------------------


def _user_name(user: Any) -> str:
    return str(getattr(user, "username", "") or "")


def _audit(request: ApprovalRequest, actor: str, outcome: str, detail: str, **guard: Any) -> AuditEntry:
    entry = AuditEntry(
        actor=actor,
        groups=[],  # a vote's row names its voter; the action's own rows carry the requester's groups
        action=request.action,
        cluster=request.cluster,
        namespace=request.namespace,
        rollout=request.rollout,
        params=request.params,
        seen=request.seen,
        outcome=outcome,
        detail=detail,
        reason=request.reason if outcome == Outcome.REQUESTED else guard.pop("comment", ""),
        guard={"request": request.pk, **guard},
    )
    entry.save()
    return entry


def request_create(
    user: Any,
    action: str,
    key: str,
    *,
    view: Mapping[str, Any] | None,
    seen: Any,
    params: Any,
    reason: Any,
    break_glass: bool = False,
) -> ApprovalRequest:
    """Open a request for ``action`` on ``key``; ``GuardRefusal`` says why not."""
    from dashboard.actions.service import _clean_params, _clean_seen, split_key

    try:
        cluster, namespace, name = split_key(key)
    except ValueError as error:
        raise GuardRefusal(400, "bad-request", str(error), "rollout") from None
    if action not in ACTIONS:
        raise GuardRefusal(
            400, "bad-request", f"unknown action {action!r} (known: {', '.join(ACTIONS)})", "action"
        )
    access = access_for(user)
    if not access.can(GET, key):
        raise GuardRefusal(404, "not-found", f"no rollout {key}")
    if not access.can(action, key):
        raise GuardRefusal(403, "forbidden", f"not permitted to {action} {key}")
    if not isinstance(reason, str) or len(reason) > MAX_REASON:
        raise GuardRefusal(
            400, "bad-request", f"reason must be text of at most {MAX_REASON} characters", "reason"
        )
    now = timezone.now()
    guard = guard_of(action, key, view, now)
    if guard.approval is None:
        raise GuardRefusal(
            422, "no-approval-needed", f"{action} on {key} needs no approval: run it directly", "action"
        )
    canary = (view or {}).get("controller") == "flagger"
    if canary:  # a Flagger Canary: the approval is bound to the revision its gate is waiting for
        if action != "promote":
            raise GuardRefusal(
                422, "no-approval-needed", f"only a Canary's promote is requested, not {action}", "action"
            )
        checksum = seen.get("checksum") if isinstance(seen, Mapping) else None
        if checksum is None:  # the Canary page: the revision its confirm gate is waiting for now
            checksum = _waiting_checksum(cluster, namespace, name)
        if not isinstance(checksum, str) or not checksum:
            raise GuardRefusal(
                400,
                "bad-request",
                "say what you saw: seen.checksum (the revision the gate waits for)",
                "seen",
            )
        cleaned_seen: dict[str, Any] | str = {"checksum": checksum}
    else:
        cleaned_seen = _clean_seen(action, seen)
    if isinstance(cleaned_seen, str):
        raise GuardRefusal(400, "bad-request", cleaned_seen, "seen")
    cleaned_params = {"kind": "Canary"} if canary else _clean_params(action, params)
    if isinstance(cleaned_params, str):
        raise GuardRefusal(400, "bad-request", cleaned_params, "params")
    moved = _moved(cleaned_seen, view)
    if moved:
        raise GuardRefusal(409, "stale", f"the rollout has moved on since you looked ({moved}); look again")
    problem = guard.reason_problem(reason)
    if problem:
        raise GuardRefusal(422, "reason-required", problem, "reason")
    refusal, broken = freeze_refusal(access, guard, key, reason=reason, break_glass=break_glass, now=now)
    if refusal:
        _refused(user, action, key, refusal, cleaned_seen, reason)
        status, code = status_of(refusal)
        raise GuardRefusal(status, code, refusal, "breakGlass" if status == 403 else "")
    terms = guard.approval
    try:
        with transaction.atomic():
            request = ApprovalRequest.objects.create(
                requester=_user_name(user),
                action=action,
                cluster=cluster,
                namespace=namespace,
                rollout=name,
                seen=cleaned_seen,
                params=cleaned_params,
                reason=reason.strip(),
                break_glass=broken,
                required=terms.count,
                approvers=list(terms.approvers),
                expires_at=now + terms.expires,
            )
            entry = _audit(
                request,
                request.requester,
                Outcome.REQUESTED,
                f"asks for {approvals_words(terms.count)} from {', '.join(terms.approvers)} to {action}; "
                f"expires {request.expires_at:%Y-%m-%d %H:%M} UTC",
                required=terms.count,
                approversFrom=list(terms.approvers),
                breakGlass=broken,
            )
    except IntegrityError:
        open_one = ApprovalRequest.objects.filter(
            cluster=cluster, namespace=namespace, rollout=name, action=action, state=State.PENDING
        ).first()
        who = f" by {open_one.requester} (#{open_one.pk})" if open_one else ""
        raise GuardRefusal(409, "already-requested", f"{action} on {key} is already requested{who}") from None
    _after(request, entry, severity="critical" if broken else "info")
    return request


def _waiting_checksum(cluster: str, namespace: str, name: str) -> str | None:
    from dashboard.flagger_gates.services import _latest

    call = _latest((cluster, namespace, name), "confirm-rollout", "confirm-promotion")
    return call.checksum if call is not None and call.answer > 202 else None


def _refused(user: Any, action: str, key: str, detail: str, seen: Any, reason: str) -> None:
    from dashboard.actions.service import _row

    _row(user, action, key, outcome=Outcome.DENIED, detail=detail, seen=seen, reason=reason)


def _moved(seen: Mapping[str, Any], view: Mapping[str, Any] | None) -> str:
    """What differs between what was seen and the live rollout, in words ("" when nothing does)."""
    if not view:
        return ""
    if view.get("controller") == "flagger":
        return ""  # a Canary's revision is checked at its gate (the checksum Flagger sends)
    live = {"podHash": view.get("currentPodHash") or None, "stepIndex": view.get("currentStepIndex")}
    return _differs(seen, live)


def _differs(seen: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    words = {"podHash": "pod hash", "stepIndex": "step", "checksum": "revision"}
    parts = [
        f"{words[k]} {seen.get(k)!r} → {other.get(k)!r}"
        for k in BOUND
        if k in seen and k in other and seen.get(k) != other.get(k)
    ]
    return ", ".join(parts)


def _close(request: ApprovalRequest, state: str, detail: str, actor: str, outcome: str) -> AuditEntry:
    request.state, request.detail, request.closed_at = state, detail, timezone.now()
    request.save(update_fields=["state", "detail", "closed_at"])
    return _audit(request, actor, outcome, detail)


def request_vote(
    user: Any,
    request_id: int,
    vote: str,
    *,
    seen: Any,
    comment: Any = "",
    view: Mapping[str, Any] | None = None,
) -> ApprovalRequest:
    """Approve or deny request ``request_id`` as ``user``; the last approval runs the action."""
    if vote not in (Vote.APPROVE, Vote.DENY):
        raise GuardRefusal(400, "bad-request", f"vote must be approve or deny, got {vote!r}", "vote")
    if not isinstance(comment, str) or len(comment) > MAX_COMMENT:
        raise GuardRefusal(
            400, "bad-request", f"comment must be text of at most {MAX_COMMENT} characters", "comment"
        )
    if not isinstance(seen, Mapping):
        raise GuardRefusal(
            400, "bad-request", "say what you saw: a 'seen' object (an approval is bound to it)", "seen"
        )
    name = _user_name(user)
    run = False
    with transaction.atomic():
        request = ApprovalRequest.objects.select_for_update().filter(pk=request_id).first()
        access = access_for(user)
        if request is None or not access.can(GET, request.key):
            raise GuardRefusal(404, "not-found", f"no approval request #{request_id}")
        if request.state != State.PENDING:
            raise GuardRefusal(
                409, request.state, f"request #{request.pk} is {request.state}: {request.detail}"
            )
        now = timezone.now()
        entry: AuditEntry | None = None
        if now >= request.expires_at:
            entry = _close(
                request, State.EXPIRED, _expired_words(request), name or "(system)", Outcome.EXPIRED
            )
        elif name == request.requester and vote == Vote.APPROVE:
            raise GuardRefusal(403, "own-request", "you asked for this; someone else must approve it")
        elif name != request.requester and not (
            access.everything or may_approve(_terms(request), access.holds(request.key))
        ):
            raise GuardRefusal(
                403,
                "not-an-approver",
                f"only {', '.join(request.approvers)} may approve or deny this request",
            )
        elif any(k not in seen for k in BOUND if k in request.seen):
            needed = " and ".join(f"seen.{k}" for k in BOUND if k in request.seen)
            raise GuardRefusal(
                400, "bad-request", f"say what you saw: {needed} (an approval is bound to them)", "seen"
            )
        elif request.approvals.filter(approver=name).exists():
            raise GuardRefusal(409, "already-voted", f"you already voted on request #{request.pk}")
        else:
            moved = _differs(request.seen, {k: seen.get(k) for k in BOUND}) or _moved(request.seen, view)
            if moved:
                entry = _close(
                    request,
                    State.VOID,
                    f"void: the rollout moved on since it was requested ({moved})",
                    name,
                    Outcome.VOIDED,
                )
            else:
                Approval.objects.create(request=request, approver=name, vote=vote, comment=comment.strip())
                if vote == Vote.DENY:
                    words = "withdrawn by the requester" if name == request.requester else f"denied by {name}"
                    entry = _close(
                        request,
                        State.DENIED,
                        words + (f": {comment.strip()}" if comment else ""),
                        name,
                        Outcome.REJECTED,
                    )
                else:
                    approvals = request.approvals.filter(vote=Vote.APPROVE).count()
                    entry = _audit(
                        request,
                        name,
                        Outcome.APPROVED,
                        f"approval {approvals} of {request.required}",
                        comment=comment.strip(),
                    )
                    if approvals >= request.required:
                        request.state, request.closed_at = State.APPROVED, now
                        request.detail = f"approved by {', '.join(_approvers(request))}; running"
                        request.save(update_fields=["state", "detail", "closed_at"])
                        run = True
    if entry is not None:
        _after(request, entry)
    if entry is not None and entry.outcome == Outcome.EXPIRED:
        raise GuardRefusal(409, "expired", request.detail)
    if entry is not None and entry.outcome == Outcome.VOIDED:
        raise GuardRefusal(409, "void", request.detail)
    if run:
        _run(request, view)
    return request


def _terms(request: ApprovalRequest) -> Terms:
    return Terms(request.required, tuple(request.approvers), request.expires_at - request.created_at)


def _approvers(request: ApprovalRequest) -> list[str]:
    return list(request.approvals.filter(vote=Vote.APPROVE).values_list("approver", flat=True))


def _expired_words(request: ApprovalRequest) -> str:
    got = request.approvals.filter(vote=Vote.APPROVE).count()
    return f"expired at {request.expires_at:%Y-%m-%d %H:%M} UTC with {got} of {request.required} approvals"


def _run(request: ApprovalRequest, view: Mapping[str, Any] | None) -> None:
    """The last approval landed: run the action as the requester (its own audit rows follow)."""
    from django.contrib.auth import get_user_model

    from dashboard.actions.service import rollout_act

    requester = get_user_model().objects.filter(username=request.requester, is_active=True).first()
    if requester is None:
        entry = _audit(request, "(system)", Outcome.VOIDED, f"void: {request.requester} can no longer act")
        ApprovalRequest.objects.filter(pk=request.pk).update(state=State.VOID, detail=entry.detail)
        _after(request, entry)
        return
    if request.params.get("kind") == "Canary":
        from dashboard.flagger_gates.services import canary_act

        result = canary_act(
            requester, "promote", request.cluster, request.namespace, request.rollout, request=request
        )
        request.attempt_id = result.audit_id
        request.detail = (
            f"approved by {', '.join(_approvers(request))}; promote {result.outcome}: {result.detail}"
        )
        request.save(update_fields=["attempt", "detail"])
        _announce(request)
        return
    attempt, _ = rollout_act(
        requester,
        request.action,
        request.key,
        seen=request.seen,
        params=request.params,
        idempotency_key=f"approval-request-{request.pk}",
        reason=request.reason,
        break_glass=bool(request.break_glass),
        request=request,
        view=view,
    )
    request.attempt = attempt
    final = attempt.final()
    words = (
        f"approved by {', '.join(_approvers(request))}; {request.action} {final.outcome if final else 'sent'}"
    )
    request.detail = words + (f": {final.detail}" if final is not None and final.detail else "")
    request.save(update_fields=["attempt", "detail"])
    _announce(request)


def close_due(key: str | None = None, view: Mapping[str, Any] | None = None) -> int:
    """Close the pending requests (of ``key``, or all) that expired or whose rollout moved on."""
    now = timezone.now()
    rows = ApprovalRequest.objects.filter(state=State.PENDING)
    if key is not None:
        cluster, namespace, name = key.split("/")
        rows = rows.filter(cluster=cluster, namespace=namespace, rollout=name)
    closed = 0
    for candidate in list(rows):
        entry = None
        with transaction.atomic():
            request = ApprovalRequest.objects.select_for_update().get(pk=candidate.pk)
            if request.state != State.PENDING:
                continue
            moved = _moved(request.seen, view) if key is not None else ""
            if now >= request.expires_at:
                entry = _close(request, State.EXPIRED, _expired_words(request), "(system)", Outcome.EXPIRED)
            elif moved:
                entry = _close(
                    request,
                    State.VOID,
                    f"void: the rollout moved on since it was requested ({moved})",
                    "(system)",
                    Outcome.VOIDED,
                )
        if entry is not None:
            closed += 1
            _after(request, entry)
    return closed


# --- what pages and the API show ----------------------------------------------------------------------


def request_json(request: ApprovalRequest, user: Any = None) -> dict[str, Any]:
    votes = list(request.approvals.all())
    document: dict[str, Any] = {
        "id": request.pk,
        "key": request.key,
        "action": request.action,
        "requester": request.requester,
        "reason": request.reason,
        "breakGlass": request.break_glass,
        "seen": request.seen,
        "params": request.params,
        "required": request.required,
        "approvers": list(request.approvers),
        "approvals": [
            {"approver": v.approver, "at": v.at.isoformat(), "comment": v.comment}
            for v in votes
            if v.vote == Vote.APPROVE
        ],
        "denials": [
            {"approver": v.approver, "at": v.at.isoformat(), "comment": v.comment}
            for v in votes
            if v.vote == Vote.DENY
        ],
        "createdAt": request.created_at.isoformat(),
        "expiresAt": request.expires_at.isoformat(),
        "state": request.state,
        "detail": request.detail,
        "attempt": request.attempt_id,
    }
    if user is not None:
        name = _user_name(user)
        access = access_for(user)
        pending = request.state == State.PENDING
        eligible = access.everything or may_approve(_terms(request), access.holds(request.key))
        voted = any(v.approver == name for v in votes)
        document["mayApprove"] = pending and eligible and name != request.requester and not voted
        document["mayDeny"] = pending and not voted and (eligible or name == request.requester)
        document["whyNot"] = (
            ""
            if document["mayApprove"]
            else "you asked for this; someone else must approve it"
            if name == request.requester
            else "you already voted"
            if voted
            else f"only {', '.join(request.approvers)} may approve"
            if pending
            else f"this request is {request.state}"
        )
    return document


def requests_for(key: str, *, open_only: bool = False, limit: int = 20) -> list[ApprovalRequest]:
    cluster, namespace, name = key.split("/")
    rows = ApprovalRequest.objects.filter(cluster=cluster, namespace=namespace, rollout=name)
    if open_only:
        rows = rows.filter(state=State.PENDING)
    return list(rows.prefetch_related("approvals")[:limit])


def awaiting_words() -> dict[str, str]:
    """The fleet's "awaiting approval (1 of 2)" per rollout with an open, unexpired request."""
    from django.db.models import Count, Q

    rows = (
        ApprovalRequest.objects.filter(state=State.PENDING, expires_at__gt=timezone.now())
        .annotate(got=Count("approvals", filter=Q(approvals__vote=Vote.APPROVE)))
        .values_list("cluster", "namespace", "rollout", "action", "got", "required")
    )
    found: dict[str, str] = {}
    for cluster, namespace, name, action, got, required in rows:
        words = f"awaiting approval to {action} ({got} of {required})"
        key = f"{cluster}/{namespace}/{name}"
        found[key] = f"{found[key]}; {words}" if key in found else words
    return found


# --- side effects after a move --------------------------------------------------------------------------


def _after(request: ApprovalRequest, entry: AuditEntry, severity: str = "info") -> None:
    _announce(request)
    _notify(request, entry, severity)


def _announce(request: ApprovalRequest) -> None:
    """A doorbell to every open page of the rollout: they fetch the requests again (per user)."""
    try:
        from channels.layers import get_channel_layer

        from dashboard.actions.live import actions_group

        layer = get_channel_layer()
        if layer is not None:
            message = {"type": REQUEST_CHANGED, "request": request.pk, "state": request.state}
            async_to_sync(layer.group_send)(actions_group(request.key), message)
    except Exception:  # the row is written; a missed live notice must not fail the vote
        log.warning("could not announce request #%s", request.pk, exc_info=True)


def _notify(request: ApprovalRequest, entry: AuditEntry, severity: str) -> None:
    from dashboard.notify.service import notify_event

    title = f"{entry.actor} {entry.outcome} {request.action} (request #{request.pk})"
    if request.break_glass and entry.outcome == Outcome.REQUESTED:
        title = f"{entry.actor} broke the glass of “{request.break_glass}”: {title}"
    notify_event(
        {
            "type": f"action.{entry.outcome}",
            "at": entry.at.isoformat(),
            "cluster": request.cluster,
            "namespace": request.namespace,
            "rollout": request.rollout,
            "severity": severity,
            "title": (title + (f" — {entry.detail}" if entry.detail else ""))[:500],
            "dedupe": f"action:{entry.pk}",
            "detail": {
                "action": request.action,
                "actor": entry.actor,
                "outcome": entry.outcome,
                "request": request.pk,
                "reason": request.reason,
                "params": request.params,
            },
        }
    )
