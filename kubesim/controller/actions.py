"""User actions, sent as the exact requests ``kubectl argo rollouts`` sends (cmd/*/*.go).

Scenarios use these for scripted users, and tests use them to check that the controller reacts to real
requests: merge patches, with ``abort``/``retry``/``promote`` status fields on the ``/status`` subresource,
``undo`` as a JSON patch of ``/spec/template``, ``set image`` as a full PUT.

Non-goals: the 404 fallback for v0.9 servers (kubesim always has the status subresource).
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from kubesim.clock import rfc3339
from kubesim.controller.common import (
    HASH_LABEL,
    REPLICA_SETS,
    REVISION_ANNOTATION,
    ROLLOUTS,
    Obj,
    controller_uid,
)

CLI_MANAGER = "kubectl-argo-rollouts"

ACTIONS = (
    "promote",
    "promote-full",
    "skip-current-step",
    "abort",
    "retry",
    "pause",
    "resume",
    "restart",
    "undo",
    "set-image",
)


class ActionError(ValueError):
    pass


_ABSENT = object()


def deep_derivative(a: Any, b: Any = _ABSENT) -> bool:
    """apimachinery's ``Semantic.DeepDerivative`` on unstructured values: empty or null parts of ``a``
    match anything, a key of ``a`` missing from ``b`` does not, ``a`` may be shorter than ``b``."""
    if b is _ABSENT:
        return False
    if a is None:
        return True
    if b is None:
        return False
    if isinstance(a, dict):
        if not isinstance(b, dict):
            return False
        return not a or (
            len(a) <= len(b) and all(deep_derivative(v, b.get(k, _ABSENT)) for k, v in a.items())
        )
    if isinstance(a, list):
        if not isinstance(b, list):
            return False
        return not a or (len(a) <= len(b) and all(deep_derivative(x, b[i]) for i, x in enumerate(a)))
    if isinstance(a, str):
        return isinstance(b, str) and (not a or a == b)
    return type(a) is type(b) and bool(a == b)


def _status_patch(store: Any, ns: str, name: str, body: Obj, user: str | None) -> None:
    store.patch(ROLLOUTS, ns, name, body, subresource="status", manager=CLI_MANAGER, user=user)


def abort(store: Any, ns: str, name: str, *, user: str | None = None) -> None:
    _status_patch(store, ns, name, {"status": {"abort": True}}, user)


def retry(store: Any, ns: str, name: str, *, user: str | None = None) -> None:
    _status_patch(store, ns, name, {"status": {"abort": False}}, user)


def pause(store: Any, ns: str, name: str, *, user: str | None = None) -> None:
    store.patch(ROLLOUTS, ns, name, {"spec": {"paused": True}}, manager=CLI_MANAGER, user=user)


def restart(store: Any, ns: str, name: str, now: datetime, *, user: str | None = None) -> None:
    store.patch(ROLLOUTS, ns, name, {"spec": {"restartAt": rfc3339(now)}}, manager=CLI_MANAGER, user=user)


def promote(
    store: Any,
    ns: str,
    name: str,
    *,
    full: bool = False,
    skip_current_step: bool = False,
    user: str | None = None,
) -> None:
    """``PromoteRollout``: the decision table of cmd/promote/promote.go."""
    ro = store.get(ROLLOUTS, ns, name)
    spec, status = ro.get("spec") or {}, ro.get("status") or {}
    canary = (spec.get("strategy") or {}).get("canary")
    steps = (canary or {}).get("steps") or []
    index = int(status.get("currentStepIndex") or 0)
    next_index = index + 1 if index < len(steps) else index  # GetCurrentCanaryStep, then "index++"
    status_patch: Obj | None = None
    if skip_current_step:
        if canary is None or not steps:
            raise ActionError("Skip current step is not supported for this rollout")
        # getPatches' skipCurrentStep: the step index only, never a spec patch (a manual pause stays).
        _status_patch(store, ns, name, {"status": {"currentStepIndex": next_index}}, user)
        return
    elif full:
        if status.get("currentPodHash") != status.get("stableRS"):
            status_patch = {"status": {"promoteFull": True}}
    elif (
        canary is not None
        and ((status.get("canary") or {}).get("currentStepAnalysisRunStatus") or {}).get("status")
        == "Inconclusive"
        and status.get("pauseConditions")
        and status.get("controllerPause")
    ):
        status_patch = {
            "status": {"pauseConditions": None, "controllerPause": False, "currentStepIndex": next_index}
        }
    elif status.get("pauseConditions"):
        status_patch = {"status": {"pauseConditions": None}}
    elif canary is not None and steps:
        status_patch = {"status": {"pauseConditions": None, "currentStepIndex": next_index}}
    if status_patch is not None:
        _status_patch(store, ns, name, status_patch, user)
    if spec.get("paused"):
        store.patch(ROLLOUTS, ns, name, {"spec": {"paused": False}}, manager=CLI_MANAGER, user=user)


def resume(store: Any, ns: str, name: str, *, user: str | None = None) -> None:
    """Argo CD's ``resume`` action: clear pause conditions and the manual pause."""
    ro = store.get(ROLLOUTS, ns, name)
    if (ro.get("status") or {}).get("pauseConditions"):
        _status_patch(store, ns, name, {"status": {"pauseConditions": None}}, user)
    if (ro.get("spec") or {}).get("paused"):
        store.patch(ROLLOUTS, ns, name, {"spec": {"paused": False}}, manager=CLI_MANAGER, user=user)


