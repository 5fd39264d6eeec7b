"""History presenters: the releases list and one release's timeline page (pure, no I/O).

``present_releases`` turns recorded releases into table rows (outcome, times, duration, images, steps
reached, git revision, who acted). ``present_release`` turns one release's events into what its
timeline page draws: the weight/step chart with markers, the event list, and one flow diagram per
recorded moment for the scrubber — drawn by the live page's flow presenter from ``replay`` frames, so
there is one way a diagram is laid out. Non-goal: reading the database (``dashboard.web.data`` does).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote

from dashboard.web.chain import release_chain
from dashboard.web.flow import build_flow, fit_node, short_image
from dashboard.web.replay import chart, replay
from dashboard.web.rollout import event_about, event_critical, event_filter, event_icon
from dashboard.web.timefmt import parse_time, short_age

OUTCOMES = {
    "in_progress": ("In progress", "progressing"),
    "promoted": ("Promoted", "healthy"),
    "aborted": ("Aborted", "degraded"),
    "superseded": ("Superseded", "warning"),
}


def release_path(cluster: str, namespace: str, name: str, pod_hash: str) -> str:
    parts = (cluster, namespace, name)
    base = "/rollouts/" + "/".join(quote(p, safe="") for p in parts)
    return f"{base}/releases/{quote(pod_hash, safe='')}/"


def when(value: object) -> str:
    """``2026-11-29 10:04:31`` (UTC), or ``""``."""
    moment = parse_time(value)
    return moment.strftime("%Y-%m-%d %H:%M:%S") if moment else ""


def present_release_row(release: Mapping[str, Any], key: str, now: datetime) -> dict[str, Any]:
    cluster, namespace, name = key.split("/", 2)
    outcome = str(release.get("outcome") or "in_progress")
    label, icon = OUTCOMES.get(outcome, (outcome, "unknown"))
    started = parse_time(release.get("startedAt"))
    seconds = release.get("durationSeconds")
    running = seconds is None and started is not None
    elapsed = seconds if seconds is not None else (now - started).total_seconds() if started else None
    duration = short_age(elapsed)
    count, reached = release.get("stepCount"), release.get("stepsReached") or 0
    return {
        "podHash": str(release.get("podHash") or ""),
        "url": release_path(cluster, namespace, name, str(release.get("podHash") or "")),
        "revision": release.get("revision"),
        "outcome": outcome,
        "outcomeLabel": label,
        "icon": icon,
        "started": when(release.get("startedAt")),
        "startedAt": release.get("startedAt") or "",
        "ended": when(release.get("endedAt")),
        "duration": ("running for " if running else "") + duration,
        "images": [str(i) for i in release.get("images") or []],
        "steps": f"{min(reached, count)} / {count}" if isinstance(count, int) and count else "—",
        "gitRevision": str(release.get("gitRevision") or "")[:12],
        "actedBy": [str(a) for a in release.get("actedBy") or []],
    }


def present_releases(releases: Sequence[Mapping[str, Any]], key: str, now: datetime) -> list[dict[str, Any]]:
    return [present_release_row(r, key, now) for r in releases]


def _replay_base(key: str, detail: Mapping[str, Any], live: Mapping[str, Any] | None) -> dict[str, Any]:
    cluster, namespace, name = key.split("/", 2)
    live = live or {}
    count = detail["release"].get("stepCount")
    if not isinstance(count, int) and isinstance(live.get("step"), str) and "/" in live["step"]:
        tail = live["step"].split("/", 1)[1]
        count = int(tail) if tail.isdigit() else None
    return {
        "cluster": cluster,
        "namespace": namespace,
        "name": name,
        "uid": live.get("uid") or "",
        "strategy": live.get("strategy") or ("Canary" if count else ""),
        "weightSource": live.get("weightSource") or "",
        "trafficRouter": live.get("trafficRouter"),
        "stepCount": count,
        "imagesByHash": detail.get("imagesByHash") or {},
    }


def _historic_flow(
    view: Mapping[str, Any], at: datetime, chain: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The live page's diagram for a replayed view; pod counts were not recorded, so images stand in.
    ``chain`` is the release's GitOps chain, so Git and Argo CD show what the chain card shows."""
    flow = build_flow(view, at, chain=chain or None)
    tags = {"canary": "canary", "stable": "stable"}
    for node in flow["nodes"]:
        if node["id"] in tags and node["lines"] and node["lines"][0]["text"] == "ReplicaSet not seen yet":
            image = next((i["image"] for i in view.get("images") or [] if tags[node["id"]] in i["tags"]), "")
            line = {"text": short_image(image), "cls": "muted mono", "full": image}
            node["lines"] = [line] if image else []
            fit_node(node)
    return flow


