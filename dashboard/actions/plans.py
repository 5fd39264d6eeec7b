"""What each action sends, decided from the live objects (pure: no I/O, no Django).

``plan(action, rollout, replica_sets, params, now)`` returns the ``Request`` list ``kubectl argo rollouts``
would send for the same objects (cmd/*/*.go; see notes §5), or raises ``Refused`` with the reason.
``facts(rollout)`` and ``changes(seen, live)`` implement the stale check: what the user saw on the page
(pod hash, step index, pause and abort state) against the object just fetched from Kubernetes.

``unwedge`` is ours: scale an orphaned ReplicaSet to 0 — one the rollout owns (controller reference)
whose role by ``dashboard.domain.rs_roles`` (the rule the diagram and the finding use) is ``orphaned`` —
exactly the ``kubectl scale rs NAME --replicas=0`` of the runbook.

Non-goals: sending (``dashboard.kube.actions``), permissions and audit (``dashboard.actions.service``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from dashboard.domain.objects import as_bool, as_int, dig_list, dig_map, dig_str, maps, opt_int, rfc3339
from dashboard.domain.phase import rollout_phase
from dashboard.domain.rs_roles import ORPHANED, ROLE_WORDS, Role, replica_set_roles

HASH_LABEL = "rollouts-pod-template-hash"
REVISION_ANNOTATION = "rollout.argoproj.io/revision"
DESTRUCTIVE = frozenset({"abort", "promote-full", "unwedge", "undo"})

Target = Literal["rollout", "status", "scale"]


class Refused(Exception):
    """The action does not apply to the rollout as it is now; the message says why."""


@dataclass(frozen=True)
class Request:
    target: Target  # the rollout, its /status subresource, or a ReplicaSet's /scale subresource
    name: str
    body: Any
    patch_type: Literal["merge", "json"] = "merge"

    def describe(self) -> dict[str, Any]:
        path = {"rollout": "rollouts/{n}", "status": "rollouts/{n}/status", "scale": "replicasets/{n}/scale"}
        return {
            "method": "PATCH",
            "path": path[self.target].format(n=self.name),
            "contentType": f"application/{self.patch_type}-patch+json",
            "body": self.body,
        }


@dataclass(frozen=True)
class Plan:
    requests: tuple[Request, ...] = ()
    # When the first request (a /status patch) answers 404 — a v0.9 CRD without the status subresource —
    # the CLI sends these to the main resource instead of the rest (its "unified" patch).
    without_status: tuple[Request, ...] = ()
    note: str = ""  # said to the user when nothing needs sending (e.g. already fully promoted)
    summary: str = ""  # what will happen, in words (confirmation dialogs and the audit)
    extra: Mapping[str, Any] = field(default_factory=dict)


# --- the stale check -------------------------------------------------------------------------------------


def facts(rollout: Mapping[str, Any]) -> dict[str, Any]:
    """The facts of a rollout that decide what an action does (compared against what the user saw)."""
    status = dig_map(rollout, "status")
    phase, _ = rollout_phase(rollout)
    return {
        "podHash": dig_str(rollout, "status", "currentPodHash") or None,
        "stepIndex": opt_int(status.get("currentStepIndex")),
        "status": phase,
        "paused": as_bool(dig_map(rollout, "spec").get("paused")),
        "aborted": as_bool(status.get("abort")),
        "resourceVersion": dig_str(rollout, "metadata", "resourceVersion"),
    }


COMPARED = ("podHash", "stepIndex", "paused", "aborted")

# What the user's ``seen`` must name for each action, so that ``changes`` can tell a stale click from a
# fresh one (an action whose ``seen`` lacks one is refused before anything is sent). Every action needs
# the pod hash: it was decided about that revision, not whichever one is there now. Actions that move
# the rollout through its steps also need the step index, or two clicks on one page would move it twice.
# Pages send all of ``facts`` (actions.js's ``seen()`` or the action bar's ``seen``): every row is met.
SEEN_REQUIRED: Mapping[str, tuple[str, ...]] = {
    "promote": ("podHash", "stepIndex"),  # one step on from the step seen, once
    "promote-full": ("podHash", "stepIndex"),  # past the steps seen; a step moved meanwhile is news
    "skip-current-step": ("podHash", "stepIndex"),  # skips the step seen, not the next one
    "resume": ("podHash", "stepIndex", "paused"),  # lifts the pause seen at that step, not a later one
    "abort": ("podHash",),  # the emergency brake: any step of the revision seen
    "retry": ("podHash", "aborted"),  # retries the abort seen; already retried means conflict
    "pause": ("podHash",),  # holding the revision seen is right at any step
    "restart": ("podHash",),  # restarts the pods of the revision seen
    "undo": ("podHash",),  # "back from this revision": another revision changes what undo means
    "unwedge": ("podHash",),  # the orphan itself is judged on the live objects by the plan
}


def missing_seen(action: str, seen: Mapping[str, Any]) -> tuple[str, ...]:
    """The facts ``SEEN_REQUIRED`` asks for that ``seen`` does not name (a null value counts as named)."""
    return tuple(name for name in SEEN_REQUIRED.get(action, COMPARED) if name not in seen)


def changes(seen: Mapping[str, Any], live: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What moved on since the user looked: ``{fact: {"seen": …, "now": …}}`` (empty when nothing did).

    Only facts the user reported are compared. ``resourceVersion`` is recorded but not compared (it also
    moves on replica counts and other writes that change nothing the action depends on); being paused or
    not is compared through ``status`` only for the Paused phase, for the same reason.
    """
    moved: dict[str, dict[str, Any]] = {}
    for name in COMPARED:
        if name in seen and _norm(seen[name]) != _norm(live.get(name)):
            moved[name] = {"seen": seen[name], "now": live.get(name)}
    if "status" in seen and (seen["status"] == "Paused") != (live.get("status") == "Paused"):
        moved["status"] = {"seen": seen["status"], "now": live.get("status")}
    return moved


