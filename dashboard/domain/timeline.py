"""Timeline events: what happened to a rollout between two of its views.

``timeline_events(previous, current, at=...)`` compares two RolloutView dicts (DESIGN §3) and returns the
events a release manager reads on a timeline: a release started, a step was reached, the weight moved,
a pause started or ended, an analysis run started / measured / finished, the phase changed, the rollout
was aborted / promoted / fully promoted, a release was superseded (and the re-render race: the pod hash
changed while the step index went back to 0), findings raised or cleared, and each Kubernetes Event the
controller recorded about the rollout (the view's ``events``: reason and message as Argo Rollouts wrote).

Every event names the release it belongs to (``podHash``) and carries a ``dedupe`` key built only from
facts in the views (never from the time or the order it was observed), so recording the same transition
twice — after a restart, a relist or a replay — yields the same (release, kind, dedupe) triple.

Non-goals: no I/O, no clock (the caller passes ``at``), no knowledge of the spec beyond the view, and
no user actions (the action service records those itself).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

RELEASE_STARTED = "release.started"
RELEASE_RERENDERED = "release.rerendered"
RELEASE_SUPERSEDED = "release.superseded"
RELEASE_ABORTED = "release.aborted"
RELEASE_PROMOTED = "release.promoted"
RELEASE_FULLY_PROMOTED = "release.fully_promoted"
STEP_CHANGED = "step.changed"
WEIGHT_CHANGED = "weight.changed"
PAUSE_STARTED = "pause.started"
PAUSE_ENDED = "pause.ended"
ANALYSIS_STARTED = "analysis.started"
ANALYSIS_MEASUREMENT = "analysis.measurement"
ANALYSIS_FINISHED = "analysis.finished"
PHASE_CHANGED = "phase.changed"
FINDING_RAISED = "finding.raised"
FINDING_CLEARED = "finding.cleared"
KUBE_EVENT = "kube.event"  # a Kubernetes Event the controller recorded about the rollout

EVENT_KINDS = (
    RELEASE_STARTED,
    RELEASE_RERENDERED,
    RELEASE_SUPERSEDED,
    RELEASE_ABORTED,
    RELEASE_PROMOTED,
    RELEASE_FULLY_PROMOTED,
    STEP_CHANGED,
    WEIGHT_CHANGED,
    PAUSE_STARTED,
    PAUSE_ENDED,
    ANALYSIS_STARTED,
    ANALYSIS_MEASUREMENT,
    ANALYSIS_FINISHED,
    PHASE_CHANGED,
    FINDING_RAISED,
    FINDING_CLEARED,
    KUBE_EVENT,
)

TERMINAL_ANALYSIS = frozenset({"Successful", "Failed", "Error", "Inconclusive"})

View = Mapping[str, Any]


def timeline_events(previous: View | None, current: View | None, *, at: datetime) -> list[dict[str, Any]]:
    """The events that explain how ``previous`` became ``current`` (both RolloutView dicts, or None)."""
    if current is None:
        return []
    emit = _Emitter(current, format_time(at))
    hash_now = _str(current.get("currentPodHash"))
    if not hash_now:
        return []
    hash_before = _str(previous.get("currentPodHash")) if previous is not None else None
    same_release = previous is not None and hash_before == hash_now
    prev: View = previous if previous is not None else {}

    if not same_release:
        _release_change(emit, prev, current, hash_before, hash_now)
    _steps(emit, prev if same_release else {}, current, hash_now, new_release=not same_release)
    if same_release:
        _weights(emit, prev, current, hash_now)
    _phase(emit, prev, current, hash_now, same_release)
    _analysis(emit, prev, current)
    _findings(emit, prev, current, hash_now)
    _kube_events(emit, prev, current, hash_now)
    return emit.events


def format_time(at: datetime) -> str:
    """RFC 3339 in UTC with milliseconds and a Z, the format of every timestamp we write."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