def present_release(
    key: str,
    detail: Mapping[str, Any],
    live: Mapping[str, Any] | None,
    now: datetime,
    chain: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything a release timeline page draws; ``detail`` as from ``data.release_detail_sync``,
    ``chain`` from ``dashboard.gitops.queries.chain_for_release`` (merge → commit → sync → revision)."""
    events = list(detail.get("events") or [])
    base = _replay_base(key, detail, live)
    stable = detail.get("stable")
    hashes = {e.get("podHash") for e in events}
    if not stable and live and live.get("stableRS") and live["stableRS"] not in hashes:
        # No promoted release recorded before this one (history began mid-way): the live stable hash
        # is the one that was serving, since nothing was promoted in between.
        stable = str(live["stableRS"])
        images = live.get("images") or []
        image = next((i.get("image") for i in images if "stable" in (i.get("tags") or [])), None)
        if image:
            base["imagesByHash"] = {**base["imagesByHash"], stable: [image]}
    frames = replay(base, events, stable=stable)
    flows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    out_frames = []
    event_frame: dict[int, int] = {}
    for number, frame in enumerate(frames):
        moment = parse_time(frame["at"]) or now
        flow = _historic_flow(frame["view"], moment, chain)
        signature = json.dumps(flow, sort_keys=True)
        if signature not in seen:  # moments that draw the same diagram share it
            seen[signature] = len(flows)
            flows.append(flow)
        titles = [str(events[i].get("title") or events[i].get("kind")) for i in frame["events"]]
        for i in frame["events"]:
            event_frame[i] = number
        view = frame["view"]
        out_frames.append(
            {
                "at": frame["at"],
                "when": when(frame["at"]),
                "label": "; ".join(titles) if titles else "Opening state",
                "flow": seen[signature],
                "step": view.get("step") or "",
                "status": view.get("status") or "",
                "setWeight": view.get("setWeight"),
                "actualWeight": view.get("actualWeight"),
                "podHash": view.get("currentPodHash") or "",
            }
        )
    release = present_release_row(detail["release"], key, now)
    commit = _mapping(_mapping(chain).get("commit"))
    if commit.get("observed") and commit.get("sha"):
        # The header and the chain card name one commit: the chain's (the row's may be a later render's).
        release["gitRevision"] = str(commit["sha"])[:12]
    return {
        "key": key,
        "release": release,
        "previousPodHash": detail.get("previousPodHash"),
        "chain": release_chain(chain),
        "frames": out_frames,
        "flows": flows,
        "chart": chart(frames, events),
        "incidents": incidents(events),
        "events": [
            {
                "at": str(e.get("at") or ""),
                "when": when(e.get("at")),
                "kind": str(e.get("kind") or ""),
                "icon": event_icon(e),
                "title": str(e.get("title") or e.get("kind") or ""),
                "podHash": e.get("podHash") or "",
                "frame": event_frame.get(i, 0),
                "critical": event_critical(e),
                "filter": event_filter(e),
                "about": event_about(e),
            }
            for i, e in enumerate(events)
        ],
    }


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def incidents(events: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The known incidents this release went through, named (the re-render race first of all), from its
    recorded events: a ``release.rerendered`` event or a raised critical finding."""
    found: dict[str, dict[str, str]] = {}
    for e in events:
        data = _mapping(e.get("data"))
        if e.get("kind") == "release.rerendered":
            code, title = "rerender-race", "Re-render race: the canary restarted at step 0"
        elif e.get("kind") == "finding.raised" and data.get("severity") == "critical":
            code, title = str(data.get("code") or ""), str(e.get("title") or "")
        else:
            continue
        if code and code not in found:
            found[code] = {
                "code": code,
                "title": title,
                "at": str(e.get("at") or ""),
                "when": when(e.get("at")),
            }
    return list(found.values())
