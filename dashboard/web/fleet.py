"""Fleet presenter: a live-bus summary row → one row of the fleet table (pure, no I/O).

Decides the attention group each rollout falls in, the reason shown under its status, and the sort
order ("attention, then release age"). Filtering and grouping in the browser only read these fields.
Non-goal: computing status or weights — those come from the domain, already decided.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

from dashboard.domain import attention as attention_rules
from dashboard.domain.status_icons import page_icon, page_tone
from dashboard.web.timefmt import age_since, parse_time

# Order of the groups on the page and in the "needs attention first" sort: the domain's attention levels.
GROUPS: tuple[tuple[str, str, str], ...] = (
    ("critical", "Critical", "failed, aborted or an open critical finding"),
    ("attention", "Needs attention", "a warning finding or a pause nobody planned"),
    ("waiting", "Waiting for promotion", "a person needs to promote or approve"),
    ("progressing", "Progressing", "moving through steps"),
    ("healthy", "Healthy", "fully promoted"),
)
_GROUP_RANK = {name: rank for rank, (name, _, _) in enumerate(GROUPS)}

PROMOTION_PAUSES = attention_rules.PROMOTION_PAUSES

STATUS_ICONS = {
    "Healthy": "healthy",
    "Progressing": "progressing",
    "Paused": "paused",
    "Degraded": "degraded",
}


# The progressive-delivery controller behind a row: (label shown, icon name in the page's sprite).
CONTROLLERS = {"argo-rollouts": ("Argo Rollouts", "argo"), "flagger": ("Flagger", "flagger")}
DEFAULT_CONTROLLER = "argo-rollouts"
# Argo CD health words (health.lua's vocabulary) → icon names, wherever they are shown beside a phase.
ARGOCD_HEALTH_ICONS = {
    "Healthy": "healthy",
    "Progressing": "progressing",
    "Suspended": "paused",
    "Degraded": "degraded",
    "Missing": "warning",
    "Unknown": "unknown",
}


def status_icon(status: object) -> str:
    return page_icon("rollout", status)


def _as_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """A summary row from before attention travelled with it: its severity counts as findings."""
    counts = row.get("findings") if isinstance(row.get("findings"), Mapping) else {}
    findings = [
        {"severity": sev}
        for sev in ("critical", "warning", "info")
        for _ in range(int((counts or {}).get(sev) or 0))
    ]
    return {**row, "findings": findings}


def attention_of(row: Mapping[str, Any]) -> dict[str, str]:
    """The row's attention, reason and reasonCode (``dashboard.domain.attention``, the one rule)."""
    if row.get("attention") in _GROUP_RANK:
        return {
            "attention": str(row["attention"]),
            "reason": str(row.get("reason") or ""),
            "reasonCode": str(row.get("reasonCode") or ""),
        }
    return attention_rules.attention(_as_view(row))


def attention_group(row: Mapping[str, Any]) -> str:
    """Which group a rollout belongs to: its attention level."""
    return attention_of(row)["attention"]


def reason_text(row: Mapping[str, Any]) -> str:
    """The status reason in words (the controller's message, made readable where it is a code)."""
    return attention_rules.status_reason(row)


def rollout_path(cluster: str, namespace: str, name: str) -> str:
    return "/rollouts/" + "/".join(quote(part, safe="") for part in (cluster, namespace, name)) + "/"


def fleet_row(row: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """Everything the fleet table shows for one rollout."""
    cluster, namespace, name = (
        str(row.get("cluster", "")),
        str(row.get("namespace", "")),
        str(row.get("name", "")),
    )
    current, stable = row.get("currentPodHash") or "", row.get("stableRS") or ""
    findings = row.get("findings") or {}
    counts = {sev: int(findings.get(sev) or 0) for sev in ("critical", "warning", "info")}
    step = row.get("step")
    step_index, step_count = _split_step(step)
    labels = row.get("labels") or {}
    started = parse_time(row.get("releaseStartedAt"))
    judged = attention_of(row)
    group = judged["attention"]
    controller = str(row.get("controller") or DEFAULT_CONTROLLER)
    health = str(row.get("gitopsHealth") or "")
    return {
        "key": row.get("key") or f"{cluster}/{namespace}/{name}",
        "cluster": cluster,
        "namespace": namespace,
        "name": name,
        "url": rollout_path(cluster, namespace, name),
        "strategy": row.get("strategy") or "",
        "controller": controller,
        "controllerLabel": CONTROLLERS.get(controller, (controller, ""))[0],
        # "What the sync engine says" beside the rollout's own status; "" when no Application manages it.
        "gitops": f"{health} · {row.get('gitopsSync')}" if health and row.get("gitopsSync") else health,
        "gitopsIcon": ARGOCD_HEALTH_ICONS.get(health, "unknown") if health else "",
        "gitopsTone": page_tone("argocd", health) if health else "",
        "status": row.get("status") or "Unknown",
        "icon": status_icon(row.get("status")),
        "tone": page_tone("rollout", row.get("status")),
        "reason": judged["reason"],
        "reasonCode": judged["reasonCode"],
        "attention": group,
        "group": group,
        "step": step or "",
        "stepIndex": step_index,
        "stepCount": step_count,
        "setWeight": row.get("setWeight"),
        "actualWeight": row.get("actualWeight"),
        "weightSource": row.get("weightSource") or "",
        # A canary hash is only interesting while it differs from stable (mid-release).
        "canaryHash": current if current and current != stable else "",
        "stableHash": stable,
        "age": age_since(row.get("releaseStartedAt"), now),
        "startedAt": started.isoformat() if started else "",
        "findings": counts,
        "labels": {str(k): str(v) for k, v in labels.items()},
        "images": [dict(i) for i in row.get("images") or () if isinstance(i, Mapping)],
        "gitRevision": str(row.get("gitRevision") or ""),
        "application": str(row.get("application") or ""),
        "applicationSet": str(row.get("applicationSet") or ""),
    }


def _split_step(step: object) -> tuple[int | None, int | None]:
    if isinstance(step, str) and "/" in step:
        left, right = step.split("/", 1)
        if left.strip().isdigit() and right.strip().isdigit():
            return int(left), int(right)
    return None, None


def sort_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """Attention first: group, then most critical/warning findings, then the oldest release, then name."""
    findings = row["findings"]
    return (
        _GROUP_RANK.get(row["group"], 0),
        -findings["critical"],
        -findings["warning"],
        row["startedAt"] or "9999",
        row["cluster"],
        row["namespace"],
        row["name"],
    )


def fleet_rows(rows: Iterable[Mapping[str, Any]], now: datetime) -> list[dict[str, Any]]:
    return sorted((fleet_row(row, now) for row in rows), key=sort_key)


def group_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts = {name: 0 for name, _, _ in GROUPS}
    for row in rows:
        counts[row["group"]] = counts.get(row["group"], 0) + 1
    return counts