class _Emitter:
    def __init__(self, view: View, at: str) -> None:
        self.at = at
        self.base = {
            "key": f"{view.get('cluster')}/{view.get('namespace')}/{view.get('name')}",
            "cluster": view.get("cluster"),
            "namespace": view.get("namespace"),
            "rollout": view.get("name"),
        }
        self.events: list[dict[str, Any]] = []

    def __call__(self, kind: str, pod_hash: str, dedupe: str, title: str, **data: Any) -> None:
        self.events.append(
            {
                "kind": kind,
                "at": self.at,
                **self.base,
                "podHash": pod_hash,
                "dedupe": dedupe,
                "title": title,
                "data": data,
            }
        )


def _release_change(emit: _Emitter, prev: View, cur: View, hash_before: str | None, hash_now: str) -> None:
    stable_before = _str(prev.get("stableRS"))
    step_before = _int(prev.get("currentStepIndex"))
    step_now = _int(cur.get("currentStepIndex")) or 0
    emit(
        RELEASE_STARTED,
        hash_now,
        "started",
        f"Release {hash_now} started" + (f" (revision {_revision(cur)})" if _revision(cur) else ""),
        previousPodHash=hash_before,
        revision=_revision(cur),
        images=[i.get("image") for i in _list(cur.get("images")) if isinstance(i, Mapping)],
        observed=hash_before is None,
    )
    # The release that was in flight (its hash not yet stable) is superseded by this one.
    if hash_before and hash_before != stable_before:
        emit(
            RELEASE_SUPERSEDED,
            hash_before,
            f"superseded:{hash_now}",
            f"Release {hash_before} superseded by {hash_now}",
            by=hash_now,
            step=step_before,
        )
        if step_before and step_now == 0:
            emit(
                RELEASE_RERENDERED,
                hash_now,
                f"rerendered:{hash_before}",
                f"Pod hash changed from {hash_before} to {hash_now} while the step index went back "
                f"from {step_before} to 0 (re-render race)",
                previousPodHash=hash_before,
                previousStepIndex=step_before,
            )


def _steps(emit: _Emitter, prev: View, cur: View, pod_hash: str, *, new_release: bool) -> None:
    now = _int(cur.get("currentStepIndex"))
    if now is None:
        return
    before = _int(prev.get("currentStepIndex")) or 0
    total = _step_total(cur.get("step"))
    fully_promoted = _str(cur.get("stableRS")) == pod_hash
    if new_release and fully_promoted:
        return  # completed before we saw it (or a first revision): there were no steps to watch
    if now > before:
        # Steps passed while we were not looking are inferred, so the history has no holes.
        for index in range(before + 1, now + 1):
            label = f"{index}/{total}" if total is not None else str(index)
            emit(
                STEP_CHANGED,
                pod_hash,
                f"step:{index}",
                f"Step {label} reached",
                fromIndex=index - 1,
                toIndex=index,
                step=label,
                inferred=index != now,
            )
    elif now < before:
        label = f"{now}/{total}" if total is not None else str(now)
        emit(
            STEP_CHANGED,
            pod_hash,
            f"step:back:{before}->{now}",
            f"Step index went back from {before} to {now}",
            fromIndex=before,
            toIndex=now,
            step=label,
            inferred=False,
        )


def _weights(emit: _Emitter, prev: View, cur: View, pod_hash: str) -> None:
    before = (_int(prev.get("setWeight")), _int(prev.get("actualWeight")))
    now = (_int(cur.get("setWeight")), _int(cur.get("actualWeight")))
    if before == now:
        return
    step = _int(cur.get("currentStepIndex"))
    emit(
        WEIGHT_CHANGED,
        pod_hash,
        f"weight:{step}:{now[0]}:{now[1]}",
        f"Weight set {_fmt_weight(now[0])}, actual {_fmt_weight(now[1])}",
        setWeight=now[0],
        actualWeight=now[1],
        previousSetWeight=before[0],
        previousActualWeight=before[1],
    )


