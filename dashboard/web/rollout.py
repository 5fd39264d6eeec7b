"""Rollout page presenter: a RolloutView → everything the rollout page draws (pure, no I/O).

The browser script is a plain renderer of this document, both for the first paint and for every live
update, so all decisions (step states, countdown end, thresholds, hash-change marker, badges) live here
where they are tested. Non-goal: computing the view itself (the domain does) or performing actions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from dashboard import jsonbody
from dashboard.domain.attention import attention
from dashboard.domain.pod_logs import log_targets
from dashboard.domain.status_icons import page_icon, tone_of_icon, with_tones
from dashboard.guardrails.buttons import freeze_banner, guarded
from dashboard.guardrails.loader import current_rules
from dashboard.guardrails.rules import GuardRules
from dashboard.web.evidence import present_evidence
from dashboard.web.fleet import ARGOCD_HEALTH_ICONS, reason_text, rollout_path, status_icon
from dashboard.web.flow import build_flow, hash_change, pause_ends_at
from dashboard.web.timefmt import age_since, clock, parse_time

SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}
_CONDITION = re.compile(r"result(?:\[\d+\])?\s*(>=|<=|==|>|<)\s*(-?\d+(?:\.\d+)?(?:[eE]-?\d+)?)")


def present_rollout(
    view: Mapping[str, Any],
    now: datetime,
    events: Sequence[Mapping[str, Any]] = (),
    chain: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The rollout page's document; ``events`` are the rollout's recent timeline events (user actions
    included), oldest first; ``chain`` the GitOps chain when it could be read (else the view's own)."""
    presented_findings = findings(view)
    document = {
        "key": f"{view.get('cluster')}/{view.get('namespace')}/{view.get('name')}",
        "header": header(view, now, events),
        "flow": build_flow(view, now, events, chain),
        "steps": steps(view, events),
        "revisions": revisions(view),
        "autoscaler": autoscaler(view),
        "analysis": analysis_charts(view),
        "findings": presented_findings,
        "actions": actions(view, presented_findings, now=now),
        "timeline": timeline(events),
        "logTargets": log_targets(view),
        "updatedAt": view.get("updatedAt") or "",
    }
    with_tones(document)  # every icon's colour from the one map (dashboard.domain.status_icons)
    return document