def _norm(value: Any) -> Any:
    return None if value in ("", None) else value


# --- plans -----------------------------------------------------------------------------------------------


def plan(
    action: str,
    rollout: Mapping[str, Any],
    replica_sets: Sequence[Mapping[str, Any]] = (),
    params: Mapping[str, Any] | None = None,
    now: datetime | None = None,
    phase: str | None = None,
    roles: Mapping[str, Role] | None = None,
) -> Plan:
    """What the dashboard sends: the CLI's requests (``cli_plan``) in the states the action is offered in.
    ``phase`` and ``roles``: the rollout's ``rollout_phase`` and its ReplicaSets' roles
    (``replica_set_roles``), when the caller has them already."""
    refusal = state_refusal(action, rollout, phase)
    if refusal:
        raise Refused(refusal)
    return cli_plan(action, rollout, replica_sets, params, now, roles)


def cli_plan(
    action: str,
    rollout: Mapping[str, Any],
    replica_sets: Sequence[Mapping[str, Any]] = (),
    params: Mapping[str, Any] | None = None,
    now: datetime | None = None,
    roles: Mapping[str, Role] | None = None,
) -> Plan:
    """What ``kubectl argo rollouts <action>`` would send for these objects, whatever the rollout's state."""
    params = params or {}
    name = dig_str(rollout, "metadata", "name")
    if action == "promote":
        return promote(rollout)
    if action == "promote-full":
        return promote(rollout, full=True)
    if action == "skip-current-step":
        return promote(rollout, skip_current_step=True)
    if action == "abort":
        return _status_plan(name, {"status": {"abort": True}}, _abort_summary(rollout))
    if action == "retry":
        return _status_plan(name, {"status": {"abort": False}}, "Retry the aborted update")
    if action == "pause":
        return Plan((Request("rollout", name, {"spec": {"paused": True}}),), summary="Pause the rollout")
    if action == "resume":
        return resume(rollout)
    if action == "restart":
        if now is None:
            raise ValueError("restart needs the current time")
        body = {"spec": {"restartAt": rfc3339(now.replace(microsecond=0))}}
        return Plan((Request("rollout", name, body),), summary="Restart the pods of every ReplicaSet")
    if action == "undo":
        return undo(rollout, replica_sets, _revision_param(params.get("revision")))
    if action == "unwedge":
        return unwedge(rollout, replica_sets, str(params.get("replicaSet") or ""), now, roles)
    raise Refused(f"unknown action {action!r}")


# The rollout states each action is for (the upstream dashboard's enablement: promote and abort while
# Progressing or Paused — abort also for a stuck, Degraded update — retry only after an abort), enforced
# here so the page and the service agree.
_MOVING = ("Progressing", "Paused")