def _phase(emit: _Emitter, prev: View, cur: View, pod_hash: str, same_release: bool) -> None:
    before, now = _str(prev.get("status")), _str(cur.get("status"))
    message = _str(cur.get("message")) or ""
    step = _int(cur.get("currentStepIndex"))
    step_before = _int(prev.get("currentStepIndex"))
    if before != now and now:
        emit(
            PHASE_CHANGED,
            pod_hash,
            f"phase:{step}:{before}->{now}",
            f"Phase {before or 'unknown'} → {now}" + (f": {message}" if message else ""),
            fromStatus=before,
            toStatus=now,
            message=message,
        )
    if now == "Paused" and before != "Paused":
        emit(
            PAUSE_STARTED,
            pod_hash,
            f"pause:{step}:{message}",
            f"Paused: {message}" if message else "Paused",
            reason=message,
            stepIndex=step,
        )
    if before == "Paused" and now != "Paused" and same_release:
        emit(PAUSE_ENDED, pod_hash, f"unpause:{step_before}", "Pause ended", stepIndex=step_before)
        if (
            step is not None
            and step_before is not None
            and step > step_before
            and _indefinite(prev, step_before)
        ):
            # Only a person (or promoteFull) ends an indefinite pause; a timed one just runs out.
            emit(
                RELEASE_PROMOTED,
                pod_hash,
                f"promoted:{step_before}",
                f"Promoted past step {step_before}",
                fromIndex=step_before,
                toIndex=step,
            )
    was_aborted = same_release and _is_aborted(prev)
    if _is_aborted(cur) and not was_aborted:
        emit(
            RELEASE_ABORTED,
            pod_hash,
            f"aborted:{step}",
            "Aborted" + (f": {message}" if message else ""),
            message=message,
            stepIndex=step,
        )
    stable_before = _str(prev.get("stableRS"))
    # Seen to happen: not when the first view we ever get is already fully promoted.
    if _str(cur.get("stableRS")) == pod_hash and prev and (stable_before != pod_hash or not same_release):
        emit(RELEASE_FULLY_PROMOTED, pod_hash, "fully_promoted", f"Release {pod_hash} fully promoted")


def _analysis(emit: _Emitter, prev: View, cur: View) -> None:
    runs_before = _analysis_runs(prev)
    for (pod_hash, name), run in _analysis_runs(cur).items():
        status = _str(run.get("status")) or ""
        old = runs_before.get((pod_hash, name))
        counts = _measurements(run)
        if old is None:
            emit(
                ANALYSIS_STARTED,
                pod_hash,
                f"analysis:{name}:started",
                f"Analysis {name} started",
                analysisRun=name,
                status=status,
            )
        if counts and (old is None or _measurements(old) != counts):
            total = sum(counts)
            emit(
                ANALYSIS_MEASUREMENT,
                pod_hash,
                f"analysis:{name}:m:{total}",
                f"Analysis {name}: {counts[0]} successful, {counts[1]} failed, {counts[2]} inconclusive, "
                f"{counts[3]} error",
                analysisRun=name,
                successful=counts[0],
                failed=counts[1],
                inconclusive=counts[2],
                error=counts[3],
                metrics=_latest_measurements(run),
            )
        old_status = _str(old.get("status")) if old is not None else None
        if status in TERMINAL_ANALYSIS and old_status not in TERMINAL_ANALYSIS:
            emit(
                ANALYSIS_FINISHED,
                pod_hash,
                f"analysis:{name}:finished",
                f"Analysis {name} {status}",
                analysisRun=name,
                status=status,
            )