def header(
    view: Mapping[str, Any], now: datetime, events: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    gitops = view.get("gitops") or view.get("argocd") or {}
    gitops = gitops if isinstance(gitops, Mapping) else {}
    # Argo CD's health only where an Application manages the rollout, as that Application reports it: a
    # badge computed for a rollout no Application manages would contradict the diagram's "no Application".
    health = gitops.get("health") if gitops else None
    source = "application" if health else ""
    images = view.get("images") or []

    def image_for(tag: str) -> str:
        return next((str(i.get("image")) for i in images if tag in (i.get("tags") or [])), "")

    counts = {"critical": 0, "warning": 0, "info": 0}
    for finding in view.get("findings") or []:
        counts[finding.get("severity", "info")] = counts.get(finding.get("severity", "info"), 0) + 1
    phase = str(view.get("status") or "Unknown")
    judged = attention(view)
    return {
        "cluster": view.get("cluster", ""),
        "namespace": view.get("namespace", ""),
        "name": view.get("name", ""),
        "url": rollout_path(str(view.get("cluster")), str(view.get("namespace")), str(view.get("name"))),
        "status": phase,
        "icon": status_icon(phase),
        "message": str(view.get("message") or ""),
        "reason": reason_text(view),
        # The fleet's classification of this rollout (the same function): level, most severe finding.
        "attention": judged["attention"],
        "attentionReason": judged["reason"],
        "reasonCode": judged["reasonCode"],
        "strategy": view.get("strategy") or "",
        "trafficRouter": _traffic_router(view),
        "step": view.get("step") or "",
        "setWeight": view.get("setWeight"),
        "actualWeight": view.get("actualWeight"),
        "weightSource": view.get("weightSource") or "",
        "canaryImage": image_for("canary") or image_for("preview"),
        "stableImage": image_for("stable"),
        "releaseAge": age_since(release_started(view), now),
        "argocd": {
            "observed": bool(health),
            "health": health or "not observed",
            "icon": ARGOCD_HEALTH_ICONS.get(str(health), "unknown"),
            "sync": gitops.get("sync") or "",
            "app": gitops.get("app") or gitops.get("application") or "",
            "source": source,
            # The seeds' trap: a paused canary is "Suspended" (or Degraded when aborted) in Argo CD.
            "note": _health_note(phase, health),
        },
        "findings": counts,
        "pauseEndsAt": pause_ends_at(view),
        "hashChange": hash_change(view, events),
    }


def _health_note(phase: str, health: object) -> str:
    if health == "Suspended" and phase == "Paused":
        return "Suspended in Argo CD · paused by design here"
    if health == "Degraded" and phase == "Paused":
        return "Degraded in Argo CD · paused by design here"
    if health and health != {"Paused": "Suspended"}.get(phase, phase):
        return f"{health} in Argo CD · {phase} here"
    return ""


def describe_step(step: Mapping[str, Any]) -> tuple[str, str]:
    if "kind" in step:  # the domain's step view: {kind, weight, duration, detail}
        kind = str(step["kind"])
        raw: dict[str, Any] = {kind: dict(step.get("detail") or {})}
        if kind == "setWeight":
            raw = {"setWeight": step.get("weight")}
        elif kind == "pause":
            raw = {"pause": {"duration": step.get("duration")}}
        return _describe_raw(raw)
    return _describe_raw(step)


def _describe_raw(step: Mapping[str, Any]) -> tuple[str, str]:
    """(kind, text) for one canary step, e.g. ("setWeight", "10 %") or ("pause", "indefinite")."""
    if "setWeight" in step:
        return "setWeight", f"{step['setWeight']} %"
    if "pause" in step:
        pause = step.get("pause") or {}
        duration = pause.get("duration") if isinstance(pause, Mapping) else None
        return "pause", str(duration) if duration not in (None, "") else "indefinite"
    if "analysis" in step:
        templates = (step.get("analysis") or {}).get("templates") or []
        names = ", ".join(str(t.get("templateName") or t.get("name") or "?") for t in templates)
        return "analysis", names or "analysis"
    if "experiment" in step:
        templates = (step.get("experiment") or {}).get("templates") or []
        return "experiment", ", ".join(str(t.get("name", "?")) for t in templates) or "experiment"
    if "setCanaryScale" in step:
        scale = step.get("setCanaryScale") or {}
        detail = ", ".join(f"{k} {v}" for k, v in scale.items())
        return "setCanaryScale", detail
    kind = next(iter(step), "step")
    return str(kind), ""


def steps(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    raw = view.get("steps") or []
    index = view.get("currentStepIndex")
    current = index if isinstance(index, int) else 0
    items = []
    for i, step in enumerate(raw):
        kind, text = describe_step(step if isinstance(step, Mapping) else {})
        # An aborted update is not running any step: the one it stopped at is "aborted", never "now".
        now_state = "aborted" if view.get("aborted") else "current"
        state = "done" if i < current else now_state if i == current else "pending"
        items.append({"index": i, "kind": kind, "text": text, "state": state})
    change = hash_change(view, events)
    note = ""
    if change and change["reset"]:
        note = (
            f"Revision reached step {change['stepFrom']} when the pod hash changed; it restarted at step 0."
        )
    complete = bool(raw) and current >= len(raw)
    return {
        "items": items,
        "current": current,
        "count": len(raw),
        "complete": complete,
        "note": note,
        "strategy": view.get("strategy") or "",
    }


def revisions(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for rev in view.get("revisions") or []:
        out.append(
            {
                "revision": rev.get("revision"),
                "replicaSets": [
                    {
                        "name": rs.get("name", ""),
                        "hash": rs.get("hash", ""),
                        "tags": list(rs.get("tags") or []),
                        "status": rs.get("status", ""),
                        "icon": _rs_icon(rs.get("status")),
                        "replicas": rs.get("replicas", 0),
                        "available": rs.get("available", 0),
                        "images": [str(i) for i in rs.get("images") or []],
                        "scaleDownDelay": rs.get("scaleDownDelay") or "",
                        # The domain's one role rule (rs_roles): stable, canary, preview, active,
                        # scaling-down (until scaleDownEndsAt), orphaned, old.
                        "role": rs.get("role") or "",
                        "scaleDownEndsAt": rs.get("scaleDownEndsAt") or None,
                        "pods": [
                            {
                                "name": p.get("name", ""),
                                "status": p.get("status", ""),
                                "ready": p.get("ready", ""),
                                "restarts": p.get("restarts", 0),
                                "icon": _pod_icon(str(p.get("status", ""))),
                            }
                            for p in rs.get("pods") or []
                        ],
                    }
                    for rs in rev.get("replicaSets") or []
                ],
                "analysisRuns": [
                    {
                        "name": ar.get("name", ""),
                        "status": ar.get("status", ""),
                        "icon": _analysis_icon(ar.get("status")),
                    }
                    for ar in rev.get("analysisRuns") or []
                ],
            }
        )
    return out


def autoscaler(view: Mapping[str, Any]) -> dict[str, Any] | None:
    """The HPA card: what scales the rollout (``view["autoscaler"]``, dashboard.domain.autoscalers), its
    bounds and counts, its metrics, and how the canary and stable ReplicaSets follow the count."""
    hpa = view.get("autoscaler")
    if not isinstance(hpa, Mapping):
        return None

    def count(value: object) -> str:
        return "—" if value is None else str(value)

    roles: dict[str, int] = {}
    for rev in view.get("revisions") or []:
        for rs in rev.get("replicaSets") or []:
            role = str(rs.get("role") or "")
            if role in ("canary", "stable"):
                roles[role] = roles.get(role, 0) + int(rs.get("replicas") or 0)
    follow = " · ".join(f"{role} {roles[role]}" for role in ("canary", "stable") if role in roles)
    return {
        "name": str(hpa.get("name") or ""),
        "target": f"{hpa.get('targetKind')} {hpa.get('targetName')}",
        "targetsWorkloadRef": bool(hpa.get("targetsWorkloadRef")),
        "rows": [
            {"label": "min", "value": count(hpa.get("minReplicas"))},
            {"label": "max", "value": count(hpa.get("maxReplicas"))},
            {"label": "current", "value": count(hpa.get("currentReplicas"))},
            {"label": "desired", "value": count(hpa.get("desiredReplicas"))},
        ],
        "atMax": bool(hpa.get("atMax")),
        "metrics": [
            f"{m.get('name') or m.get('type')}: {m.get('current') or '?'} (target {m.get('target')})"
            for m in hpa.get("metrics") or []
            if isinstance(m, Mapping)
        ],
        "follow": follow,
        "rolloutReplicas": hpa.get("rolloutReplicas"),
    }


def _rs_icon(status: object) -> str:
    return {
        "Healthy": "healthy",
        "Progressing": "progressing",
        "ReplicaFailure": "degraded",
        "ScaledDown": "unknown",
    }.get(str(status), "unknown")


def _pod_icon(status: str) -> str:
    if status in ("Running", "Completed"):
        return "healthy"
    if status.startswith(("Init:", "Pending", "ContainerCreating", "Terminating")):
        return "progressing"
    if status.endswith("Error") or status.startswith("Err") or status in ("ImagePullBackOff",):
        return "warning"
    return "degraded" if status else "unknown"


def _analysis_icon(status: object) -> str:
    return {
        "Successful": "healthy",
        "Running": "progressing",
        "Pending": "paused",
        "Failed": "degraded",
        "Error": "critical",
        "Inconclusive": "warning",
    }.get(str(status), "unknown")


def parse_threshold(condition: object) -> dict[str, Any] | None:
    """``"result[0] >= 0.99"`` → ``{"op": ">=", "value": 0.99}``; None when not a simple comparison."""
    if not isinstance(condition, str):
        return None
    match = _CONDITION.search(condition)
    if not match:
        return None
    return {"op": match.group(1), "value": float(match.group(2)), "text": condition.strip()}


def measurement_value(raw: object) -> float | None:
    """A measurement's value as a number: ``"0.99"``, ``"[0.99]"``, ``"[0.99, 1]"`` (first); else None.

    ``"[NaN]"`` (Prometheus with no traffic) and infinities are None too: JSON has no such number, and the
    page and its websocket updates are JSON (the raw text still shows what was measured)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return float(raw) if math.isfinite(raw) else None
    if not isinstance(raw, str) or not raw.strip():
        return None
    try:
        value = jsonbody.loads(raw, what="the measurement value", max_bytes=64 * 1024)
    except ValueError:
        return None
    while isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return float(value) if math.isfinite(value) else None


def analysis_charts(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One chart per analysis metric: every measurement against its success/failure threshold."""
    charts = []
    for rev in view.get("revisions") or []:
        for run in rev.get("analysisRuns") or []:
            for metric in run.get("metrics") or []:
                points = [
                    {
                        "at": m.get("startedAt") or m.get("finishedAt") or "",
                        "value": measurement_value(m.get("value")),
                        "raw": str(m.get("value", "")),
                        "phase": m.get("phase", ""),
                    }
                    for m in metric.get("measurements") or []
                ]
                charts.append(
                    {
                        "id": f"{run.get('name')}/{metric.get('name')}",
                        "run": run.get("name", ""),
                        "revision": rev.get("revision"),
                        # The chart is about one metric: its own result, not its run's (a run fails when
                        # any metric fails, and a passing metric drawn "Failed" contradicts the panel).
                        "status": metric.get("phase") or run.get("status", ""),
                        "icon": _analysis_icon(metric.get("phase") or run.get("status")),
                        "runStatus": run.get("status", ""),
                        "metric": metric.get("name", ""),
                        "phase": metric.get("phase", ""),
                        "success": parse_threshold(metric.get("successCondition")),
                        "failure": parse_threshold(metric.get("failureCondition")),
                        "points": points,
                    }
                )
    return charts


def findings(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    items = sorted(view.get("findings") or [], key=lambda f: SEVERITY_ORDER.get(f.get("severity"), 3))
    out = []
    for f in items:
        ev = present_evidence(str(f.get("code", "")), f.get("evidence"))
        out.append(
            {
                "code": f.get("code", ""),
                "severity": f.get("severity", "info"),
                "icon": {"critical": "critical", "warning": "warning"}.get(f.get("severity"), "info"),
                "title": f.get("title", ""),
                "explanation": f.get("explanation", ""),
                "tiles": ev["tiles"],
                "diff": ev["diff"],
                "syncs": ev["syncs"],
                "evidence": ev["facts"],
                "raw": ev["raw"],
                "runbook": [str(line) for line in f.get("runbook") or []],
                "action": f.get("action"),
                "actionParams": f.get("actionParams"),
                "since": clock(f.get("since")),
            }
        )
    return out


PROMOTING = frozenset({"promote", "promote-full", "skip-current-step"})


def _seen(view: Mapping[str, Any]) -> dict[str, Any]:
    """What the POST sends back as ``seen`` (``plans.facts`` of the same rollout, read off the view)."""
    return {
        "podHash": view.get("currentPodHash") or None,
        "stepIndex": view.get("currentStepIndex"),
        "status": view.get("status") or "",
        "paused": bool(view.get("paused")),
        "aborted": bool(view.get("aborted")),
        "resourceVersion": view.get("resourceVersion") or "",
    }


def actions(
    view: Mapping[str, Any],
    presented: Sequence[Mapping[str, Any]] | None = None,
    *,
    rules: GuardRules | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The action bar: the domain's ``availableActions`` (the rules the action service enforces, computed
    from the live objects) plus, on the promoting actions, the open critical findings they would go past
    (then the dialog asks first and names them), the most severe finding's runnable remedy, and on every
    button its guard rails (``dashboard.guardrails.buttons``; ``rules`` default to the policy file's)."""
    open_findings = list(presented if presented is not None else findings(view))
    available = view.get("availableActions") if isinstance(view.get("availableActions"), Mapping) else {}
    critical = [
        ({"code": f["code"], "title": f["title"], "severity": f["severity"]}, f)
        for f in open_findings
        if f.get("severity") == "critical"
    ]
    buttons = []
    for raw in (available or {}).get("buttons") or []:
        button = {**raw, "warnings": [], "choices": list(raw.get("choices") or [])}
        # Findings that themselves suggest this action are its reason, not a warning against it.
        against = [w for w, f in critical if f.get("action") != button["name"]]
        if button["name"] in PROMOTING and button.get("applies") and against:
            button["warnings"] = against
            names = "; ".join(w["title"] for w in against)
            what = button.get("summary") or button.get("label") or button["name"]
            button["confirm"] = f"{what}. Still open: {names}. Go ahead anyway?"
        buttons.append(button)
    key = f"{view.get('cluster')}/{view.get('namespace')}/{view.get('name')}"
    labels = view.get("labels") if isinstance(view.get("labels"), Mapping) else {}
    buttons = guarded(
        buttons, rules if rules is not None else current_rules(), key, labels or {}, now or datetime.now(UTC)
    )
    by_name = {b["name"]: b for b in buttons}
    suggested = None
    for f in open_findings:
        remedy = by_name.get(str(f.get("action") or ""))
        if remedy is not None and remedy.get("applies"):
            suggested = {"action": f["action"], "title": f["title"], "params": f.get("actionParams")}
            break
    return {
        "buttons": buttons,
        "freeze": freeze_banner(buttons),
        "suggested": suggested,
        "seen": dict((available or {}).get("seen") or _seen(view)),
    }


def with_guards(page: Mapping[str, Any], view: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """``page`` with its buttons' guard rails as of ``now`` and the rules in force: a memoised page is
    kept per rollout change, but a freeze begins or ends, and a rule is edited, without one."""
    document = page.get("actions")
    if not isinstance(document, Mapping) or not document.get("buttons"):
        return dict(page)
    key = f"{view.get('cluster')}/{view.get('namespace')}/{view.get('name')}"
    labels = view.get("labels") if isinstance(view.get("labels"), Mapping) else {}
    buttons = guarded(document["buttons"], current_rules(), key, labels or {}, now)
    return {**page, "actions": {**document, "buttons": buttons, "freeze": freeze_banner(buttons)}}


def with_permissions(
    document: Mapping[str, Any], permissions: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """The ``actions`` document with each button's per-user ``allowed`` and ``deniedReason`` added
    (``permissions`` from ``data.action_permissions_sync``); a suggestion the user may not run says so."""
    buttons = []
    for button in document.get("buttons") or []:
        rule = permissions.get(str(button.get("name"))) or {}
        allowed = bool(rule.get("allowed"))
        denied = "" if allowed else str(rule.get("deniedReason") or f"you may not {button.get('name')}")
        buttons.append({**button, "allowed": allowed, "deniedReason": denied})
    return {**document, "buttons": buttons}


TIMELINE_LIMIT = 30

TIMELINE_ICONS = {
    "release.started": "progressing",
    "release.rerendered": "critical",
    "release.superseded": "warning",
    "release.aborted": "degraded",
    "release.promoted": "healthy",
    "release.fully_promoted": "healthy",
    "step.changed": "progressing",
    "weight.changed": "progressing",
    "pause.started": "paused",
    "pause.ended": "progressing",
    "analysis.started": "progressing",
    "analysis.measurement": "info",
    "analysis.finished": "info",
    "phase.changed": "info",
    "finding.raised": "warning",
    "finding.cleared": "healthy",
    "action": "info",
}


# A user action's icon says how it ended (the audit's outcomes).
ACTION_ICONS = {"done": "healthy", "accepted": "progressing", "denied": "warning", "refused": "warning",
                "failed": "degraded", "conflict": "warning",
                # guard rails: a request and what became of it
                "requested": "paused", "approved": "healthy", "rejected": "warning", "expired": "warning",
                "voided": "warning"}  # fmt: skip


def event_icon(event: Mapping[str, Any]) -> str:
    data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
    if event.get("kind") == "action":
        return ACTION_ICONS.get(str((data or {}).get("outcome")), "info")
    if event.get("kind") == "kube.event":  # a Kubernetes Event: Warning or Normal
        return "warning" if (data or {}).get("type") == "Warning" else "info"
    if event.get("kind") == "finding.raised":  # a raised finding is drawn at its own severity
        return page_icon("severity", (data or {}).get("severity") or "warning")
    return TIMELINE_ICONS.get(str(event.get("kind")), "info")


# What a timeline can be filtered to: (value, label). A Kubernetes Event's value names the kind of object it
# is about (``kube:Pod``); choosing ``kube`` shows them all.
TIMELINE_FILTERS = (
    ("all", "Everything"),
    ("progress", "Steps, weights, phases"),
    ("analysis", "Analysis"),
    ("findings", "Findings"),
    ("actions", "User actions"),
    ("kube", "Kubernetes Events"),
    ("kube:Rollout", "Events · Rollout"),
    ("kube:ReplicaSet", "Events · ReplicaSets"),
    ("kube:Pod", "Events · Pods"),
    ("kube:AnalysisRun", "Events · AnalysisRuns"),
)


def event_filter(event: Mapping[str, Any]) -> str:
    """The filter value an event is shown under (``TIMELINE_FILTERS``)."""
    kind = str(event.get("kind") or "")
    data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
    if kind == "kube.event":
        about = (data or {}).get("object")
        kind_of = about.get("kind") if isinstance(about, Mapping) else None
        return f"kube:{kind_of or 'Rollout'}"
    if kind == "action":
        return "actions"
    if kind.startswith("finding."):
        return "findings"
    if kind.startswith("analysis."):
        return "analysis"
    return "progress"


def event_about(event: Mapping[str, Any]) -> str:
    """For a Kubernetes Event, what it is about and who wrote it (``Pod web-1 · kubelet``), else ``""``."""
    data = event.get("data")
    if event.get("kind") != "kube.event" or not isinstance(data, Mapping):
        return ""
    about = data.get("object")
    about = about if isinstance(about, Mapping) else {}
    child = about.get("kind") not in (None, "", "Rollout")
    parts = [f"{about.get('kind')} {about.get('name')}" if child else "", str(data.get("source") or "")]
    return " · ".join(p for p in parts if p)


def event_critical(event: Mapping[str, Any]) -> bool:
    data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
    if event.get("kind") == "finding.raised":
        return (data or {}).get("severity") == "critical"
    return event.get("kind") in ("release.rerendered", "release.aborted")


def with_actions(
    events: Sequence[Mapping[str, Any]], actions: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """Recorded timeline events and the audit's user actions in one list, oldest first.

    The sort is stable, so events recorded at the same moment keep their recorded order; an event
    without a readable time sorts first rather than breaking the page.
    """
    if not actions:
        return list(events)
    floor = datetime.min.replace(tzinfo=UTC)
    return sorted([*events, *actions], key=lambda e: parse_time(e.get("at")) or floor)


def timeline(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The most recent timeline events, newest first, as clock time + icon + title."""
    recent = list(events)[-TIMELINE_LIMIT:]
    return [
        {
            "at": str(e.get("at") or ""),
            "clock": clock(e.get("at")),
            "kind": str(e.get("kind") or ""),
            "icon": event_icon(e),
            "tone": tone_of_icon(event_icon(e)),
            "title": str(e.get("title") or e.get("kind") or ""),
            "critical": event_critical(e),
            "filter": event_filter(e),
            "about": event_about(e),
        }
        for e in reversed(recent)
    ]


def _traffic_router(view: Mapping[str, Any]) -> str:
    router = view.get("trafficRouter") or view.get("trafficRouting")
    if isinstance(router, bool):
        return "traffic-routed" if router else "replica-weighted"
    if isinstance(router, Mapping):
        return ", ".join(str(k) for k in router)
    return str(router) if router else ""


def release_started(view: Mapping[str, Any]) -> object:
    """When the current release began: the view's ``releaseStartedAt``, else its ReplicaSet's creation."""
    if view.get("releaseStartedAt"):
        return view["releaseStartedAt"]
    current = view.get("currentPodHash")
    for rev in view.get("revisions") or []:
        for rs in rev.get("replicaSets") or []:
            if rs.get("hash") == current and rs.get("createdAt"):
                return rs["createdAt"]
    return None
