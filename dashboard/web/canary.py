"""Canary page presenter: a Flagger CanaryView (``dashboard.domain.flagger``) → what the rollout page draws.

A Canary shares the rollout page (same key space, same live path); the document says ``kind: "canary"``
and carries Flagger's own words beside the mapped status: the phase, "iteration i of n", the notes where
Flagger's status misleads (what it says / what is true / where the truth came from), the gates and what
each is waiting for, the analysis checks and the parsed events. The diagram is laid out here like the
Rollout one (``dashboard.web.flow`` draws both): target → Canary → canary / primary → users, with the
analysis above and the gates below. Non-goals: computing the view (the domain does) and acting (the gate
server's ``/api/v1/canaries/…/actions/…`` does; who may is decided per user by the page view).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from dashboard.domain.attention import attention
from dashboard.domain.status_icons import page_icon, tone_of_icon, with_tones
from dashboard.web.fleet import reason_text, rollout_path, status_icon
from dashboard.web.flow import TOP, _edge, _node, _traffic_width
from dashboard.web.rollout import findings, timeline
from dashboard.web.timefmt import age_since, clock

CONTROLLER = "flagger"
CONTROLLERS = {"flagger": "Flagger", "argo-rollouts": "Argo Rollouts"}

GATE_ICONS = {"waiting": "paused", "passed": "healthy", "armed": "warning", "idle": "unknown"}
CHECK_ICONS = {"Successful": "healthy", "Failed": "degraded"}
# The gate server's action that answers each gate type (dashboard.flagger_gates.services).
GATE_ACTIONS = {
    "confirm-rollout": ("promote", "Approve"),
    "confirm-promotion": ("promote", "Promote"),
    "confirm-traffic-increase": ("pause", "Hold traffic"),
    "rollback": ("abort", "Roll back"),
}
# Flagger's phases in words (notes/flagger.md §5): what each means for the person looking.
PHASE_WORDS = {
    "": "not initialised yet",
    "Initializing": "creating the primary",
    "Initialized": "primary serving, no analysis",
    "Waiting": "waiting for confirm-rollout",
    "Progressing": "analysing the canary",
    "WaitingPromotion": "waiting for confirm-promotion",
    "Promoting": "copying the canary spec to the primary",
    "Finalising": "routing all traffic to the primary",
    "Succeeded": "promoted",
    "Failed": "rolled back",
    "Terminating": "being deleted",
    "Terminated": "deleted",
}
WIDTH = 1200
COLUMNS = (
    {"label": "Target", "x": 16},
    {"label": "Progressive delivery", "x": 300},
    {"label": "Workloads", "x": 640},
    {"label": "Traffic", "x": 960},
)


def _text(value: object) -> str:
    if value is None:
        return "—"
    return value if isinstance(value, str) else json.dumps(value)


def _split(step: object) -> tuple[int, int] | None:
    if isinstance(step, str) and "/" in step:
        left, right = step.split("/", 1)
        if left.isdigit() and right.isdigit():
            return int(left), int(right)
    return None


def progress_text(view: Mapping[str, Any]) -> str:
    """ "step 2 of 5 (weight 20 %)" for the canary strategy, "iteration 3 of 10" for A/B and blue/green."""
    split = _split(view.get("step"))
    if split is None:
        return ""
    done, total = split
    if view.get("flaggerStrategy") in ("canary", None, ""):
        return f"step {done} of {total}"
    return f"iteration {done} of {total}"


def _image(view: Mapping[str, Any], tag: str) -> str:
    return next((str(i.get("image")) for i in view.get("images") or () if tag in (i.get("tags") or ())), "")


def header(view: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    phase = str(view.get("phase") or "")
    status = str(view.get("status") or "Unknown")
    gitops = view.get("gitops") if isinstance(view.get("gitops"), Mapping) else {}
    # Only where an Application manages it (issue 16 §4): no badge computed for an unmanaged canary.
    argo_health = (gitops or {}).get("health")
    counts = {"critical": 0, "warning": 0, "info": 0}
    for finding in view.get("findings") or ():
        severity = finding.get("severity", "info")
        counts[severity] = counts.get(severity, 0) + 1
    cluster, namespace, name = (str(view.get(k) or "") for k in ("cluster", "namespace", "name"))
    return {
        "cluster": cluster,
        "namespace": namespace,
        "name": name,
        "url": rollout_path(cluster, namespace, name),
        "controller": "Flagger",
        "kind": "Canary",
        "status": status,
        "icon": status_icon(status),
        "phase": phase or "(none)",
        "phaseWords": PHASE_WORDS.get(phase, ""),
        "phaseSince": clock(view.get("phaseSince")),
        "message": str(view.get("message") or ""),
        "reason": reason_text(view),
        # The fleet's classification of this canary (the same function): level, most severe finding.
        **_attention(view),
        "strategy": str(view.get("strategy") or ""),
        "flaggerStrategy": str(view.get("flaggerStrategy") or ""),
        "provider": str(view.get("provider") or ""),
        "step": view.get("step") or "",
        "progress": progress_text(view),
        "setWeight": view.get("setWeight"),
        "actualWeight": view.get("actualWeight"),
        "maxWeight": view.get("maxWeight"),
        "weightSource": str(view.get("weightSource") or ""),
        "failedChecks": failed_checks(view),
        "threshold": view.get("threshold") or 1,
        "interval": str(view.get("interval") or ""),
        "suspended": bool(view.get("suspended")),
        "canaryImage": _image(view, "canary"),
        "stableImage": _image(view, "stable"),
        "releaseAge": age_since(view.get("phaseSince"), now),
        "argocd": {
            "observed": bool(argo_health),
            "health": argo_health or "not observed",
            "icon": page_icon("argocd", argo_health),
            "sync": (gitops or {}).get("sync") or "",
            "app": (gitops or {}).get("app") or "",
            "source": "application" if argo_health else "",
            "note": "",
        },
        "findings": counts,
    }


def notes(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Where Flagger's status misleads: the field, what it says, what is true and where that came from."""
    return [
        {
            "code": str(n.get("code") or ""),
            "field": str(n.get("field") or ""),
            "says": _text(n.get("statusValue")),
            "truth": _text(n.get("value")),
            "source": str(n.get("source") or ""),
            "text": str(n.get("text") or ""),
        }
        for n in view.get("notes") or ()
        if isinstance(n, Mapping)
    ]