def _kube_events(emit: _Emitter, prev: View, cur: View, pod_hash: str) -> None:
    """Each Kubernetes Event (or repeat of one: its count went up) that is new in this view."""
    seen = {(e.get("name"), e.get("count")) for e in _list(prev.get("events")) if isinstance(e, Mapping)}
    for event in _list(cur.get("events")):
        if not isinstance(event, Mapping) or (event.get("name"), event.get("count")) in seen:
            continue
        reason, message = _str(event.get("reason")) or "", _str(event.get("message")) or ""
        emit(
            KUBE_EVENT,
            pod_hash,
            f"{event.get('name')}#{event.get('count')}",
            f"{reason}: {message}" if reason and message else message or reason,  # Flagger's have no reason
            type=_str(event.get("type")) or "Normal",
            reason=reason,
            occurredAt=event.get("at"),
            object=event.get("object") or {"kind": "Rollout", "name": cur.get("name")},
            source=event.get("source") or None,
        )


def _findings(emit: _Emitter, prev: View, cur: View, pod_hash: str) -> None:
    # Keyed by code and subject: each orphaned ReplicaSet (or failed run) is raised and cleared on its own,
    # and a finding whose evidence or wording changes is not raised again.
    before = _findings_by_key(prev)
    now = _findings_by_key(cur)
    for (code, subject), finding in now.items():
        if (code, subject) not in before:
            emit(
                FINDING_RAISED,
                pod_hash,
                _finding_dedupe(code, subject, finding),
                str(finding.get("title") or code),
                code=code,
                subject=subject or None,
                severity=finding.get("severity"),
                explanation=finding.get("explanation"),
                evidence=finding.get("evidence"),
            )
    for (code, subject), finding in before.items():
        if (code, subject) not in now:
            emit(
                FINDING_CLEARED,
                pod_hash,
                _finding_dedupe(code, subject, finding) + ":cleared",
                f"Cleared: {finding.get('title') or code}",
                code=code,
                subject=subject or None,
                severity=finding.get("severity"),
            )


def _findings_by_key(view: View) -> dict[tuple[str, str], Mapping[str, Any]]:
    found: dict[tuple[str, str], Mapping[str, Any]] = {}
    for finding in _list(view.get("findings")):
        if isinstance(finding, Mapping) and _str(finding.get("code")):
            found[(str(finding["code"]), _str(finding.get("subject")) or "")] = finding
    return found


def _finding_dedupe(code: str, subject: str, finding: Mapping[str, Any]) -> str:
    """The same shape as ``findings.finding_changes`` writes: ``finding:<code>[:<subject>]:<since>``."""
    return f"finding:{code}{':' + subject if subject else ''}:{finding.get('since')}"


def _analysis_runs(view: View) -> dict[tuple[str, str], Mapping[str, Any]]:
    """Analysis runs by (pod hash of their revision, name)."""
    runs: dict[tuple[str, str], Mapping[str, Any]] = {}
    for revision in _list(view.get("revisions")):
        if not isinstance(revision, Mapping):
            continue
        hashes = [
            _str(rs.get("hash"))
            for rs in _list(revision.get("replicaSets"))
            if isinstance(rs, Mapping) and _str(rs.get("hash"))
        ]
        pod_hash = hashes[0] if hashes else _str(view.get("currentPodHash")) or ""
        for run in _list(revision.get("analysisRuns")):
            if isinstance(run, Mapping) and _str(run.get("name")):
                runs[(pod_hash or "", str(run["name"]))] = run
    return runs