def state_refusal(action: str, rollout: Mapping[str, Any], phase: str | None = None) -> str | None:
    """Why ``action`` does not apply to the rollout in its current state, in a release manager's words."""
    if phase is None:
        phase, _ = rollout_phase(rollout)
    status, spec = dig_map(rollout, "status"), dig_map(rollout, "spec")
    aborted = as_bool(status.get("abort"))
    promoted = bool(status.get("currentPodHash")) and status.get("currentPodHash") == status.get("stableRS")
    if action in ("promote", "promote-full", "skip-current-step", "abort"):
        if aborted:
            verb = "abort" if action == "abort" else "promote"
            return f"the update was aborted; nothing to {verb} (retry it, or roll out a new revision)"
        if promoted and phase == "Healthy":
            return "the rollout is fully promoted and healthy; there is no update to act on"
        # A stuck update (Degraded: progress deadline exceeded) can still be aborted back to stable.
        if phase not in _MOVING and not (action == "abort" and phase == "Degraded"):
            return f"the rollout is {phase}; this only applies while an update is progressing or paused"
    if action == "retry" and not aborted:
        return "only an aborted update can be retried, and this one was not aborted"
    if action == "pause":  # Argo CD's discovery.lua: nothing to pause once promoted or aborted
        if as_bool(spec.get("paused")):
            return "the rollout is already paused"
        if aborted:
            return "the update was aborted; there is nothing to pause (retry it, or roll out a new revision)"
        if promoted:
            return "the rollout is fully promoted; there is no update to pause"
    if action == "resume" and not (maps(status.get("pauseConditions")) or as_bool(spec.get("paused"))):
        return "the rollout is not paused"
    return None


def _status(name: str, body: Mapping[str, Any]) -> Request:
    return Request("status", name, dict(body))


def _status_plan(name: str, body: Mapping[str, Any], summary: str) -> Plan:
    """abort / retry: /status, and on 404 the same body to the main resource."""
    fallback = (Request("rollout", name, dict(body)),)
    return Plan((_status(name, body),), without_status=fallback, summary=summary)


def _abort_summary(rollout: Mapping[str, Any]) -> str:
    return (
        f"Abort the update to {dig_str(rollout, 'status', 'currentPodHash') or 'the new revision'}: "
        "traffic and replicas go back to the stable ReplicaSet"
    )


def promote(rollout: Mapping[str, Any], *, full: bool = False, skip_current_step: bool = False) -> Plan:
    """``PromoteRollout`` / ``getPatches`` of cmd/promote/promote.go, row by row of its decision table."""
    name = dig_str(rollout, "metadata", "name")
    spec, status = dig_map(rollout, "spec"), dig_map(rollout, "status")
    canary = dig_map(spec, "strategy", "canary")
    is_canary = "canary" in dig_map(spec, "strategy")
    steps = dig_list(canary, "steps")
    index = as_int(status.get("currentStepIndex"))
    # GetCurrentCanaryStep + "if index < len(steps) { index++ }": never past the last step, never lowered.
    next_index = index + 1 if index < len(steps) else index
    paused_spec = as_bool(spec.get("paused"))
    unpause = Request("rollout", name, {"spec": {"paused": False}})
    status_body: dict[str, Any] | None = None
    unified: dict[str, Any] | None = None
    summary = f"Promote: go on to step {next_index}/{len(steps)}" if steps else "Promote"
    if skip_current_step:
        if not is_canary or not steps:
            raise Refused("skip-current-step only applies to a canary with steps")
        # Only the step index, even when spec.paused is set: promote -c sends no spec patch.
        status_body = unified = {"status": {"currentStepIndex": next_index}}
        summary = f"Skip step {index}/{len(steps)} (its pause or analysis): go to {next_index}/{len(steps)}"
        return Plan(
            (_status(name, status_body),),
            without_status=(Request("rollout", name, unified),),
            summary=summary,
        )
    elif full:
        if status.get("currentPodHash") != status.get("stableRS"):
            status_body = {"status": {"promoteFull": True}}
            unified = {"spec": {"paused": False}, "status": {"promoteFull": True}}
        elif not paused_spec:
            return Plan(note="already fully promoted; nothing was sent", summary="Promote fully")
        summary = "Promote fully: skip every remaining step and analysis and make the canary stable"
    elif (
        is_canary
        and dig_str(status, "canary", "currentStepAnalysisRunStatus", "status") == "Inconclusive"
        and maps(status.get("pauseConditions"))
        and as_bool(status.get("controllerPause"))
    ):
        status_body = {
            "status": {"pauseConditions": None, "controllerPause": False, "currentStepIndex": next_index}
        }
        unified = {"spec": {"paused": False}, "status": {"pauseConditions": None}}
        summary = f"Accept the inconclusive analysis and go on to step {next_index}/{len(steps)}"
    elif maps(status.get("pauseConditions")):
        status_body = {"status": {"pauseConditions": None}}
        unified = {"spec": {"paused": False}, "status": {"pauseConditions": None}}
    elif is_canary and steps:
        status_body = {"status": {"pauseConditions": None, "currentStepIndex": next_index}}
        unified = {
            "spec": {"paused": False},
            "status": {"pauseConditions": None, "currentStepIndex": next_index},
        }
    else:
        summary = "Unpause the rollout"
    requests = []
    if status_body is not None:
        requests.append(_status(name, status_body))
    if paused_spec:
        requests.append(unpause)
    if not requests:
        return Plan(note="not paused and nothing to promote; nothing was sent", summary=summary)
    fallback = (Request("rollout", name, unified),) if unified is not None and status_body is not None else ()
    return Plan(tuple(requests), without_status=fallback, summary=summary)