def gates(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each gate, what it is waiting for, and the action that answers it (offered only when it would)."""
    out = []
    for gate in view.get("gates") or ():
        if not isinstance(gate, Mapping):
            continue
        kind, state = str(gate.get("type") or ""), str(gate.get("state") or "idle")
        action, label = GATE_ACTIONS.get(kind, ("", ""))
        live = state == "waiting" or (kind == "rollback" and state == "armed")
        out.append(
            {
                "name": str(gate.get("name") or ""),
                "type": kind,
                "state": state,
                "icon": GATE_ICONS.get(state, "unknown"),
                "waitingFor": str(gate.get("waitingFor") or ""),
                "since": clock(gate.get("since")),
                "action": action if live or kind == "confirm-traffic-increase" else "",
                "actionLabel": label,
                "destructive": action == "abort",
            }
        )
    return out


def failed_checks(view: Mapping[str, Any]) -> int:
    """The failed checks as they were: a Failed canary's status was reset by the rollback (see its note)."""
    for note in view.get("notes") or ():
        if isinstance(note, Mapping) and note.get("field") == "status.failedChecks":
            value = note.get("value")
            if isinstance(value, int):
                return value
    return int(view.get("failedChecks") or 0)


# The Canary's action bar: the gate answers that apply now (Flagger asks through its gates; an answer to a
# gate nobody asks for changes nothing), in the rollout page's ``actions`` shape.
_CANARY_BUTTONS = (("promote", "Promote"), ("pause", "Hold traffic"), ("abort", "Roll back"))


def _attention(view: Mapping[str, Any]) -> dict[str, str]:
    judged = attention(view)
    return {
        "attention": judged["attention"],
        "attentionReason": judged["reason"],
        "reasonCode": judged["reasonCode"],
    }


def canary_action_bar(view: Mapping[str, Any]) -> dict[str, Any]:
    open_gates = [g for g in gates(view) if g["action"]]
    phase = str(view.get("phase") or "")
    critical = [
        {"code": str(f.get("code")), "title": str(f.get("title")), "severity": "critical"}
        for f in view.get("findings") or ()
        if isinstance(f, Mapping) and f.get("severity") == "critical"
    ]
    buttons = []
    for name, label in _CANARY_BUTTONS:
        gate = next((g for g in open_gates if g["action"] == name), None)
        words = PHASE_WORDS.get(phase, phase or "unknown")
        button: dict[str, Any] = {
            "name": name,
            "label": gate["actionLabel"] if gate else label,
            "destructive": name == "abort",
            "applies": gate is not None,
            "reason": "" if gate else f"no Flagger gate is waiting for this answer (the canary is {words})",
            "params": None,
            "choices": [],
            "confirm": "",
            "summary": f"Answer Flagger's {gate['type']} gate: {gate['actionLabel']}" if gate else "",
            "warnings": critical if gate and name == "promote" else [],
        }
        if gate and name == "abort":
            button["confirm"] = "Roll the canary back: Flagger routes all traffic to the primary"
        if button["warnings"]:
            titles = "; ".join(w["title"] for w in critical)
            button["confirm"] = f"{button['summary']}. Still open: {titles}. Go ahead anyway?"
        buttons.append(button)
    return {
        "buttons": buttons,
        "suggested": None,
        "seen": {"status": view.get("status") or "", "phase": phase},
    }


def checks(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": str(c.get("name") or ""),
            "kind": str(c.get("kind") or ""),
            "type": str(c.get("type") or ""),
            "threshold": str(c.get("threshold") or ""),
            "lastValue": c.get("lastValue") if c.get("lastValue") is not None else "",
            "lastResult": str(c.get("lastResult") or "no result yet"),
            "icon": CHECK_ICONS.get(str(c.get("lastResult")), "unknown"),
            "message": str(c.get("message") or ""),
            "at": clock(c.get("at")),
            "source": str(c.get("source") or ""),
        }
        for c in view.get("checks") or ()
        if isinstance(c, Mapping)
    ]


