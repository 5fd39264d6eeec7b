"""Which actions apply to a rollout right now, why not, and what each needs — for the page's buttons.

``action_availability(rollout, replica_sets, now)`` asks ``plans.plan`` — the very function the action
service runs before sending, whose ``Refused`` becomes the API's 422 — about every action, and turns the
answer into one button each: ``applies`` and, when not, the ``reason``; the ``params`` the POST must carry
(unwedge's ReplicaSet when there is exactly one orphan), the ``choices`` when the user must pick (undo's
revision, unwedge's ReplicaSet when there are several) and ``confirm`` (what will happen, for a dialog).
``seen`` is ``plans.facts``: what the page sends back so the service can tell a stale click.

The web layer adds the open critical findings as ``warnings`` (promote past them asks first) and each
user's permission; the browser renders and never re-derives any of it.

Pure (no I/O, no Django). Non-goals: permissions, sending, the stale check itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from dashboard.actions import plans
from dashboard.domain.objects import dig_list, dig_map, dig_str, maps
from dashboard.domain.phase import rollout_phase
from dashboard.domain.rs_roles import Role, desired_replicas, replica_set_roles

# The action bar's order and labels: (name, label).
BUTTONS: tuple[tuple[str, str], ...] = (
    ("promote", "Promote"),
    ("promote-full", "Promote full"),
    ("skip-current-step", "Skip step"),
    ("pause", "Pause"),
    ("resume", "Resume"),
    ("retry", "Retry"),
    ("abort", "Abort"),
    ("restart", "Restart"),
    ("undo", "Roll back"),
    ("unwedge", "Unwedge"),
)
# Actions that step past the pause/analysis a finding may be warning about.
PROMOTING = frozenset({"promote", "promote-full", "skip-current-step"})

# plans' notes ("nothing was sent") in a release manager's words.
_NOTE_WORDS = {
    "already fully promoted": "the rollout is already fully promoted",
    "not paused and nothing to promote": "the rollout is not paused and has no step to go on to",
    "the rollout is not paused": "the rollout is not paused",
    "skipped rollback": "the rollout already runs that revision",
}


def _note_words(note: str) -> str:
    return next((words for prefix, words in _NOTE_WORDS.items() if note.startswith(prefix)), note)


def _button(name: str, label: str) -> dict[str, Any]:
    return {
        "name": name,
        "label": label,
        "destructive": name in plans.DESTRUCTIVE,
        "applies": False,
        "reason": "",
        "params": None,
        "choices": [],
        "confirm": "",
        "summary": "",
        "warnings": [],
    }


def _ask(
    button: dict[str, Any],
    action: str,
    rollout: Mapping[str, Any],
    replica_sets: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any] | None,
    now: datetime,
    phase: str | None = None,
    roles: Mapping[str, Role] | None = None,
) -> bool:
    """Fill ``button`` from the plan; True when the action applies."""
    try:
        plan = plans.plan(action, rollout, replica_sets, params, now, phase, roles)
    except plans.Refused as refusal:
        button.update(applies=False, reason=str(refusal))
        return False
    if not plan.requests:
        button.update(applies=False, reason=_note_words(plan.note) or "there is nothing to do")
        return False
    button.update(applies=True, reason="", summary=plan.summary)
    if action in plans.DESTRUCTIVE:
        button["confirm"] = plan.summary
    return True


def _unwedge(
    button: dict[str, Any],
    rollout: Mapping[str, Any],
    replica_sets: Sequence[Mapping[str, Any]],
    now: datetime,
    phase: str,
    roles: Mapping[str, Role],
) -> None:
    names = plans.orphans(rollout, replica_sets, roles)
    if not names:
        button.update(
            applies=False,
            reason="no ReplicaSet is orphaned: every one with pods is stable, the canary, or being scaled "
            "down by the controller",
        )
        return
    by_name = {dig_str(rs, "metadata", "name"): rs for rs in replica_sets}
    button["choices"] = [
        {
            "value": name,
            "label": f"{name} ({desired_replicas(by_name[name])} pods, revision "
            f"{plans.revision_of(by_name[name])})",
        }
        for name in names
    ]
    _ask(button, "unwedge", rollout, replica_sets, {"replicaSet": names[0]}, now, phase, roles)
    if len(names) == 1:
        button["params"] = {"replicaSet": names[0]}
    else:  # the user picks; the dialog's text names the choice
        button["params"] = None
        button["confirm"] = (
            f"Scale the chosen orphaned ReplicaSet to 0 ({len(names)} are orphaned), then let the abort "
            "converge and do a single clean run"
        )


def _undo(
    button: dict[str, Any],
    rollout: Mapping[str, Any],
    replica_sets: Sequence[Mapping[str, Any]],
    phase: str,
) -> None:
    """Undo's refusals are ``plans.plan``'s (the state, then no earlier revision); unlike the others the
    plan itself is not made: whether the template already matches the revision is decided on the full
    object when it runs (the watcher keeps only part of the rollout's template), and then nothing is
    sent — a no-op, never a refusal. (Comparing the templates on every view build was half of this
    function's cost.)"""
    candidates = plans.undo_candidates(rollout, replica_sets)
    try:
        refusal = plans.state_refusal("undo", rollout, phase)
        if refusal:
            raise plans.Refused(refusal)
        target = plans.undo_target(rollout, candidates, 0)
    except plans.Refused as refused:
        button.update(applies=False, reason=str(refused))
        return
    summary = plans.undo_summary(target)
    button.update(applies=True, reason="", summary=summary, confirm=summary)
    current = dig_str(rollout, "status", "currentPodHash")
    choices = []
    for rs in candidates:
        revision = plans.revision_of(rs)
        if not revision or dig_map(rs, "metadata", "labels").get(plans.HASH_LABEL) == current:
            continue
        images = ", ".join(
            str(c.get("image", "")) for c in maps(dig_list(rs, "spec", "template", "spec", "containers"))
        )
        detail = dig_str(rs, "metadata", "name") + (f", {images}" if images else "")
        choices.append({"value": str(revision), "label": f"revision {revision} ({detail})"})
    button["choices"] = choices
    button["params"] = None  # the dialog sends the chosen {"revision": N}; none means the previous one


def action_availability(
    rollout: Mapping[str, Any],
    replica_sets: Sequence[Mapping[str, Any]],
    now: datetime,
    roles: Mapping[str, Role] | None = None,
) -> dict[str, Any]:
    """``{"buttons": [...], "seen": {...}}`` for one Argo Rollout (see the module docstring). ``roles``:
    the ReplicaSets' roles the rest of the view was built with (``replica_set_roles``), so unwedge offers
    exactly the orphans the diagram and the finding name."""
    buttons = []
    phase, _ = rollout_phase(rollout)  # every button's state check reads it: once, not once per button
    if roles is None:
        roles = replica_set_roles(rollout, replica_sets, now)
    for name, label in BUTTONS:
        button = _button(name, label)
        if name == "unwedge":
            _unwedge(button, rollout, replica_sets, now, phase, roles)
        elif name == "undo":
            _undo(button, rollout, replica_sets, phase)
        else:
            _ask(button, name, rollout, replica_sets, None, now, phase)
        buttons.append(button)
    return {"buttons": buttons, "seen": plans.facts(rollout)}