def resume(rollout: Mapping[str, Any]) -> Plan:
    """Argo CD's ``resume`` action: clear the pause conditions and the manual pause."""
    name = dig_str(rollout, "metadata", "name")
    requests: list[Request] = []
    if maps(dig_map(rollout, "status").get("pauseConditions")):
        requests.append(_status(name, {"status": {"pauseConditions": None}}))
    if as_bool(dig_map(rollout, "spec").get("paused")):
        requests.append(Request("rollout", name, {"spec": {"paused": False}}))
    if not requests:
        return Plan(note="the rollout is not paused; nothing was sent", summary="Resume")
    fallback = (Request("rollout", name, {"spec": {"paused": False}, "status": {"pauseConditions": None}}),)
    return Plan(
        tuple(requests),
        without_status=fallback if requests[0].target == "status" else (),
        summary="Resume: lift the pause",
    )


def _revision_param(value: Any) -> int:
    if value in (None, "", 0, "0"):
        return 0
    try:
        revision = int(value)
    except (TypeError, ValueError):
        raise Refused(f"revision must be a positive whole number, got {value!r}") from None
    if revision < 0:
        raise Refused(f"revision must be a positive whole number, got {value!r}")
    return revision


def owned(rollout: Mapping[str, Any], replica_sets: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The ReplicaSets whose controller reference is this rollout (as ``undo`` selects them)."""
    uid = dig_str(rollout, "metadata", "uid")
    return [
        rs
        for rs in replica_sets
        if any(
            as_bool(ref.get("controller")) and ref.get("uid") == uid
            for ref in maps(dig_map(rs, "metadata").get("ownerReferences"))
        )
    ]


def revision_of(rs: Mapping[str, Any]) -> int:
    value = dig_map(rs, "metadata", "annotations").get(REVISION_ANNOTATION)
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def undo_candidates(
    rollout: Mapping[str, Any], replica_sets: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The rollout's ReplicaSets, newest revision first: what cmd/undo chooses from."""
    return sorted(owned(rollout, replica_sets), key=revision_of, reverse=True)


def undo_target(
    rollout: Mapping[str, Any], candidates: Sequence[Mapping[str, Any]], to_revision: int
) -> Mapping[str, Any]:
    """The ReplicaSet cmd/undo goes back to (``to_revision``, or 0: the previous one); Refused when none."""
    if to_revision:
        target = next((rs for rs in candidates if revision_of(rs) == to_revision), None)
        if target is None:
            raise Refused(f"unable to find specified revision {to_revision} in history")
        return target
    if len(candidates) < 2:
        raise Refused(f'no revision found for rollout "{dig_str(rollout, "metadata", "name")}"')
    return candidates[1]


def undo_summary(target: Mapping[str, Any]) -> str:
    return f"Roll back to revision {revision_of(target)} (ReplicaSet {dig_str(target, 'metadata', 'name')})"


def undo(rollout: Mapping[str, Any], replica_sets: Sequence[Mapping[str, Any]], to_revision: int) -> Plan:
    """cmd/undo: JSON-patch ``/spec/template`` to an earlier revision's template (hash label removed)."""
    name = dig_str(rollout, "metadata", "name")
    target = undo_target(rollout, undo_candidates(rollout, replica_sets), to_revision)
    template = _without_hash(dig_map(target, "spec", "template"))  # (shares the rest: never changed)
    revision = revision_of(target)
    summary = undo_summary(target)
    # equalIgnoreHash: DeepDerivative(rolloutTemplate, rsTemplate), the hash label dropped from both. The
    # rollout's template comes first, so keys only the ReplicaSet has (API-server defaults) are ignored.
    if _derivative(_without_hash(dig_map(rollout, "spec", "template")), template):
        return Plan(
            note=f"skipped rollback (current template already matches revision {revision})", summary=summary
        )
    body = [{"op": "replace", "path": "/spec/template", "value": template}]
    return Plan(
        (Request("rollout", name, body, patch_type="json"),), summary=summary, extra={"revision": revision}
    )


def _without_hash(template: Mapping[str, Any]) -> dict[str, Any]:
    """``template`` without the pod-template-hash label: a new top level and metadata, the rest shared (a
    deep copy of each template cost a third of the undo button's availability, built with every view)."""
    result = dict(template)
    labels = dict(dig_map(result, "metadata", "labels"))
    if HASH_LABEL in labels:
        labels.pop(HASH_LABEL)
        result["metadata"] = {**dig_map(result, "metadata"), "labels": labels}
    return result


_MISSING = object()


def _derivative(a: Any, b: Any = _MISSING) -> bool:
    """apimachinery's ``Semantic.DeepDerivative(a, b)`` on unstructured values (maps, lists, scalars).

    An empty map, list or string or a null in ``a`` matches anything; a key of ``a`` missing from ``b``
    does not match; ``a`` may be shorter than ``b`` (a list or a map); numbers and booleans compare exactly.
    """
    if b is _MISSING:
        return False
    if a is None:
        return True
    if b is None:
        return False
    if isinstance(a, Mapping):
        if not isinstance(b, Mapping):
            return False
        if not a:
            return True
        return len(a) <= len(b) and all(_derivative(v, b.get(k, _MISSING)) for k, v in a.items())
    if isinstance(a, list):
        if not isinstance(b, list):
            return False
        return not a or (len(a) <= len(b) and all(_derivative(x, b[i]) for i, x in enumerate(a)))
    if isinstance(a, str):
        return isinstance(b, str) and (not a or a == b)
    return type(a) is type(b) and bool(a == b)


def unwedge_refusal(
    rollout: Mapping[str, Any], rs: Mapping[str, Any] | None, name: str, roles: Mapping[str, Role]
) -> str | None:
    """Why ``rs`` may not be scaled to 0 by unwedge, or None when its role (``roles``, from
    ``replica_set_roles``) is orphaned."""
    if rs is None:
        return f"ReplicaSet {name!r} does not exist"
    if not owned(rollout, [rs]):
        return f"ReplicaSet {name!r} is not controlled by rollout {dig_str(rollout, 'metadata', 'name')!r}"
    role = roles.get(name)
    if role is not None and role.role == ORPHANED:
        return None
    words = ROLE_WORDS.get(role.role, role.role) if role is not None else "not one of the rollout's"
    return f"ReplicaSet {name!r} is {words}; unwedge only scales down an orphaned ReplicaSet"


def unwedge(
    rollout: Mapping[str, Any],
    replica_sets: Sequence[Mapping[str, Any]],
    rs_name: str,
    now: datetime | None = None,
    roles: Mapping[str, Role] | None = None,
) -> Plan:
    if not rs_name:
        raise Refused("name the ReplicaSet to scale down (replicaSet)")
    rs = next((r for r in replica_sets if dig_str(r, "metadata", "name") == rs_name), None)
    if roles is None:
        roles = replica_set_roles(rollout, replica_sets, now or datetime.now(UTC))
    reason = unwedge_refusal(rollout, rs, rs_name, roles)
    if reason:
        raise Refused(reason)
    summary = (
        f"Scale the orphaned ReplicaSet {rs_name} to 0, then let the abort converge and do a single "
        "clean run (repeated re-runs re-trigger the same race)"
    )
    return Plan((Request("scale", rs_name, {"spec": {"replicas": 0}}),), summary=summary)


def orphans(
    rollout: Mapping[str, Any], replica_sets: Sequence[Mapping[str, Any]], roles: Mapping[str, Role]
) -> list[str]:
    """Names of the owned ReplicaSets that unwedge would accept (running pods, no role)."""
    return [
        dig_str(rs, "metadata", "name")
        for rs in owned(rollout, replica_sets)
        if unwedge_refusal(rollout, rs, dig_str(rs, "metadata", "name"), roles) is None
    ]