def events(view: Mapping[str, Any], limit: int = 40) -> list[dict[str, Any]]:
    """Flagger's Kubernetes Events about the Canary, newest first."""
    items = [e for e in view.get("events") or () if isinstance(e, Mapping)][-limit:]
    return [
        {
            "at": clock(e.get("lastTimestamp")),
            "type": str(e.get("type") or "Normal"),
            "icon": "warning" if e.get("type") == "Warning" else "info",
            "kind": str(e.get("kind") or ""),
            "message": str(e.get("message") or ""),
            "count": e.get("count") or 1,
            "combined": bool(e.get("combined")),
        }
        for e in reversed(items)
    ]


def _workload(view: Mapping[str, Any], role: str) -> Mapping[str, Any]:
    return next(
        (w for w in view.get("workloads") or () if isinstance(w, Mapping) and w.get("role") == role), {}
    )


def build_canary_flow(view: Mapping[str, Any]) -> dict[str, Any]:
    """The Canary's diagram: target → Canary (analysis above, gates below) → canary / primary → users."""
    phase = str(view.get("phase") or "")
    target = view.get("targetRef") if isinstance(view.get("targetRef"), Mapping) else {}
    nodes: dict[str, dict[str, Any]] = {}

    applied, promoted = str(view.get("lastAppliedSpec") or ""), str(view.get("lastPromotedSpec") or "")
    nodes["target"] = _node(
        "target", f"Target · {(target or {}).get('kind') or 'Deployment'}", 16, 110, 240, 114,
        str((target or {}).get("name") or "not observed"), observed=bool(target),
    )  # fmt: skip
    nodes["target"]["lines"] = [
        {"text": f"applied spec {applied or '—'}", "cls": "mono muted"},
        {"text": f"promoted spec {promoted or '—'}", "cls": "mono muted"},
    ]
    if applied and applied == promoted and phase in ("Progressing", "WaitingPromotion"):
        nodes["target"]["lines"].append({"text": "config-only change (trackedConfigs)", "cls": "muted"})

    found = checks(view)
    failed, threshold = failed_checks(view), int(view.get("threshold") or 1)
    analysis = _node(
        "analysis", "Analysis", 300, 0, 280, 78, f"{len(found)} checks · every {view.get('interval') or '?'}",
        observed=bool(found),
    )  # fmt: skip
    analysis["lines"] = [{"text": f"failed checks {failed} / threshold {threshold}", "cls": "muted"}]
    analysis["status"] = (
        "degraded" if phase == "Failed" else "warning" if failed else "healthy" if found else ""
    )
    if failed:
        analysis["alert"] = "warning"
    nodes["analysis"] = analysis

    status = str(view.get("status") or "Unknown")
    canary = _node(
        "rollout", f"Canary · Flagger · {view.get('flaggerStrategy') or 'canary'}", 300, 110, 280, 176,
        str(view.get("name") or ""), status=status_icon(status),
    )  # fmt: skip
    progress = progress_text(view)
    canary["big"] = progress[:1].upper() + progress[1:] if progress else (phase or status)
    canary["lines"] = [
        {"text": f"Flagger: {phase or '(none)'}", "cls": "phase"},
        {"text": PHASE_WORDS.get(phase, ""), "cls": "muted"},
        {"text": f"status here: {status}", "cls": "muted"},
        {"text": f"weight {_pct(view.get('setWeight'))} of max {_pct(view.get('maxWeight'))}", "cls": ""},
    ]
    if view.get("suspended"):
        canary["lines"].append({"text": "suspended (spec.suspend)", "cls": "muted"})
    if phase == "Failed":
        canary["alert"] = "critical"
    notes_found = notes(view)
    if notes_found:
        canary["marker"] = {
            "text": f"{len(notes_found)} misleading status field{'s' if len(notes_found) > 1 else ''}",
            "cls": "warning",
            "sub": "",
            "reset": False,
            "role": "notes",
        }
    nodes["rollout"] = canary

    gate_list = gates(view)
    waiting = [g for g in gate_list if g["state"] == "waiting"]
    gate_node = _node(
        "gates", "Gates", 300, 344, 280, 52 + 18 * max(1, len(gate_list)),
        f"waiting: {waiting[0]['name']}" if waiting else "no gate waiting", observed=bool(gate_list),
        status="paused" if waiting else "",
    )  # fmt: skip
    gate_node["lines"] = [{"text": f"{g['name']} · {g['state']}", "cls": "muted"} for g in gate_list]
    if waiting:
        gate_node["alert"] = "warning"
    nodes["gates"] = gate_node

    canary_w, primary_w = _workload(view, "canary"), _workload(view, "primary")
    for id_, role, y, workload, tag, name in (
        ("canary", "Canary", 110, canary_w, "canary", (target or {}).get("name")),
        ("stable", "Primary", 218, primary_w, "stable", view.get("primary")),
    ):
        image = _image(view, tag)
        node = _node(
            id_, role + (f" · {image.rsplit(':', 1)[-1]}" if ":" in image else ""), 640, y, 220, 96,
            str(workload.get("name") or name or "not observed"), observed=bool(workload or name), mono=True,
        )  # fmt: skip
        if workload:
            ready, desired = workload.get("ready"), workload.get("desired")
            node["lines"] = [
                {"text": f"{ready if ready is not None else '?'} / {desired or 0} ready", "cls": ""}
            ]
            node["status"] = (
                "healthy" if desired and ready == desired else "unknown" if not desired else "progressing"
            )
        else:
            node["lines"] = [{"text": "workload not watched", "cls": "muted"}]
        if image:
            node["lines"].append({"text": image, "cls": "muted mono"})
        nodes[id_] = node

    nodes["users"] = _node("users", "Users", 960, 140, 150, 100, "Users")
    actual = view.get("actualWeight")
    weight = actual if isinstance(actual, int) and not isinstance(actual, bool) else 0
    nodes["users"]["lines"] = [
        {"text": f"canary {weight} %", "cls": ""},
        {"text": f"primary {100 - weight} %", "cls": ""},
    ]
    desired = view.get("setWeight")
    edges = [
        _edge(nodes, "target", "rollout"),
        _edge(nodes, "analysis", "rollout", label="promote / roll back", dashed=True),
        _edge(nodes, "gates", "rollout", dashed=True),
        _edge(nodes, "rollout", "canary", dashed=not canary_w),
        _edge(nodes, "rollout", "stable"),
        _edge(
            nodes, "canary", "users", label=f"{weight} %",
            sub=f"status {_pct(desired)}" if desired != weight else "",
            width=_traffic_width(weight), live=bool(weight), dashed=not weight,
        ),
        _edge(
            nodes, "stable", "users", label=f"{100 - weight} %",
            width=_traffic_width(100 - weight), live=weight < 100, dashed=weight >= 100,
        ),
    ]  # fmt: skip
    for node in nodes.values():  # each node's colour from the one map (dashboard.domain.status_icons)
        node["tone"] = tone_of_icon(node.get("status")) if node.get("status") else ""
    height = max(n["y"] + n["h"] for n in nodes.values()) + 16
    return {
        "width": WIDTH,
        "height": height,
        "columns": list(COLUMNS),
        "top": TOP,
        "nodes": list(nodes.values()),
        "edges": edges,
    }


def _pct(value: object) -> str:
    return f"{value} %" if isinstance(value, int) and not isinstance(value, bool) else "—"


def present_canary(
    view: Mapping[str, Any], now: datetime, recorded: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """The rollout page's document for a Flagger Canary (``kind: "canary"``)."""
    document = {
        "kind": "canary",
        "key": f"{view.get('cluster')}/{view.get('namespace')}/{view.get('name')}",
        "header": header(view, now),
        "flow": build_canary_flow(view),
        "notes": notes(view),
        "gates": gates(view),
        "checks": checks(view),
        "events": events(view),
        "findings": findings(view),
        "actions": canary_action_bar(view),
        "timeline": timeline(recorded),
        "updatedAt": view.get("updatedAt") or "",
    }
    with_tones(document)  # every icon's colour from the one map (dashboard.domain.status_icons)
    return document
