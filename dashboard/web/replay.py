"""Replay: the flow diagram's inputs at every recorded moment of a release, rebuilt from its events.

The watcher records timeline events (diffs between views), not view snapshots, so a release page
rebuilds what the rollout looked like after each change: pod hash, stable hash, step index, desired and
actual weight, phase and message, abort, analysis runs and the re-render race. The state a release
opened with comes from the "before" fields of its own first events (``fromIndex``, ``previousSetWeight``,
``fromStatus``), which the domain copies from the view it diffed against — facts, not guesses.

``replay(base, events, stable=...)`` returns one frame per distinct moment (events sharing a timestamp
were one observed change); each frame's ``view`` is a RolloutView-shaped dict that the live page's flow
presenter draws unchanged. ``chart(frames, events)`` is the weight/step series and the markers.

Non-goals: no I/O, no clock, and no detail the events do not carry (pod counts, metric values); the
diagram shows what is known and leaves the rest out rather than inventing it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

Event = Mapping[str, Any]

# Event kinds drawn as markers on the release chart: kind → (marker group, tone).
MARKERS: dict[str, tuple[str, str]] = {
    "pause.started": ("pause", "paused"),
    "release.started": ("hash change", "warning"),
    "release.rerendered": ("hash change", "critical"),
    "release.superseded": ("hash change", "warning"),
    "analysis.finished": ("analysis", "info"),
    "release.aborted": ("abort", "critical"),
    "release.promoted": ("promote", "healthy"),
    "release.fully_promoted": ("promoted", "healthy"),
    "action": ("action", "accent"),
}
_ANALYSIS_TONES = {
    "Successful": "healthy", "Failed": "critical", "Error": "critical", "Inconclusive": "warning",
}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _data(event: Event) -> Mapping[str, Any]:
    data = event.get("data")
    return data if isinstance(data, Mapping) else {}


def opening(events: Sequence[Event], pod_hash: str) -> dict[str, Any]:
    """The state release ``pod_hash`` was in before its first recorded change (from "before" fields)."""
    state: dict[str, Any] = {}
    # Changes seen together with the release's start diff against the previous release's view, so
    # their "before" fields describe that release, not this one.
    started = {
        e.get("at") for e in events if e.get("podHash") == pod_hash and e.get("kind") == "release.started"
    }
    for event in events:
        if event.get("podHash") != pod_hash or event.get("at") in started:
            continue
        kind, data = event.get("kind"), _data(event)
        if kind == "step.changed" and "currentStepIndex" not in state:
            state["currentStepIndex"] = _int(data.get("fromIndex"))
        elif kind == "weight.changed" and "setWeight" not in state:
            state["setWeight"] = _int(data.get("previousSetWeight"))
            state["actualWeight"] = _int(data.get("previousActualWeight"))
        elif kind == "phase.changed" and "status" not in state and data.get("fromStatus"):
            state["status"] = data.get("fromStatus")
    return state


def _step_label(index: int | None, count: int | None) -> str | None:
    if index is None:
        return None
    return f"{min(index, count)}/{count}" if count is not None else str(index)


class _State:
    """The mutable view being replayed; ``view()`` copies it out as a RolloutView-shaped dict."""

    def __init__(self, base: Mapping[str, Any], events: Sequence[Event], stable: str | None) -> None:
        self.base = base
        self.events = events
        self.step_count = _int(base.get("stepCount"))
        self.images: dict[str, list[str]] = {
            str(k): [str(i) for i in v] for k, v in (base.get("imagesByHash") or {}).items()
        }
        self.fields: dict[str, Any] = {
            "currentPodHash": None,
            "stableRS": stable,
            "currentStepIndex": 0,
            "setWeight": None,
            "actualWeight": 0,
            "status": "Progressing",
            "message": "",
            "aborted": False,
            "hashChange": None,
            "revision": None,
        }
        self.runs: dict[tuple[str, str], dict[str, Any]] = {}
        first = next((e.get("podHash") for e in events if e.get("podHash")), None)
        if first:
            self.open(str(first))

    def open(self, pod_hash: str) -> None:
        """A release begins (or the replay starts inside one)."""
        start = opening(self.events, pod_hash)
        self.fields.update(
            currentPodHash=pod_hash,
            currentStepIndex=start.get("currentStepIndex") or 0,
            setWeight=start.get("setWeight"),
            actualWeight=start.get("actualWeight", 0),
            status=start.get("status") or "Progressing",
            message="",
            aborted=False,
            hashChange=None,
        )

    def apply(self, event: Event) -> None:
        kind, data, pod_hash = event.get("kind"), _data(event), str(event.get("podHash") or "")
        f = self.fields
        if kind == "release.started":
            if data.get("images"):
                self.images.setdefault(pod_hash, [str(i) for i in data["images"] if i])
            if pod_hash != f["currentPodHash"]:
                self.open(pod_hash)
            f["revision"] = _int(data.get("revision")) or f["revision"]
        elif pod_hash and pod_hash != f["currentPodHash"] and kind not in ("analysis.started",
                                                                           "analysis.measurement",
                                                                           "analysis.finished"):
            return  # a change of a release that is not the one on screen (e.g. an old one scaling down)
        if kind == "release.rerendered":
            f["hashChange"] = {
                "from": data.get("previousPodHash"),
                "to": pod_hash,
                "at": event.get("at"),
                "stepFrom": _int(data.get("previousStepIndex")),
                "stepTo": 0,
            }
        elif kind == "step.changed":
            f["currentStepIndex"] = _int(data.get("toIndex"))
        elif kind == "weight.changed":
            f["setWeight"], f["actualWeight"] = _int(data.get("setWeight")), _int(data.get("actualWeight"))
        elif kind == "phase.changed":
            f["status"], f["message"] = data.get("toStatus") or f["status"], data.get("message") or ""
        elif kind == "release.aborted":
            f["aborted"] = True
        elif kind == "release.fully_promoted":
            f["stableRS"], f["hashChange"] = pod_hash, None
        elif kind in ("analysis.started", "analysis.measurement", "analysis.finished"):
            name = str(data.get("analysisRun") or "")
            run = self.runs.setdefault((pod_hash, name), {"name": name, "status": "Running"})
            if kind == "analysis.measurement":
                counts = ("successful", "failed", "inconclusive", "error")
                run.update({k: _int(data.get(k)) or 0 for k in counts})
            elif data.get("status"):
                run["status"] = data["status"]

    def view(self) -> dict[str, Any]:
        f = self.fields
        current, stable = f["currentPodHash"], f["stableRS"]
        index = f["currentStepIndex"]
        promoted = bool(current) and current == stable
        images = []
        if current and not promoted and self.images.get(current):
            images.append({"image": self.images[current][0], "tags": ["canary"]})
        if stable and self.images.get(stable):
            images.append({"image": self.images[stable][0], "tags": ["stable"]})
        runs = [run for (h, _), run in self.runs.items() if h == current]
        view = {
            **{k: copy.deepcopy(v) for k, v in self.base.items() if k not in ("stepCount", "imagesByHash")},
            "currentPodHash": current,
            "stableRS": stable,
            "currentStepIndex": index,
            "step": None if promoted else _step_label(index, self.step_count),
            "setWeight": f["setWeight"],
            "actualWeight": f["actualWeight"],
            "status": "Healthy" if promoted and not f["aborted"] else f["status"],
            "message": f["message"],
            "aborted": f["aborted"],
            "hashChange": copy.deepcopy(f["hashChange"]),
            "images": images,
            "revisions": [
                {"revision": f["revision"], "replicaSets": [], "analysisRuns": copy.deepcopy(runs)}
            ],
        }
        return view


def replay(
    base: Mapping[str, Any], events: Sequence[Event], *, stable: str | None = None
) -> list[dict[str, Any]]:
    """Frames ``[{at, events: [positions], view}]``, oldest first; the first frame is the opening state.

    ``base``: what does not change with the events (cluster, namespace, name, strategy, gitops,
    weightSource, and optionally ``stepCount`` and ``imagesByHash``). ``events``: oldest first.
    ``stable``: the stable pod hash when the first event happened.
    """
    ordered = [e for e in events if isinstance(e, Mapping)]
    state = _State(base, ordered, stable)
    if not ordered:
        return []
    opened = str(ordered[0].get("at") or "")
    frames: list[dict[str, Any]] = [{"at": opened, "events": [], "view": state.view()}]
    position = 0
    while position < len(ordered):
        at = ordered[position].get("at")
        moment: list[int] = []
        while position < len(ordered) and ordered[position].get("at") == at:
            state.apply(ordered[position])
            moment.append(position)
            position += 1
        frames.append({"at": str(at or ""), "events": moment, "view": state.view()})
    return frames


def chart(frames: Sequence[Mapping[str, Any]], events: Sequence[Event]) -> dict[str, Any]:
    """Series (desired and actual weight, step index) sampled at each frame, and the event markers."""
    series: dict[str, list[Any]] = {"at": [], "setWeight": [], "actualWeight": [], "step": []}
    for frame in frames:
        view = frame["view"]
        promoted = view.get("currentPodHash") and view.get("currentPodHash") == view.get("stableRS")
        series["at"].append(frame["at"])
        # Once promoted, the new version is stable and takes all traffic: the release's weight is 100.
        series["setWeight"].append(100 if promoted else view.get("setWeight"))
        series["actualWeight"].append(100 if promoted else view.get("actualWeight"))
        series["step"].append(view.get("currentStepIndex"))
    markers = []
    for position, event in enumerate(events):
        kind = str(event.get("kind") or "")
        if kind not in MARKERS:
            continue
        group, tone = MARKERS[kind]
        if kind == "analysis.finished":
            tone = _ANALYSIS_TONES.get(str(_data(event).get("status")), "info")
        markers.append(
            {"at": event.get("at"), "kind": kind, "group": group, "tone": tone,
             "title": str(event.get("title") or kind), "event": position}
        )
    # One legend entry per marker group and tone drawn (an abort's red diamond included), in order.
    legend: list[dict[str, str]] = []
    for marker in markers:
        entry = {"group": str(marker["group"]), "tone": str(marker["tone"])}
        if entry not in legend:
            legend.append(entry)
    return {"series": series, "markers": markers, "legend": legend}