def _latest_measurements(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per metric, the newest measurement's value and phase beside the conditions it was judged by: what a
    post-mortem quotes ("0.2 against result[0] < 0.05: Failed")."""
    found = []
    for metric in _list(run.get("metrics")):
        if not isinstance(metric, Mapping):
            continue
        measured = [m for m in _list(metric.get("measurements")) if isinstance(m, Mapping)]
        last = measured[-1] if measured else {}
        found.append(
            {
                "metric": metric.get("name"),
                "value": last.get("value"),
                "phase": last.get("phase"),
                "successCondition": metric.get("successCondition") or None,
                "failureCondition": metric.get("failureCondition") or None,
            }
        )
    return found


def _measurements(run: Mapping[str, Any]) -> tuple[int, int, int, int] | None:
    counts = tuple(_int(run.get(k)) or 0 for k in ("successful", "failed", "inconclusive", "error"))
    return counts if any(counts) else None  # type: ignore[return-value]


def _indefinite(view: View, index: int) -> bool:
    """Whether step ``index`` is a pause without a duration (unknown steps count as indefinite)."""
    steps = [s for s in _list(view.get("steps")) if isinstance(s, Mapping)]
    if not steps:
        return True
    step = next((s for s in steps if s.get("index") == index), None)
    return step is not None and step.get("kind") == "pause" and step.get("durationSeconds") is None


def _is_aborted(view: View) -> bool:
    message = _str(view.get("message")) or ""
    return bool(view.get("aborted")) or message.startswith("RolloutAborted")


def _revision(view: View) -> int | None:
    return _int(view.get("revision"))


def _step_total(step: Any) -> int | None:
    if isinstance(step, str) and "/" in step:
        return _int(step.split("/", 1)[1])
    return None


def _fmt_weight(weight: int | None) -> str:
    return "-" if weight is None else f"{weight}%"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def _list(value: Any) -> Iterable[Any]:
    return value if isinstance(value, list) else ()


def timeline_basis(view: View) -> dict[str, Any]:
    """The part of a view ``timeline_events`` reads: what a watcher keeps per rollout as "previous".

    ``timeline_events(timeline_basis(a), b)`` equals ``timeline_events(a, b)``; keeping only this saves
    most of the memory of holding every rollout's last view.
    """
    basis = {key: view.get(key) for key in _BASIS_KEYS if key in view}
    basis["revisions"] = [
        {
            "replicaSets": [
                {"hash": rs.get("hash")} for rs in _list(rev.get("replicaSets")) if isinstance(rs, Mapping)
            ][:1],
            "analysisRuns": [
                {k: run.get(k) for k in _RUN_KEYS}
                for run in _list(rev.get("analysisRuns"))
                if isinstance(run, Mapping)
            ],
        }
        for rev in _list(view.get("revisions"))
        if isinstance(rev, Mapping)
    ]
    basis["steps"] = [
        {k: s.get(k) for k in ("index", "kind", "durationSeconds")}
        for s in _list(view.get("steps"))
        if isinstance(s, Mapping)
    ]
    basis["findings"] = [
        {k: f.get(k) for k in ("code", "subject", "since", "title", "severity")}
        for f in _list(view.get("findings"))
        if isinstance(f, Mapping)
    ]
    basis["events"] = [
        {k: e.get(k) for k in ("name", "count")} for e in _list(view.get("events")) if isinstance(e, Mapping)
    ]
    return basis


def basis_skeleton() -> dict[str, Any]:
    """A basis with every key ``timeline_basis`` writes and the usual words, of no rollout: what all bases
    share, for a watcher that keeps them compressed against it (``Squeeze``)."""
    view: dict[str, Any] = {key: "" for key in _BASIS_KEYS}
    view |= {"currentStepIndex": 0, "setWeight": 0, "actualWeight": 0, "aborted": False, "revision": 1}
    view["images"] = [{"image": "", "tags": ["stable", "canary"]}]
    view["revisions"] = [{"replicaSets": [{"hash": ""}], "analysisRuns": [dict.fromkeys(_RUN_KEYS, "")]}]
    view["steps"] = [
        {"index": 0, "kind": "setWeight", "durationSeconds": None},
        {"index": 1, "kind": "pause", "durationSeconds": 0},
        {"index": 2, "kind": "analysis", "durationSeconds": None},
    ]
    view["findings"] = [{"code": "", "subject": "", "since": "", "title": "", "severity": "warning"}]
    view["events"] = [{"name": "", "count": 1}]
    return timeline_basis(view)


_BASIS_KEYS = (
    "cluster",
    "namespace",
    "name",
    "currentPodHash",
    "stableRS",
    "currentStepIndex",
    "step",
    "setWeight",
    "actualWeight",
    "status",
    "message",
    "aborted",
    "revision",
    "images",
)
_RUN_KEYS = ("name", "status", "successful", "failed", "inconclusive", "error")
