"""The action service: the only code that writes to Kubernetes, and the only writer of audit rows.

``rollout_act(user, action, key, seen=…, params=…, idempotency_key=…)`` (and the ``rollout_<verb>``
shorthands) is what the API calls. It checks, in order: the action exists, the user may do it on this
rollout, the user is under the rate limit, the request says what the user saw; each refusal is an
audited ``denied`` attempt. Then it records the ``accepted`` attempt — the idempotency key makes a
repeat return the first attempt — and hands it to the Celery task (inline in embedded mode).

``execute(entry_id)`` is the task's body. Under a lock per rollout (Redis when configured, so two web
processes and any number of workers agree), it GETs the rollout, compares it with what the user saw
(``plans.changes``: if the rollout moved on, the outcome is ``conflict`` and nothing is sent), plans the
requests ``kubectl argo rollouts`` would send and sends them. The lock is what makes two managers
clicking promote at once advance exactly one step: the second one sees the first one's change.
Transient API errors before anything was sent are retried by Celery (bounded); a transient error in the
middle of a plan is retried in place, since every request of a plan is idempotent on its own.
The outcome is announced to every open page of the rollout (``dashboard.actions.live``).

Non-goals: HTTP (``dashboard.web.actions_api``), what to send (``plans``), how (``dashboard.kube.actions``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from dashboard.access.policy import ACTIONS
from dashboard.access.rbac import access_for
from dashboard.actions import plans
from dashboard.actions.models import AuditEntry, Outcome
from dashboard.guardrails import admission as guardrails
from dashboard.kube.actions import ActionClient, KubeError, impersonation_for
from dashboard.notify.service import notify_audit

log = logging.getLogger(__name__)

KEY_PARTS = 3
MAX_KEY_LENGTH = 100
SEND_RETRY_SECONDS = (0.2, 0.5, 1.0, 2.0)
LOCK_SECONDS = 60  # a crashed holder's lock expires after this; a live holder renews it
LOCK_WAIT_SECONDS = 60  # how long an action waits for the one before it, then Celery retries it


class TransientKubeError(Exception):
    """Nothing was sent and the API failed in a way worth retrying (5xx, 429, no answer)."""


# --- the front door ----------------------------------------------------------------------------------


def split_key(key: str) -> tuple[str, str, str]:
    parts = key.split("/")
    if len(parts) != KEY_PARTS or not all(parts):
        raise ValueError(f"{key!r} is not cluster/namespace/name")
    return parts[0], parts[1], parts[2]


def _groups_of(user: Any) -> list[str]:
    return list(access_for(user).groups)


ANONYMOUS = "(anonymous)"


def _actor(user: Any) -> str:
    if not getattr(user, "is_authenticated", False):
        return ANONYMOUS
    return str(getattr(user, "username", "") or "")


def _row(user: Any, action: str, key: str, **fields: Any) -> AuditEntry:
    cluster, namespace, name = split_key(key)
    entry = AuditEntry(
        actor=_actor(user),
        groups=_groups_of(user) if getattr(user, "is_authenticated", False) else [],
        action=action[:32],
        cluster=cluster,
        namespace=namespace,
        rollout=name,
        **fields,
    )
    entry.save()
    return entry


def attempt_refused(user: Any, action: str, key: str, detail: str) -> AuditEntry:
    """Audit an attempt turned away before it could be understood (bad body, unknown action …)."""
    return _row(user, action, key, outcome=Outcome.DENIED, detail=detail)


def logs_session(user: Any, key: str, *, allowed: bool, params: dict[str, Any], detail: str) -> AuditEntry:
    """Audit one pod-logs session (who read which pod's logs, or was refused): one final row, since
    reading changes nothing in the cluster."""
    from dashboard.access.policy import LOGS

    outcome = Outcome.DONE if allowed else Outcome.DENIED
    return _row(user, LOGS, key, outcome=outcome, params=params, detail=detail[:2000])


def _clean_seen(action: str, seen: Any) -> dict[str, Any] | str:
    """What the user saw, or the reason it cannot be used to detect a stale click (plans.SEEN_REQUIRED)."""
    needed = plans.SEEN_REQUIRED[action]
    if not isinstance(seen, Mapping):
        return f"say what you saw: a 'seen' object with {', '.join(needed)} (and status, resourceVersion)"
    cleaned = {k: seen[k] for k in (*plans.COMPARED, "status", "resourceVersion") if k in seen}
    missing = plans.missing_seen(action, cleaned)
    if missing:
        return (
            f"say what you saw: {action} needs {' and '.join(f'seen.{k}' for k in needed)} to detect a "
            f"stale click; missing: {', '.join(f'seen.{k}' for k in missing)}"
        )
    if (
        "stepIndex" in cleaned
        and cleaned["stepIndex"] is not None
        and not isinstance(cleaned["stepIndex"], int)
    ):
        return f"seen.stepIndex must be a whole number or null, got {cleaned['stepIndex']!r}"
    return cleaned


def _clean_params(action: str, params: Any) -> dict[str, Any] | str:
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        return "params must be an object"
    if action == "undo":
        revision = params.get("revision")
        if revision not in (None, "") and (
            isinstance(revision, bool) or not str(revision).isdigit() or int(str(revision)) <= 0
        ):
            return f"params.revision must be a positive whole number, got {revision!r}"
        return {"revision": int(str(revision))} if revision not in (None, "") else {}
    if action == "unwedge":
        replica_set = params.get("replicaSet")
        if not isinstance(replica_set, str) or not replica_set:
            return "params.replicaSet must name the ReplicaSet to scale down"
        return {"replicaSet": replica_set[:253]}
    return {}


def rate_limited(user: Any) -> bool:
    window = timezone.now() - timedelta(seconds=settings.ACTIONS_RATE_WINDOW_SECONDS)
    recent = (
        AuditEntry.objects.filter(actor=user.username, attempt__isnull=True, at__gte=window)
        .exclude(action="logs")  # reading logs is audited but is not an action on the rollout
        .count()
    )
    return recent >= settings.ACTIONS_RATE_LIMIT


def rollout_act(
    user: Any,
    action: str,
    key: str,
    *,
    seen: Any = None,
    params: Any = None,
    idempotency_key: str = "",
    reason: Any = "",
    break_glass: bool = False,
    request: Any = None,
    view: Mapping[str, Any] | None = None,
) -> tuple[AuditEntry, bool]:
    """Record the attempt and start it; returns (first row, replayed?). Denials are rows too.

    The guard rails (``dashboard.guardrails``) are asked last: a freeze refuses (``break_glass`` with the
    permission and a ``reason`` overrides it, and notifies), a reason may be required, an approval rule
    sends the user to request approval — unless this is the run of an approved ``request``. ``view`` is
    the rollout's live view, for the rules' label selectors."""
    split_key(key)
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r} (known: {', '.join(ACTIONS)})")
    idempotency_key = (idempotency_key or "").strip()
    reason = reason.strip()[:2000] if isinstance(reason, str) else ""
    base: dict[str, Any] = {"seen": seen if isinstance(seen, Mapping) else {}, "reason": reason}
    if len(idempotency_key) > MAX_KEY_LENGTH:
        return _row(
            user, action, key, outcome=Outcome.DENIED, detail="the idempotency key is too long", **base
        ), False
    if not getattr(user, "is_authenticated", False) or not access_for(user).can(action, key):
        detail = f"not permitted to {action} {key}"
        return _row(user, action, key, outcome=Outcome.DENIED, detail=detail, **base), False
    if idempotency_key:
        earlier = AuditEntry.objects.filter(
            actor=user.username, idempotency_key=idempotency_key, outcome=Outcome.ACCEPTED
        ).first()
        if earlier is not None:
            return _replay(earlier, action, key)
    if rate_limited(user):
        limit, window = settings.ACTIONS_RATE_LIMIT, settings.ACTIONS_RATE_WINDOW_SECONDS
        detail = f"rate limited: at most {limit} actions per {window} s; try again later"
        return _row(user, action, key, outcome=Outcome.DENIED, detail=detail, **base), False
    cleaned_seen = _clean_seen(action, seen)
    if isinstance(cleaned_seen, str):
        return _row(user, action, key, outcome=Outcome.DENIED, detail=cleaned_seen, **base), False
    cleaned_params = _clean_params(action, params)
    if isinstance(cleaned_params, str):
        return _row(user, action, key, outcome=Outcome.DENIED, detail=cleaned_params, **base), False
    now = timezone.now()
    guard = guardrails.guard_of(action, key, view, now)
    admission = guardrails.admit(
        access_for(user), guard, key, reason=reason, break_glass=break_glass, request=request, now=now
    )
    if admission.refusal:
        return _row(user, action, key, outcome=Outcome.DENIED, detail=admission.refusal, **base), False
    try:
        with transaction.atomic():
            entry = _row(
                user,
                action,
                key,
                outcome=Outcome.ACCEPTED,
                seen=cleaned_seen,
                params=cleaned_params,
                idempotency_key=idempotency_key,
                reason=reason,
                guard=dict(admission.guard or {}),
            )
    except IntegrityError:  # the same key raced in from another request: that one acts
        earlier = AuditEntry.objects.get(
            actor=user.username, idempotency_key=idempotency_key, outcome=Outcome.ACCEPTED
        )
        return _replay(earlier, action, key)
    if admission.break_glass:
        guardrails.notify_break_glass(entry, admission.break_glass)
    from rollouts_ui.celery import task

    # Sent at once, not on commit: callers are not inside a transaction (views run in autocommit), and
    # the inline (eager) mode then answers with the outcome straight away. By name: the task module
    # imports this one.
    task("dashboard.actions.tasks.execute_action").delay(entry.pk)
    return entry, False


def _replay(earlier: AuditEntry, action: str, key: str) -> tuple[AuditEntry, bool]:
    if earlier.action != action or earlier.key != key:
        raise ValueError("this idempotency key was already used for a different action or rollout")
    return earlier, True


def rollout_promote(user: Any, key: str, **kwargs: Any) -> tuple[AuditEntry, bool]:
    return rollout_act(user, "promote", key, **kwargs)


def rollout_promote_full(user: Any, key: str, **kwargs: Any) -> tuple[AuditEntry, bool]:
    return rollout_act(user, "promote-full", key, **kwargs)


def rollout_skip_current_step(user: Any, key: str, **kwargs: Any) -> tuple[AuditEntry, bool]:
    return rollout_act(user, "skip-current-step", key, **kwargs)


def rollout_abort(user: Any, key: str, **kwargs: Any) -> tuple[AuditEntry, bool]:
    return rollout_act(user, "abort", key, **kwargs)


def rollout_retry(user: Any, key: str, **kwargs: Any) -> tuple[AuditEntry, bool]:
    return rollout_act(user, "retry", key, **kwargs)


def rollout_pause(user: Any, key: str, **kwargs: Any) -> tuple[AuditEntry, bool]:
    return rollout_act(user, "pause", key, **kwargs)


def rollout_resume(user: Any, key: str, **kwargs: Any) -> tuple[AuditEntry, bool]:
    return rollout_act(user, "resume", key, **kwargs)


def rollout_restart(user: Any, key: str, **kwargs: Any) -> tuple[AuditEntry, bool]:
    return rollout_act(user, "restart", key, **kwargs)


def rollout_undo(user: Any, key: str, **kwargs: Any) -> tuple[AuditEntry, bool]:
    return rollout_act(user, "undo", key, **kwargs)


def rollout_unwedge(user: Any, key: str, **kwargs: Any) -> tuple[AuditEntry, bool]:
    return rollout_act(user, "unwedge", key, **kwargs)


# --- the worker ----------------------------------------------------------------------------------------

_local_locks: dict[str, threading.Lock] = {}
_local_guard = threading.Lock()


@contextlib.contextmanager
def rollout_lock(key: str) -> Iterator[None]:
    """One action at a time per rollout, across processes and Celery workers when Redis is configured.

    The Redis lock expires after ``LOCK_SECONDS`` so a crashed worker cannot wedge a rollout, and a keeper
    thread renews it every third of that while its holder works, so a slow action (API retries) is never
    overtaken by the next one. Without Redis (embedded mode: one process) a thread lock does the same."""
    if settings.REDIS_URL:
        import redis

        client = redis.Redis.from_url(settings.REDIS_URL)
        lock = client.lock(
            f"{settings.LIVE_REDIS_PREFIX}action-lock:{key}",
            timeout=LOCK_SECONDS,
            blocking_timeout=LOCK_WAIT_SECONDS,
            thread_local=False,  # the keeper thread renews with the holder's token
        )
        if not lock.acquire():
            raise TransientKubeError(f"another action on {key} is still running")
        done = threading.Event()

        def keep() -> None:
            while not done.wait(LOCK_SECONDS / 3):
                try:
                    lock.reacquire()
                except redis.RedisError as error:
                    log.warning("could not renew the action lock of %s: %s", key, error)
                    return

        keeper = threading.Thread(target=keep, name=f"action-lock {key}", daemon=True)
        keeper.start()
        try:
            yield
        finally:
            done.set()
            keeper.join()
            with contextlib.suppress(redis.RedisError):
                lock.release()
            client.close()
        return
    with _local_guard:
        local = _local_locks.setdefault(key, threading.Lock())
    with local:
        yield


def _finish(entry: AuditEntry, outcome: str, detail: str = "", **fields: Any) -> AuditEntry:
    result = AuditEntry(
        actor=entry.actor,
        groups=entry.groups,
        action=entry.action,
        cluster=entry.cluster,
        namespace=entry.namespace,
        rollout=entry.rollout,
        params=entry.params,
        seen=entry.seen,
        idempotency_key=entry.idempotency_key,
        reason=entry.reason,
        guard=entry.guard,
        outcome=outcome,
        detail=detail,
        attempt=entry,
        **fields,
    )
    try:
        result.save()
    except IntegrityError:  # a redelivered task finished first
        return AuditEntry.objects.get(attempt=entry)
    from dashboard.actions.live import announce

    announce(entry, result)
    notify_audit(result)
    return result


def execute(entry_id: int, *, give_up: bool = False) -> AuditEntry:
    """Carry out an accepted attempt; returns its result row. Raises ``TransientKubeError`` to be retried."""
    entry = AuditEntry.objects.get(pk=entry_id)
    done = AuditEntry.objects.filter(attempt=entry).first()
    if done is not None:
        return done
    try:
        with rollout_lock(entry.key):
            done = AuditEntry.objects.filter(attempt=entry).first()
            if done is not None:
                return done
            return _execute_locked(entry)
    except TransientKubeError as error:
        if give_up:
            return _finish(entry, Outcome.FAILED, f"gave up after retries: {error}")
        raise


def _execute_locked(entry: AuditEntry) -> AuditEntry:
    try:
        client = ActionClient(entry.cluster, impersonate=impersonation_for(entry.actor, entry.groups))
        rollout = client.get_rollout(entry.namespace, entry.rollout)
    except KubeError as error:
        if error.transient:
            raise TransientKubeError(error.message) from None
        return _finish(entry, Outcome.FAILED, error.message)
    live = plans.facts(rollout)
    moved = plans.changes(entry.seen, live)
    if moved:
        return _finish(entry, Outcome.CONFLICT, _describe_changes(moved), changes=moved)
    try:
        replica_sets = (
            client.list_replica_sets(entry.namespace, rollout) if entry.action in ("undo", "unwedge") else []
        )
        plan = plans.plan(entry.action, rollout, replica_sets, entry.params, datetime.now(UTC))
    except plans.Refused as refusal:
        return _finish(entry, Outcome.REFUSED, str(refusal))
    except KubeError as error:
        if error.transient:
            raise TransientKubeError(error.message) from None
        return _finish(entry, Outcome.FAILED, error.message)
    return _send(entry, client, plan)


def _send(entry: AuditEntry, client: ActionClient, plan: plans.Plan) -> AuditEntry:
    sent: list[dict[str, Any]] = []
    queue = list(plan.requests)
    while queue:
        request = queue.pop(0)
        try:
            _send_one(client, entry.namespace, request, retry_in_place=bool(sent))
        except KubeError as error:
            if error.status == 404 and request.target == "status" and not sent and plan.without_status:
                queue = list(plan.without_status)  # a CRD without the status subresource (v0.9)
                continue
            if error.transient and not sent:
                raise TransientKubeError(error.message) from None
            detail = error.message if not sent else f"partly applied ({len(sent)} sent): {error.message}"
            return _finish(entry, Outcome.FAILED, detail, requests=sent)
        sent.append(request.describe())
    return _finish(entry, Outcome.DONE, plan.note or plan.summary, requests=sent)


def _send_one(client: ActionClient, namespace: str, request: plans.Request, *, retry_in_place: bool) -> None:
    pauses = SEND_RETRY_SECONDS[: settings.ACTIONS_MAX_RETRIES] if retry_in_place else ()
    for pause in (*pauses, None):
        try:
            client.send(namespace, request)
            return
        except KubeError as error:
            if pause is None or not error.transient:
                raise
            log.warning("retrying %s after a transient error: %s", request.describe()["path"], error)
            time.sleep(pause)


def _describe_changes(moved: Mapping[str, Mapping[str, Any]]) -> str:
    names = {
        "podHash": "pod hash",
        "stepIndex": "step index",
        "paused": "paused",
        "aborted": "aborted",
        "status": "status",
    }
    parts = [f"{names.get(k, k)} {v.get('seen')!r} → {v.get('now')!r}" for k, v in moved.items()]
    return "the rollout has moved on since you looked: " + ", ".join(parts) + "; nothing was sent"
