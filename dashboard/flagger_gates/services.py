"""The gate server's decisions: answer Flagger's webhook calls, and let people approve, hold or roll back.

Flagger has no API for promote or abort; its gate webhooks (confirm-rollout, confirm-promotion,
confirm-traffic-increase, rollback) are the levers. Flagger POSTs ``{name, namespace, phase, checksum,
type, metadata}`` and treats HTTP status <= 202 as "go". ``gate_answer`` records the call (so the page can
show what each gate is waiting for and which revision it is) and answers from the decisions stored for
that exact checksum — the checksum changes with every revision, so an approval never promotes the next
one (unlike flagger-loadtester's gate, which is keyed by name only and never closes by itself).

Every webhook call must carry a gate token (``issue_token``): in the hook's ``metadata`` (``token``), which
Flagger copies into the payload, or in the URL (``?token=``). ``authenticate`` compares its digest with the
stored ones in constant time and checks the token's scope covers the payload's Canary; a call without a
valid token is refused before anything is read from or written to the database.

Defaults: confirm-rollout and confirm-promotion refuse until approved; confirm-traffic-increase lets
traffic grow unless held; rollback does nothing until an abort.

``canary_act`` is the one entry point for people: promote, pause, resume, abort, suspend. It checks the
same permission as the Rollout action of the same meaning, writes the same audit rows, and, for
suspend/resume, sends a merge patch of ``spec.suspend`` to the Canary.

Non-goals: HTTP parsing (``views``), Flagger's retries and timeouts.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from dashboard.access.rbac import access_for
from dashboard.actions.models import AuditEntry, Outcome
from dashboard.flagger_gates.models import GATES, Decision, GateCall, GateDecision, GateToken

APPROVED = (200, "Approved")
FORBIDDEN = (403, "Forbidden")
# Canary action -> the Rollout action whose permission it needs (same meaning, same policy lines).
PERMISSION = {
    "promote": "promote",
    "pause": "pause",
    "resume": "resume",
    "abort": "abort",
    "suspend": "pause",
}
ACTIONS = tuple(PERMISSION)
GROUP, VERSION, PLURAL = "flagger.app", "v1beta1", "canaries"


class GateError(ValueError):
    """A webhook request that is not Flagger's payload; the message says what is wrong."""


@dataclass(frozen=True)
class Payload:
    name: str
    namespace: str
    phase: str
    checksum: str


def parse_payload(gate: str, body: Any) -> Payload:
    """Validate Flagger's ``CanaryWebhookPayload`` for ``gate``."""
    if gate not in GATES:
        raise GateError(f"unknown gate {gate!r}; this server answers {', '.join(GATES)}")
    if not isinstance(body, Mapping):
        raise GateError("the body must be a JSON object with name, namespace, phase and checksum")
    fields = {}
    for key in ("name", "namespace"):
        value = body.get(key)
        if not isinstance(value, str) or not value:
            raise GateError(f"{key} must be a non-empty string")
        fields[key] = value[:253]
    for key in ("phase", "checksum"):
        value = body.get(key, "")
        if not isinstance(value, str):
            raise GateError(f"{key} must be a string")
        fields[key] = value[:253]
    hook_type = body.get("type")
    if hook_type not in (None, "", gate):
        raise GateError(f"this is the {gate} gate, but the payload's type is {hook_type!r}")
    return Payload(fields["name"], fields["namespace"], fields["phase"], fields["checksum"])


TOKEN_KEY = "token"  # the key of the webhook's metadata map that carries the gate token