def undo(store: Any, ns: str, name: str, *, to_revision: int = 0, user: str | None = None) -> str:
    """``undo``: JSON-patch ``/spec/template`` to an earlier ReplicaSet's template. Returns what happened."""
    ro = store.get(ROLLOUTS, ns, name)
    selector = ",".join(
        f"{k}={v}" for k, v in ((ro["spec"].get("selector") or {}).get("matchLabels") or {}).items()
    )
    items, _ = store.list(REPLICA_SETS, ns, label_selector=selector or None)
    owned = [rs for rs in items if controller_uid(rs) == ro["metadata"]["uid"]]

    def revision(rs: Obj) -> int:
        try:
            return int((rs["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION, "0"))
        except ValueError:
            return 0

    if to_revision:
        target = next((rs for rs in owned if revision(rs) == to_revision), None)
        if target is None:
            raise ActionError(f"unable to find specified revision {to_revision} in history")
    else:
        ordered = sorted(owned, key=revision, reverse=True)
        if len(ordered) < 2:
            raise ActionError(f'no revision found for rollout "{name}"')
        target = ordered[1]
    template = copy.deepcopy(target["spec"]["template"])
    template.get("metadata", {}).get("labels", {}).pop(HASH_LABEL, None)
    current = copy.deepcopy(ro["spec"].get("template") or {})
    current.get("metadata", {}).get("labels", {}).pop(HASH_LABEL, None)
    if deep_derivative(current, template):  # equalIgnoreHash: the rollout's template first
        return f"skipped rollback (current template already matches revision {revision(target)})"
    store.patch(
        ROLLOUTS,
        ns,
        name,
        [{"op": "replace", "path": "/spec/template", "value": template}],
        patch_type="json",
        manager=CLI_MANAGER,
        user=user,
    )
    return "rolled back"


def set_image(store: Any, ns: str, name: str, container: str, image: str, *, user: str | None = None) -> None:
    """``set image``: GET, edit the container image(s), PUT the whole object."""
    ro = store.get(ROLLOUTS, ns, name)
    found = False
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in ro["spec"]["template"]["spec"].get(key) or []:
            if container in ("*", c.get("name")):
                c["image"] = image
                found = True
    if not found:
        raise ActionError(f'unable to find container named "{container}"')
    store.replace(ROLLOUTS, ro, manager=CLI_MANAGER, user=user)


def run_action(store: Any, ns: str, name: str, action: str, now: datetime, **params: Any) -> str:
    """Dispatch a named action (the names Argo CD and the CLI use)."""
    if action == "promote":
        promote(store, ns, name)
    elif action == "promote-full":
        promote(store, ns, name, full=True)
    elif action == "skip-current-step":
        promote(store, ns, name, skip_current_step=True)
    elif action == "abort":
        abort(store, ns, name)
    elif action == "retry":
        retry(store, ns, name)
    elif action == "pause":
        pause(store, ns, name)
    elif action == "resume":
        resume(store, ns, name)
    elif action == "restart":
        restart(store, ns, name, now)
    elif action == "undo":
        return undo(store, ns, name, to_revision=int(params.get("to_revision", 0)))
    elif action == "set-image":
        set_image(store, ns, name, str(params.get("container", "*")), str(params["image"]))
    else:
        raise ActionError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
    return action
