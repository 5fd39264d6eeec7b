"""The delivery-flow diagram as data: nodes in labelled columns and weighted edges (pure, no I/O).

merge → git → sync → rollout → canary / stable ReplicaSets → users, with analysis → metrics beside the
rollout. Coordinates are decided here so the browser only draws (rect, text, path); that keeps layout
testable and the page script small. A stage with no data (no GitOps engine seen) stays on the diagram and
says "not observed". Non-goal: deciding status or weights; they come from the RolloutView.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from dashboard.domain.findings.releases import RERENDER_RACE
from dashboard.domain.status_icons import tone_of_icon
from dashboard.domain.timeline import RELEASE_STARTED
from dashboard.web.chain import git_node, merge_node, sync_node, view_chain
from dashboard.web.fleet import status_icon
from dashboard.web.timefmt import parse_duration, parse_time, short_age

WIDTH = 1316
TOP = 34  # room for the column labels
GAP = 16  # between stacked nodes of one column

# Column x and node width: wide enough that names, images and reasons wrap instead of being cut.
MERGE_X, GIT_X, SOURCE_W = 16, 178, 150
SYNC_X, SYNC_W = 352, 210
PD_X, PD_W = 592, 240
WORK_X, WORK_W = 868, 206
# The users node is wide enough for a routing object's kind ("VirtualService") and a manager's name.
USERS_X, USERS_W = 1142, 160

COLUMNS = (
    {"label": "Source", "x": MERGE_X},
    {"label": "GitOps", "x": SYNC_X},
    {"label": "Progressive delivery", "x": PD_X},
    {"label": "Workloads", "x": WORK_X},
    {"label": "Traffic", "x": USERS_X},
)

# Rough glyph widths at the diagram's line sizes (12.5 px sans, 11.5 px mono) for wrapping on the server;
# the browser still elides anything that would overflow and keeps the whole text as the tooltip.
SANS_PX, MONO_PX = 7.2, 7.0
LINE_PX, HEAD_PX, BIG_PX, PAD_PX = 18, 42, 30, 14

NOT_OBSERVED = "not observed"


def _node(id_: str, kind: str, x: int, y: int, w: int, h: int, title: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": id_,
        "kind": kind,
        "x": x,
        "y": y + TOP,
        "w": w,
        "h": h,
        "title": title,
        "lines": [],
        "status": "",
        "observed": True,
        "dashed": False,
        "alert": "",
        "marker": None,
        **extra,
    }


def _edge(
    nodes: dict[str, dict[str, Any]],
    src: str,
    dst: str,
    *,
    label: str = "",
    width: float = 1.5,
    dashed: bool = False,
    live: bool = False,
    sub: str = "",
) -> dict[str, Any]:
    """A horizontal S-curve from the right edge of ``src`` to the left edge of ``dst`` (or vertical)."""
    a, b = nodes[src], nodes[dst]
    if a["x"] + a["w"] <= b["x"]:
        x1, y1 = a["x"] + a["w"], a["y"] + a["h"] / 2
        x2, y2 = b["x"], b["y"] + b["h"] / 2
        mid = (x1 + x2) / 2
        d = f"M{x1:.0f},{y1:.0f} C{mid:.0f},{y1:.0f} {mid:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
        lx, ly = mid, (y1 + y2) / 2
    elif b["x"] + b["w"] <= a["x"]:
        x1, y1 = a["x"], a["y"] + a["h"] / 2
        x2, y2 = b["x"] + b["w"], b["y"] + b["h"] / 2
        mid = (x1 + x2) / 2
        d = f"M{x1:.0f},{y1:.0f} C{mid:.0f},{y1:.0f} {mid:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
        lx, ly = mid, (y1 + y2) / 2
    else:  # stacked in one column
        x1 = x2 = a["x"] + a["w"] / 2
        y1, y2 = (a["y"] + a["h"], b["y"]) if a["y"] < b["y"] else (a["y"], b["y"] + b["h"])
        d = f"M{x1:.0f},{y1:.0f} L{x2:.0f},{y2:.0f}"
        lx, ly = x1, (y1 + y2) / 2
    return {
        "from": src,
        "to": dst,
        "d": d,
        "label": label,
        "sub": sub,
        "width": round(width, 1),
        "dashed": dashed,
        "live": live,
        "lx": round(lx),
        "ly": round(ly),
    }


def text_px(text: str, px: float = SANS_PX) -> float:
    """Roughly how wide ``text`` draws: capitals are wider than the average letter in the sans font."""
    if px != SANS_PX:  # monospace: every character the same
        return len(text) * px
    return sum(px * (1.25 if c.isupper() else 1.0) for c in text)


def wrap(text: str, width: int, max_lines: int, px: float = SANS_PX) -> list[str]:
    """``text`` in lines that fit a box ``width`` px wide at the diagram's line size (last one elided).

    A word longer than a line (image names, hashes) starts a line of its own and is split only at the
    line's end, never across the end of the line before ("(GIT" / "OPS_REPOSITORIES)" read as two words).
    (The browser measures the drawn text and elides what still does not fit, keeping it in a tooltip.)"""
    room = max(8 * px, width - 24)

    def fits(line: str) -> bool:
        return text_px(line, px) <= room

    lines: list[str] = []
    # A number keeps its unit on its line ("1 s", "50 %"): a no-break space joins them, and only plain
    # spaces separate words.
    text = re.sub(r"(\d) (s|m|h|ms|%)(?=\W|$)", "\\1\u00a0\\2", text)
    for word in re.split(r"[ \t\n]+", text.strip()):
        while not fits(word):
            cut = 1
            while cut < len(word) and fits(word[: cut + 1]):
                cut += 1
            # Break after a separator where there is one ("rollouts-demo:" / "does-not-exist").
            soft = max(word.rfind(c, 0, cut) for c in "/:-_.@")
            if soft >= cut // 3:
                cut = soft + 1
            lines.append(word[:cut])
            word = word[cut:]
        if not word:
            continue
        if lines and fits(lines[-1] + " " + word):
            lines[-1] += " " + word
        else:
            lines.append(word)
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        last = lines[-1]
        while last and not fits(last + "…"):
            last = last[:-1]
        lines[-1] = last.rstrip() + "…"
    return lines


def fit_node(node: dict[str, Any], max_lines: int = 2) -> dict[str, Any]:
    """Wrap the node's lines to its width (each keeps its whole text as ``full``) and grow it to fit."""
    out: list[dict[str, Any]] = []
    for line in node["lines"]:
        if line.get("until"):  # the countdown is redrawn by the browser every second
            out.append(line)
            continue
        text = str(line.get("text") or "")
        if line.get("nowrap"):  # a name that must not break mid-word: one line, the browser elides it
            out.append({**line, "full": str(line.get("full") or text)})
            continue
        indent = 18 if line.get("icon") else 0
        px = MONO_PX if "mono" in str(line.get("cls") or "") else SANS_PX
        parts = wrap(text, node["w"] - indent, max_lines, px) or [""]
        for i, part in enumerate(parts):
            piece = {**line, "text": part, "full": str(line.get("full") or text)}
            if i:
                piece.pop("icon", None)
                piece["indent"] = indent
            out.append(piece)
    node["lines"] = out
    needed = HEAD_PX + (BIG_PX if node.get("big") else 0) + LINE_PX * len(out) + PAD_PX
    node["h"] = max(node["h"], needed)
    return node