def token_from(body: Any, query_token: str = "") -> str:
    """The gate token a call presents: the payload's ``metadata.token``, else the URL's ``token``.

    ``GateError`` when ``metadata`` is not what Flagger sends (a map of strings)."""
    metadata = body.get("metadata") if isinstance(body, Mapping) else None
    if metadata is None:
        return query_token
    if not isinstance(metadata, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise GateError("metadata must be a map of strings, as in the Canary's webhook spec")
    return str(metadata.get(TOKEN_KEY) or "") or query_token


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def issue_token(
    cluster: str, *, namespace: str = "*", canary: str = "*", label: str = ""
) -> tuple[GateToken, str]:
    """A new token for the Canaries of ``cluster``/``namespace``/``canary`` (globs); the secret is
    returned once and only its digest is kept."""
    token = secrets.token_urlsafe(32)
    row = GateToken.objects.create(
        cluster=cluster, namespace=namespace, canary=canary, label=label, digest=_digest(token)
    )
    return row, token


def authenticate(cluster: str, payload: Payload, token: str) -> bool:
    """Whether ``token`` is a gate token whose scope covers this Canary (constant-time comparison)."""
    if not token:
        return False
    presented = _digest(token)
    allowed = False
    # Compare with every candidate instead of looking the digest up, so timing says nothing about it.
    for row in GateToken.objects.filter(cluster=cluster).only("digest", "cluster", "namespace", "canary"):
        if hmac.compare_digest(row.digest, presented) and row.covers(
            cluster, payload.namespace, payload.name
        ):
            allowed = True
    return allowed


def _decision(cluster: str, payload: Payload, gate: str) -> str | None:
    row = GateDecision.objects.filter(
        cluster=cluster, namespace=payload.namespace, name=payload.name, checksum=payload.checksum, gate=gate
    ).first()
    return row.decision if row else None


def gate_answer(cluster: str, gate: str, payload: Payload) -> tuple[int, str]:
    """Flagger's answer for one webhook call, recorded as the gate's latest call."""
    decision = _decision(cluster, payload, gate)
    if gate == "confirm-traffic-increase":
        answer = FORBIDDEN if decision == Decision.HOLD else APPROVED
    elif gate == "rollback":
        answer = APPROVED if decision == Decision.ROLLBACK else FORBIDDEN
    else:
        answer = APPROVED if decision == Decision.APPROVE else FORBIDDEN
    now = timezone.now()
    with transaction.atomic():
        call, created = GateCall.objects.select_for_update().get_or_create(
            cluster=cluster,
            namespace=payload.namespace,
            name=payload.name,
            gate=gate,
            defaults={"checksum": payload.checksum, "phase": payload.phase, "answer": answer[0], "at": now},
        )
        if not created:
            if call.checksum != payload.checksum:
                call.first_at = now
            call.checksum, call.phase, call.answer, call.at = payload.checksum, payload.phase, answer[0], now
            call.save()
    return answer


def gate_states(cluster: str, namespace: str, name: str) -> list[dict[str, Any]]:
    """Every gate this server has heard from for the Canary: what it last answered and what is decided."""
    calls = GateCall.objects.filter(cluster=cluster, namespace=namespace, name=name).order_by("gate")
    out = []
    for call in calls:
        decision = GateDecision.objects.filter(
            cluster=cluster, namespace=namespace, name=name, checksum=call.checksum, gate=call.gate
        ).first()
        out.append(
            {
                "gate": call.gate,
                "checksum": call.checksum,
                "phase": call.phase,
                "answer": call.answer,
                "waiting": call.answer > 202 and call.gate != "rollback",
                "lastCall": call.at.isoformat(),
                "since": call.first_at.isoformat(),
                "decision": decision.decision if decision else None,
                "decidedBy": decision.actor if decision else None,
            }
        )
    return out


# ---- people's actions -----------------------------------------------------------------------------------


def _actor(user: Any) -> str:
    return (
        str(getattr(user, "username", "") or "")
        if getattr(user, "is_authenticated", False)
        else "(anonymous)"
    )


def _audit(
    user: Any, action: str, key: tuple[str, str, str], outcome: str, detail: str, **params: Any
) -> AuditEntry:
    groups: list[str] = []
    if getattr(user, "is_authenticated", False):
        groups = list(access_for(user).groups)
    entry = AuditEntry(
        actor=_actor(user),
        groups=groups,
        action=f"canary-{action}"[:32],
        cluster=key[0],
        namespace=key[1],
        rollout=key[2],
        params={"kind": "Canary", **params},
        outcome=outcome,
        detail=detail,
    )
    entry.save()
    return entry


@dataclass(frozen=True)
class ActResult:
    outcome: str  # done | denied | refused | failed
    detail: str
    audit_id: int
    status: int  # the HTTP status the API answers with


def _decide(key: tuple[str, str, str], gate: str, checksum: str, decision: str, actor: str) -> None:
    GateDecision.objects.update_or_create(
        cluster=key[0],
        namespace=key[1],
        name=key[2],
        checksum=checksum,
        gate=gate,
        defaults={"decision": decision, "actor": actor, "at": timezone.now()},
    )


def _latest(key: tuple[str, str, str], *gates: str) -> GateCall | None:
    return (
        GateCall.objects.filter(cluster=key[0], namespace=key[1], name=key[2], gate__in=gates)
        .order_by("-at", "-id")
        .first()
    )


def canary_act(
    user: Any,
    action: str,
    cluster: str,
    namespace: str,
    name: str,
    *,
    patcher: Any = None,
    request: Any = None,
) -> ActResult:
    """Do ``action`` on the Canary for ``user``: permission check, decision or patch, audit row.

    A promote also asks the guard rails (``dashboard.guardrails``): under an approval rule the
    confirm-promotion gate opens only for the run of an approved ``request``, and never in a freeze."""
    key = (cluster, namespace, name)
    if action not in PERMISSION:
        entry = _audit(
            user, action, key, Outcome.DENIED, f"unknown Canary action {action!r} ({', '.join(ACTIONS)})"
        )
        return ActResult(Outcome.DENIED, entry.detail, entry.pk, 404)
    if not access_for(user).can(PERMISSION[action], "/".join(key)):
        detail = f"{_actor(user)} may not {PERMISSION[action]} {'/'.join(key)}"
        entry = _audit(user, action, key, Outcome.DENIED, detail)
        return ActResult(Outcome.DENIED, detail, entry.pk, 403)
    if action in ("suspend", "resume"):
        suspended = action == "suspend"
        try:
            (patcher or patch_suspend)(cluster, namespace, name, suspended)
        except Exception as error:  # the API's refusal is the user's answer, not a crash
            detail = f"merge patch of spec.suspend failed: {error}"
            entry = _audit(user, action, key, Outcome.FAILED, detail, suspend=suspended)
            return ActResult(Outcome.FAILED, detail, entry.pk, 502)
        if action == "resume":
            _lift_holds(key)
        detail = f"spec.suspend set to {str(suspended).lower()}"
        entry = _audit(user, action, key, Outcome.DONE, detail, suspend=suspended)
        return ActResult(Outcome.DONE, detail, entry.pk, 200)
    return _gate_action(user, action, key, request)


def _lift_holds(key: tuple[str, str, str]) -> None:
    GateDecision.objects.filter(
        cluster=key[0], namespace=key[1], name=key[2], decision=Decision.HOLD
    ).delete()


def _guard_refusal(user: Any, key: tuple[str, str, str], request: Any) -> ActResult | None:
    """The guard rails' answer to a Canary promote (the same ``admit`` as a Rollout action's)."""
    from django.utils import timezone

    from dashboard.guardrails import admission as guardrails

    now = timezone.now()
    where = "/".join(key)
    guard = guardrails.guard_of("promote", where, None, now)
    admission = guardrails.admit(
        access_for(user), guard, where, reason="", break_glass=False, request=request, now=now
    )
    if not admission.refusal:
        return None
    entry = _audit(user, "promote", key, Outcome.DENIED, admission.refusal)
    return ActResult(Outcome.DENIED, admission.refusal, entry.pk, guardrails.status_of(admission.refusal)[0])


def _gate_action(user: Any, action: str, key: tuple[str, str, str], request: Any = None) -> ActResult:
    actor = _actor(user)
    if action == "promote":
        refused = _guard_refusal(user, key, request)
        if refused is not None:
            return refused
        call = _latest(key, "confirm-rollout", "confirm-promotion")
        if call is None or call.answer <= 202:
            detail = (
                "no confirm-rollout or confirm-promotion gate of this Canary is waiting on this server"
                if call is None
                else f"the {call.gate} gate already let revision {call.checksum} through"
            )
            entry = _audit(user, action, key, Outcome.REFUSED, detail)
            return ActResult(Outcome.REFUSED, detail, entry.pk, 409)
        wanted = (request.seen or {}).get("checksum") if request is not None else None
        if wanted is not None and wanted != call.checksum:  # approved for another revision: not this one
            detail = f"the Canary moved on to revision {call.checksum} since revision {wanted} was requested"
            entry = _audit(user, action, key, Outcome.CONFLICT, detail)
            return ActResult(Outcome.CONFLICT, detail, entry.pk, 409)
        _decide(key, call.gate, call.checksum, Decision.APPROVE, actor)
        GateDecision.objects.filter(
            cluster=key[0], namespace=key[1], name=key[2], checksum=call.checksum, decision=Decision.HOLD
        ).delete()
        detail = f"approved {call.gate} for revision {call.checksum}; Flagger proceeds on its next tick"
        entry = _audit(user, action, key, Outcome.DONE, detail, gate=call.gate, checksum=call.checksum)
        return ActResult(Outcome.DONE, detail, entry.pk, 200)
    if action == "abort":
        call = _latest(key, "rollback")
        if call is None:
            detail = (
                "Flagger has not called a rollback gate of this Canary on this server; add a rollback webhook"
            )
            entry = _audit(user, action, key, Outcome.REFUSED, detail)
            return ActResult(Outcome.REFUSED, detail, entry.pk, 409)
        _decide(key, "rollback", call.checksum, Decision.ROLLBACK, actor)
        detail = f"rollback requested for revision {call.checksum}; Flagger rolls back on its next tick"
        entry = _audit(user, action, key, Outcome.DONE, detail, gate="rollback", checksum=call.checksum)
        return ActResult(Outcome.DONE, detail, entry.pk, 200)
    # pause / resume of traffic increases: a hold on the revision the gates last saw
    call = _latest(key, *GATES)
    if action == "pause":
        if call is None:
            detail = "Flagger has not called any gate of this Canary on this server; nothing to hold"
            entry = _audit(user, action, key, Outcome.REFUSED, detail)
            return ActResult(Outcome.REFUSED, detail, entry.pk, 409)
        _decide(key, "confirm-traffic-increase", call.checksum, Decision.HOLD, actor)
        GateDecision.objects.filter(
            cluster=key[0], namespace=key[1], name=key[2], checksum=call.checksum, decision=Decision.APPROVE
        ).delete()
        detail = f"holding revision {call.checksum}: traffic increases and promotion are refused"
        entry = _audit(
            user, action, key, Outcome.DONE, detail, gate="confirm-traffic-increase", checksum=call.checksum
        )
        return ActResult(Outcome.DONE, detail, entry.pk, 200)
    raise AssertionError(action)  # every action is handled above


def patch_suspend(cluster: str, namespace: str, name: str, suspend: bool) -> None:
    """The merge patch ``kubectl patch canary NAME --type merge -p '{"spec":{"suspend":…}}'`` sends."""
    from kubernetes import client

    from dashboard.kube.actions import ActionClient

    api_client = ActionClient(cluster)
    api = client.CustomObjectsApi(api_client.api_client)
    api_client._call(
        api.patch_namespaced_custom_object,
        GROUP,
        VERSION,
        namespace,
        PLURAL,
        name,
        {"spec": {"suspend": suspend}},
        _content_type="application/merge-patch+json",
    )