def _stack(nodes: Sequence[dict[str, Any]], y: int) -> int:
    """Place ``nodes`` one under another from ``y``; returns the bottom of the last."""
    for node in nodes:
        node["y"] = y
        y += node["h"] + GAP + (44 if node.get("marker") else 0)
    return y - GAP


def short_image(image: str) -> str:
    """``registry.local/team/checkout:1.42.0`` → ``checkout:1.42.0`` (the node's tooltip has it all)."""
    return image.rsplit("/", 1)[-1]


def _traffic_width(weight: int | None) -> float:
    return 1.5 if not weight else 2 + 10 * min(100, max(0, weight)) / 100


def _pct(value: object) -> str:
    return f"{value} %" if isinstance(value, int) else "—"


def _replica_sets(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [rs for rev in view.get("revisions") or [] for rs in rev.get("replicaSets") or []]


def _find_rs(view: Mapping[str, Any], hash_: str | None) -> dict[str, Any] | None:
    if not hash_:
        return None
    return next((rs for rs in _replica_sets(view) if rs.get("hash") == hash_), None)


def _image_of(rs: Mapping[str, Any] | None, view: Mapping[str, Any], tag: str) -> str:
    if rs and rs.get("images"):
        return str(rs["images"][0])
    for image in view.get("images") or []:
        if tag in (image.get("tags") or []):
            return str(image.get("image", ""))
    return ""


def _has_roles(view: Mapping[str, Any]) -> bool:
    return any(rs.get("role") for rs in _replica_sets(view))


def with_role(view: Mapping[str, Any], role: str) -> list[dict[str, Any]]:
    """The ReplicaSets the domain's one role rule (``rs_roles``) gave ``role``."""
    return [rs for rs in _replica_sets(view) if rs.get("role") == role]


def orphans(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    """ReplicaSets whose role is ``orphaned`` (a view from before roles: running, not stable/current)."""
    if _has_roles(view):
        return with_role(view, "orphaned")
    keep = {view.get("currentPodHash"), view.get("stableRS")}
    return [
        rs
        for rs in _replica_sets(view)
        if (rs.get("replicas") or 0) > 0
        and rs.get("hash") not in keep
        and not {"active", "preview"} & set(rs.get("tags") or [])
    ]


def _new_rs(view: Mapping[str, Any], role: str, promoted: bool) -> tuple[dict[str, Any] | None, str | None]:
    """The canary (or preview) ReplicaSet and its hash: none once promoted or aborted (then the current
    hash is no canary any more — an orphan or scaling down, drawn apart)."""
    current = view.get("currentPodHash")
    if promoted or not current:
        return None, None
    if _has_roles(view):
        rs = _find_rs(view, current)
        if rs is not None and rs.get("role") != role:
            return None, None
        return rs, current
    return _find_rs(view, current), current


def pause_ends_at(view: Mapping[str, Any]) -> str | None:
    """When a timed pause runs out (ISO 8601), or None if the rollout is not in one.

    Reads the domain's pause views (``pauses``: startedAt + durationSeconds) when present, else the raw
    ``pauseConditions`` with the current step's ``pause.duration``.
    """
    for pause in view.get("pauses") or []:
        started, seconds = parse_time(pause.get("startedAt")), pause.get("durationSeconds")
        if started is not None and isinstance(seconds, int) and seconds >= 0:
            return (started + timedelta(seconds=seconds)).isoformat()
    steps = view.get("steps") or []
    index = view.get("currentStepIndex")
    if not isinstance(index, int) or not 0 <= index < len(steps) or not isinstance(steps[index], Mapping):
        return None
    step = steps[index]
    if "kind" in step:  # the domain's step view
        duration = (
            timedelta(seconds=step["durationSeconds"])
            if step.get("kind") == "pause" and isinstance(step.get("durationSeconds"), int)
            else None
        )
    else:
        pause = step.get("pause")
        duration = parse_duration(pause.get("duration")) if isinstance(pause, Mapping) else None
    started = next(
        (
            parse_time(c.get("startTime"))
            for c in view.get("pauseConditions") or []
            if c.get("reason") == "CanaryPauseStep"
        ),
        None,
    )
    if duration is None or started is None:
        return None
    return (started + duration).isoformat()


def _race_change(view: Mapping[str, Any]) -> dict[str, Any] | None:
    """The hash change the open ``rerender-race`` finding of the current release names."""
    current = view.get("currentPodHash")
    for finding in view.get("findings") or ():
        if not isinstance(finding, Mapping) or finding.get("code") != RERENDER_RACE:
            continue
        evidence = finding.get("evidence")
        if not isinstance(evidence, Mapping):
            continue
        if current and evidence.get("currentHash") == current:
            return {
                "from": evidence.get("previousHash"),
                "to": current,
                "at": evidence.get("rerenderAt") or finding.get("since"),
                "stepFrom": evidence.get("stepBefore"),
                "stepTo": evidence.get("stepAfter"),
            }
    return None


def _release_started(events: Sequence[Mapping[str, Any]], current: Any) -> dict[str, Any] | None:
    """The latest ``release.started`` of the current pod hash that names the hash before it."""
    for event in reversed(list(events)):
        before = (event.get("data") or {}).get("previousPodHash")
        if event.get("kind") == RELEASE_STARTED and event.get("podHash") == current and before:
            return {"from": before, "to": current, "at": event.get("at"), "stepFrom": None}
    return None


def hash_change(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any] | None:
    """The current release's pod-hash change, with whether the step index fell back to 0 (re-render race).

    Taken from the view's ``hashChange`` when it has one (a replayed moment), else from the open
    ``rerender-race`` finding — so the diagram's red marker stands exactly as long as the finding does
    (the page keeps only its last timeline events, and a busy release pushed the re-render out of them
    while the finding stayed) — else from the latest ``release.started`` timeline event of the current
    pod hash, which is an ordinary release's quiet note, never a reset.
    """
    change = view.get("hashChange")
    current = view.get("currentPodHash")
    if not (isinstance(change, Mapping) and change.get("to")):
        change = _race_change(view) or _release_started(events, current)
    if change is None or current == view.get("stableRS"):
        return None  # no change seen, or the release already finished
    step_from, step_to = change.get("stepFrom"), change.get("stepTo")
    reset = isinstance(step_from, int) and isinstance(step_to, int) and step_to == 0 and step_from > 0
    text = "Hash changed" + (f" · step {step_from} → 0" if reset else "")
    return {
        "from": change.get("from") or "",
        "to": change.get("to"),
        "at": change.get("at") or "",
        "reset": reset,
        "stepFrom": step_from,
        "stepTo": step_to,
        "text": text,
        "resetText": f"{change.get('from') or '?'} → {change.get('to')}",
    }


def build_flow(
    view: Mapping[str, Any],
    now: datetime,
    events: Sequence[Mapping[str, Any]] = (),
    chain: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The diagram document; ``chain`` is the GitOps chain from ``dashboard.gitops.queries`` when read."""
    strategy = view.get("strategy") or ""
    links = chain if chain else view_chain(view)
    sync_stage = links.get("sync") or {}
    gitops = sync_stage if sync_stage.get("observed") else {}
    nodes: dict[str, dict[str, Any]] = {}
    for id_, x, w, content in (
        ("merge", MERGE_X, SOURCE_W, merge_node(links.get("merge") or {})),
        ("git", GIT_X, SOURCE_W, git_node(links.get("commit") or {}, links.get("pipeline") or {}, gitops)),
        ("sync", SYNC_X, SYNC_W, sync_node(sync_stage)),
    ):
        observed = content["title"] != NOT_OBSERVED
        node = _node(id_, content["kind"], x, 110, w, 114, content["title"], observed=observed)
        node.update({k: v for k, v in content.items() if k not in ("kind", "title")})
        if not observed:  # why, wrapped to the box (the full text is the node's tooltip too)
            node["lines"] = [{"text": str(content.get("hint") or ""), "cls": "muted"}]
        nodes[id_] = fit_node(node, max_lines=6 if not observed else 2)

    analysis = _current_analysis(view)
    nodes["analysis"] = _node(
        "analysis",
        "Analysis",
        PD_X,
        0,
        PD_W,
        78,
        analysis["name"] if analysis else "no analysis running",
        observed=bool(analysis),
        status=_analysis_icon(analysis["status"]) if analysis else "",
    )
    provider_down = any(f.get("code") == "metrics-provider-error" for f in view.get("findings") or ())
    erroring = bool(analysis and analysis["erroring"]) or provider_down
    if analysis:
        nodes["analysis"]["lines"] = [{"text": analysis["summary"], "cls": "muted"}]
        if analysis["status"] in ("Failed", "Error"):
            nodes["analysis"]["alert"] = "critical"
        elif erroring and analysis["status"] in ("Running", "Pending"):
            # Flag it at the first errored measurement, not when the run gives up 4 errors later.
            nodes["analysis"].update(alert="critical", status="critical")
            nodes["analysis"]["lines"].append({"text": "measurements erroring", "cls": "critical"})
    provider = analysis.get("provider") if analysis else None
    nodes["metrics"] = _node(
        "metrics", "Metrics", WORK_X, 0, WORK_W, 78, str(provider or NOT_OBSERVED), observed=bool(provider)
    )
    if not provider:
        nodes["metrics"]["lines"] = [
            {
                "text": "no analysis is running" if not analysis else "the analysis names no provider",
                "cls": "muted",
            }
        ]
    else:
        # What the analysis queries, as its template names it (not a guess of which backend is there).
        address = str((analysis or {}).get("address") or "")
        where = address.split("://", 1)[-1].rstrip("/") if address else "address not in the template"
        nodes["metrics"]["lines"] = [{"text": where, "cls": "muted mono", "full": address}]
        if erroring:
            nodes["metrics"].update(alert="critical", status="critical")
            message = (analysis or {}).get("errorMessage") or "the provider is not answering"
            nodes["metrics"]["lines"].append({"text": str(message), "cls": "critical"})
        else:
            nodes["metrics"]["status"] = "healthy"

    rollout = _node(
        "rollout",
        f"Rollout · {strategy or '?'}",
        PD_X,
        110,
        PD_W,
        176,
        str(view.get("name", "")),
        status=status_icon(view.get("status")),
    )
    step = view.get("step")
    rollout["big"] = f"Step {step}" if step else str(view.get("status") or "")
    rollout["lines"] = [{"text": str(view.get("status") or "Unknown"), "cls": "phase"}]
    if strategy == "Canary":
        source_label = " (replica ratio)" if view.get("weightSource") == "replicas" else ""
        rollout["lines"].append(
            {
                "text": f"Weight {_pct(view.get('setWeight'))} → actual "
                f"{_pct(view.get('actualWeight'))}{source_label}",
                "cls": "",
            }
        )
    ends = pause_ends_at(view)
    if ends:
        rollout["countdown"] = ends
        rollout["lines"].append({"text": "Pause", "cls": "countdown", "until": ends})
    elif view.get("status") == "Paused":
        rollout["lines"].append({"text": "waiting for promotion", "cls": ""})
    change = hash_change(view, events)
    if change and change["reset"]:  # the re-render race: loud, on the node itself
        rollout["alert"] = "critical"
        rollout["marker"] = {
            "text": change["text"],
            "cls": "critical",
            "sub": change["resetText"],
            "reset": True,
        }
    elif change:  # an ordinary release starting: a quiet note, not an alarm
        note = release_note(view, change, now)
        rollout["marker"] = {"text": note, "cls": "note", "sub": "", "reset": False, "role": "release"}
    if view.get("status") == "Degraded":
        rollout["alert"] = "critical"
    nodes["rollout"] = fit_node(rollout)

    canary_hash, stable_hash = view.get("currentPodHash"), view.get("stableRS")
    promoted = bool(canary_hash) and canary_hash == stable_hash
    stable_rs = _find_rs(view, stable_hash)
    if strategy == "BlueGreen":
        preview_rs, preview_hash = _new_rs(view, "preview", promoted)
        top = _workload("canary", "Preview", preview_rs, preview_hash, view, "preview")
        bottom = _workload("stable", "Active", stable_rs, stable_hash, view, "active")
    else:
        canary_rs, new_hash = _new_rs(view, "canary", promoted)
        top = _workload("canary", "Canary", canary_rs, new_hash, view, "canary")
        if view.get("aborted") and new_hash is None and not promoted:
            top["lines"] = [{"text": "update aborted · stable serving", "cls": "muted"}]
            fit_node(top)
        bottom = _workload("stable", "Stable", stable_rs, stable_hash, view, "stable")
    # A slot's role only when a ReplicaSet is drawn in it ("no release in flight" draws none).
    if top.get("observed"):
        top["role"] = "preview" if strategy == "BlueGreen" else "canary"
    if bottom.get("observed"):
        bottom["role"] = "active" if strategy == "BlueGreen" else "stable"
    nodes["canary"], nodes["stable"] = top, bottom
    workloads = [top, bottom]
    for i, rs in enumerate(orphans(view)[:2]):
        node = _workload(f"orphan{i}", "Orphaned", rs, str(rs.get("hash") or ""), view, "")
        node.update(dashed=True, alert="warning", faded=True, apart=True, role="orphaned")
        node["lines"].append(
            {"text": f"rev {rs.get('revision', '?')} · no role, nothing scales it down", "cls": "muted"}
        )
        nodes[node["id"]] = fit_node(node)
        workloads.append(node)
    for i, rs in enumerate(with_role(view, "scaling-down")[:2]):
        node = _workload(f"scaling{i}", "Scaling down", rs, str(rs.get("hash") or ""), view, "")
        end_time = parse_time(rs.get("scaleDownEndsAt"))
        node.update(dashed=True, faded=True, role="scaling-down", scaleDownEndsAt=rs.get("scaleDownEndsAt"))
        left = (
            f"scaled down in {short_age((end_time - now).total_seconds())}"
            if end_time and end_time > now
            else ""
        )
        node["lines"].append(
            {"text": f"rev {rs.get('revision', '?')} · " + (left or "scaling down now"), "cls": "muted"}
        )
        nodes[node["id"]] = fit_node(node)
        workloads.append(node)
    _stack(workloads, 110 + TOP)

    weights = _traffic(view, promoted)
    users = _node("users", "Users", USERS_X, 0, USERS_W, 100, "Users")
    users["lines"] = [{"text": line, "cls": ""} for line in weights["summary"]]
    users["lines"] += router_lines(view)
    router = view.get("router")
    if isinstance(router, Mapping):
        users["router"] = {k: router.get(k) for k in ("kind", "namespace", "name", "lastWriter")}
    fit_node(users)
    middle = (top["y"] + bottom["y"] + bottom["h"]) / 2  # between the two edges that reach it
    users["y"] = round(middle - users["h"] / 2)
    nodes["users"] = users

    edges = [
        _edge(nodes, "merge", "git"),
        _edge(nodes, "git", "sync"),
        _edge(nodes, "sync", "rollout", dashed=not gitops),
        _edge(nodes, "metrics", "analysis", dashed=not provider),
        _edge(nodes, "analysis", "rollout", label="promote / abort", dashed=True),
        _edge(nodes, "rollout", "canary", dashed=not nodes["canary"]["observed"]),
        _edge(nodes, "rollout", "stable"),
        _edge(
            nodes,
            "canary",
            "users",
            label=weights["canaryLabel"],
            sub=weights["canarySub"],
            width=_traffic_width(weights["canary"]),
            live=bool(weights["canary"]),
            dashed=not weights["canary"],
        ),
        _edge(
            nodes,
            "stable",
            "users",
            label=weights["stableLabel"],
            width=_traffic_width(weights["stable"]),
            live=bool(weights["stable"]),
            dashed=not weights["stable"],
        ),
    ]
    edges += [
        _edge(nodes, "rollout", key, dashed=True) for key in nodes if key.startswith(("orphan", "scaling"))
    ]
    for node in nodes.values():  # each node's colour from the one map (dashboard.domain.status_icons)
        node["tone"] = tone_of_icon(node.get("status")) if node.get("status") else ""
    height = max(n["y"] + n["h"] + (44 if n.get("marker") else 0) for n in nodes.values()) + 16
    return {
        "width": WIDTH,
        "height": height,
        "columns": list(COLUMNS),
        "top": TOP,
        "nodes": list(nodes.values()),
        "edges": edges,
    }


def _workload(
    id_: str,
    role: str,
    rs: Mapping[str, Any] | None,
    hash_: str | None,
    view: Mapping[str, Any],
    tag: str,
) -> dict[str, Any]:
    image = _image_of(rs, view, tag) if (rs or hash_) else ""
    title = str(hash_) if hash_ else ("none" if role in ("Canary", "Preview") else NOT_OBSERVED)
    node = _node(
        id_,
        role + (f" · {image.rsplit(':', 1)[-1]}" if ":" in image else ""),
        WORK_X,
        0,
        WORK_W,
        96,
        title,
        observed=bool(hash_),
        mono=bool(hash_),
    )
    if rs is not None:
        node["status"] = {
            "Healthy": "healthy",
            "Progressing": "progressing",
            "ScaledDown": "unknown",
            "ReplicaFailure": "degraded",
        }.get(str(rs.get("status")), "unknown")
        node["lines"] = [
            {"text": f"{rs.get('available', 0)} / {rs.get('replicas', 0)} available", "cls": ""},
            {"text": short_image(image), "cls": "muted mono", "full": image},
        ]
    elif hash_:
        node["lines"] = [{"text": "ReplicaSet not seen yet", "cls": "muted"}]
    elif role in ("Canary", "Preview"):
        node["lines"] = [{"text": "no release in flight", "cls": "muted"}]
    return fit_node(node)


def release_note(view: Mapping[str, Any], change: Mapping[str, Any], now: datetime) -> str:
    """The quiet note for an ordinary release: ``"new release · rev 3 · 2 m ago"``."""
    rs = _find_rs(view, str(change.get("to") or ""))
    revision = rs.get("revision") if rs else None
    if revision is None:
        revision = next(
            (
                rev.get("revision")
                for rev in view.get("revisions") or []
                for r in rev.get("replicaSets") or []
                if r.get("hash") == change.get("to")
            ),
            None,
        )
    started = parse_time(change.get("at"))
    age = f"{short_age((now - started).total_seconds())} ago" if started else ""
    return " · ".join(p for p in ("new release", f"rev {revision}" if revision else "", age) if p)


def _traffic(view: Mapping[str, Any], promoted: bool) -> dict[str, Any]:
    """Desired and actual weights on the edges to users; replica-ratio weights are labelled as such."""
    if view.get("strategy") == "BlueGreen":
        return {
            "canary": 0,
            "stable": 100,
            "canaryLabel": "preview",
            "canarySub": "",
            "stableLabel": "100 %",
            "summary": ["active 100 %", "preview 0 %"],
        }
    desired, actual = view.get("setWeight"), view.get("actualWeight")
    if promoted:  # fully promoted: no canary, the stable ReplicaSet takes everything
        desired = actual = 0
    canary = actual if isinstance(actual, int) else 0
    ratio = view.get("weightSource") == "replicas"
    # Actual on the label, desired underneath when they differ (and the replica-ratio caveat).
    label = f"{canary} %"
    sub = [] if desired == canary else [f"desired {_pct(desired)}"]
    return {
        "canary": canary,
        "stable": 100 - canary,
        "canaryLabel": label,
        "canarySub": " · ".join(sub + (["replica ratio"] if ratio else [])),
        "stableLabel": f"{100 - canary} %",
        "summary": [f"canary {canary} %", f"stable {100 - canary} %"]
        + (["by replica ratio"] if ratio else []),
    }


def router_lines(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What the routing object itself says (``view["router"]``, from ``dashboard.domain.routers``): its
    weights, header and mirror routes by name, the object and who last wrote it. The node is narrow, so
    each line is short and keeps its whole sentence as ``full`` (tooltip, accessible name, details)."""
    router = view.get("router")
    if not isinstance(router, Mapping):
        return []
    kind, via = str(router.get("kind")), str(router.get("via") or "")
    source = f"weights from {kind} {router.get('name')}" + (f" ({via})" if via else "")
    # Kind, name and writer are names: each on a line of its own, never broken mid-word; what does not
    # fit is elided by the browser with the whole sentence in its tooltip. An Ingress says whose it is.
    lines = [
        {
            "text": f"{via} {kind}" if via and kind == "Ingress" else kind,
            "cls": "muted",
            "full": source,
            "nowrap": True,
        },
        {"text": str(router.get("name")), "cls": "mono", "full": source, "nowrap": True},
    ]
    canary, stable = router.get("canaryWeight"), router.get("stableWeight")
    if router.get("problem"):
        lines.append({"text": "no weight read", "cls": "warning", "full": f"router: {router['problem']}"})
    elif canary is not None:
        both = f"{canary} / {stable}" if stable is not None else str(canary)
        full = f"router: canary {canary}" + (f" / stable {stable}" if stable is not None else "")
        lines.append({"text": f"router {both}", "cls": "", "full": full, "nowrap": True})
    for label, key in (("header", "headerRoutes"), ("mirror", "mirrorRoutes")):
        names = ", ".join(str(n) for n in router.get(key) or () if n)
        if names:
            lines.append({"text": f"{label}: {names}", "cls": "muted", "full": f"{label} route: {names}"})
    if router.get("lastWriter"):
        writer = str(router["lastWriter"])
        lines.append({"text": "written by", "cls": "muted", "full": f"written by {writer}"})
        lines.append({"text": writer, "cls": "mono", "full": f"written by {writer}", "nowrap": True})
    return lines


def _analysis_icon(status: str) -> str:
    return {
        "Successful": "healthy",
        "Running": "progressing",
        "Pending": "paused",
        "Failed": "degraded",
        "Error": "critical",
        "Inconclusive": "warning",
    }.get(status, "unknown")


def _current_analysis(view: Mapping[str, Any]) -> dict[str, Any] | None:
    """The newest revision's newest AnalysisRun, if any."""
    for rev in view.get("revisions") or []:
        runs = rev.get("analysisRuns") or []
        if runs:
            run = runs[-1]
            counts = ", ".join(
                f"{run.get(k)} {k}" for k in ("successful", "failed", "inconclusive", "error") if run.get(k)
            )
            metrics = [m for m in run.get("metrics") or [] if isinstance(m, Mapping)]
            latest = [(m.get("measurements") or [None])[-1] for m in metrics]
            errored = [m for m in latest if isinstance(m, Mapping) and m.get("phase") == "Error"]
            return {
                "name": str(run.get("name", "")),
                "status": str(run.get("status", "")),
                "erroring": bool(errored) or any((m.get("consecutiveError") or 0) > 0 for m in metrics),
                "errorMessage": next((str(m.get("message")) for m in errored if m.get("message")), ""),
                "summary": f"{run.get('status', '?')} · rev {rev.get('revision')}"
                + (f" · {counts}" if counts else ""),
                "provider": run.get("provider")
                or next((m.get("provider") for m in run.get("metrics") or [] if m.get("provider")), None),
                "address": next((m.get("address") for m in metrics if m.get("address")), None),
            }
        break  # only the current revision's analysis is "beside the rollout"
    return None
