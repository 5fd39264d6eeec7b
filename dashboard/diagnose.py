"""Findings from object dumps and watch recordings, for incident reviews (``manage.py diagnose``).

A dump (YAML/JSON files or directories, as ``inspect`` reads them) is one snapshot: every Rollout in it is
diagnosed once, at ``now`` (by default the latest timestamp the objects carry, so an old dump is judged at
the moment it was taken, not today). A recording (``.jsonl``, DESIGN §3) is replayed in order: after each
event the affected rollouts are observed and diagnosed at the event's time, exactly as the live watcher
does, and every finding raised or cleared along the way is kept with both moments.

Non-goals: talking to a cluster, publishing anything, rendering (the command formats the result).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dashboard.domain.autoscalers import HPA, hpa_target, rollout_targets
from dashboard.domain.findings import Finding, Thresholds, detect_findings, finding_changes
from dashboard.domain.objects import dig, dig_str, maps, owner_uids, parse_time
from dashboard.domain.observations import Observations, RolloutObjects, observe
from dashboard.domain.routers import ROUTER_KINDS, router_refs
from dashboard.kube.loading import OBJECT_SUFFIXES, load_paths
from dashboard.kube.recording import RecordedEvent, RecordingError, read_recording

RECORDING_SUFFIX = ".jsonl"
RolloutKey = tuple[str, str, str]  # cluster, namespace, name
SETTLE = timedelta(seconds=1)
RECHECK = timedelta(seconds=30)  # time-based findings are re-judged at least this often


@dataclass
class Diagnosed:
    """One finding as a review shows it: the last version seen, and when it cleared (None: still active)."""

    finding: Finding
    cleared_at: datetime | None = None
    source: str = ""


@dataclass
class Diagnosis:
    findings: list[Diagnosed] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)  # finding.raised / finding.cleared, in order
    rollouts: list[RolloutKey] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    recordings: int = 0


def split_paths(paths: Iterable[str | Path]) -> tuple[list[Path], list[Path], list[str]]:
    """(object files/dirs, recordings, errors): directories are searched for both kinds."""
    dumps: list[Path] = []
    recordings: list[Path] = []
    errors: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file())
            recordings += [p for p in found if p.suffix.lower() == RECORDING_SUFFIX]
            dumps += [p for p in found if p.suffix.lower() in OBJECT_SUFFIXES]
            if not any(p.suffix.lower() in (*OBJECT_SUFFIXES, RECORDING_SUFFIX) for p in found):
                errors.append(f"{path}: directory holds no .yaml, .yml, .json or .jsonl files")
        elif path.is_file():
            (recordings if path.suffix.lower() == RECORDING_SUFFIX else dumps).append(path)
        elif path.exists():
            errors.append(f"{path}: not a regular file or directory")
        else:
            errors.append(f"{path}: no such file or directory")
    return dumps, recordings, errors


def diagnose_paths(
    paths: Iterable[str | Path],
    *,
    now: datetime | None = None,
    thresholds: Thresholds = Thresholds(),  # noqa: B008 - frozen
    pipelines: Mapping[str, str] | None = None,
    cluster: str = "",
) -> Diagnosis:
    dumps, recordings, errors = split_paths(paths)
    result = Diagnosis(errors=errors)
    if dumps:
        loaded = load_paths(dumps)
        result.errors += [str(e) for e in loaded.errors]
        objects = [item.object for item in loaded.objects]
        snapshot = diagnose_snapshot(
            objects, now=now, thresholds=thresholds, pipelines=pipelines, cluster=cluster
        )
        result.findings += snapshot.findings
        result.rollouts += snapshot.rollouts
    for recording in recordings:
        try:
            replayed = replay_recording(
                read_recording(recording), thresholds=thresholds, pipelines=pipelines, source=str(recording)
            )
        except RecordingError as error:
            result.errors.append(str(error))
            continue
        result.recordings += 1
        result.findings += replayed.findings
        result.events += replayed.events
        result.rollouts += replayed.rollouts
    return result


# ---- snapshots ---------------------------------------------------------------------------------------------


def latest_timestamp(objects: Iterable[Mapping[str, Any]]) -> datetime | None:
    """The newest time written in the objects: a fair stand-in for "when the dump was taken"."""
    latest: datetime | None = None

    def consider(value: Any) -> None:
        nonlocal latest
        moment = parse_time(value)
        if moment is not None and (latest is None or moment > latest):
            latest = moment

    for obj in objects:
        consider(dig(obj, "metadata", "creationTimestamp"))
        for entry in maps(dig(obj, "metadata", "managedFields")):
            consider(entry.get("time"))
        status = dig(obj, "status")
        for cond in maps(dig(status, "conditions")):
            consider(cond.get("lastUpdateTime"))
            consider(cond.get("lastTransitionTime"))
        for pause in maps(dig(status, "pauseConditions")):
            consider(pause.get("startTime"))
        for key in ("startedAt", "completedAt", "abortedAt", "reconciledAt"):
            consider(dig(status, key))
        for result in maps(dig(status, "metricResults")):
            for measurement in maps(result.get("measurements")):
                consider(measurement.get("finishedAt"))
        for entry in maps(dig(status, "history")):
            consider(entry.get("deployedAt"))
    return latest


class ObjectIndex:
    """Objects by UID with their owner links: enough to gather one rollout's objects quickly."""

    def __init__(self) -> None:
        self.by_uid: dict[str, Mapping[str, Any]] = {}
        self.children: dict[str, set[str]] = defaultdict(set)
        self.rollouts: dict[str, Mapping[str, Any]] = {}
        self.applications: dict[str, Mapping[str, Any]] = {}
        self.routers: dict[tuple[str, str, str], str] = {}  # (kind, namespace, name) → UID

    @staticmethod
    def uid(obj: Mapping[str, Any]) -> str:
        uid = dig_str(obj, "metadata", "uid")
        if uid:
            return uid
        # Hand-written dumps may leave uids out: fall back to kind/namespace/name, which is unique too.
        return f"{obj.get('kind')}/{dig_str(obj, 'metadata', 'namespace')}/{dig_str(obj, 'metadata', 'name')}"

    def put(self, obj: Mapping[str, Any]) -> None:
        uid = self.uid(obj)
        self.remove(uid)
        self.by_uid[uid] = obj
        for owner in owner_uids(obj):
            self.children[owner].add(uid)
        if obj.get("kind") == "Rollout":
            self.rollouts[uid] = obj
        elif obj.get("kind") == "Application":
            self.applications[uid] = obj
        elif obj.get("kind") in ROUTER_KINDS:
            self.routers[_ref(obj)] = uid

    def remove(self, uid: str) -> None:
        old = self.by_uid.pop(uid, None)
        if old is None:
            return
        for owner in owner_uids(old):
            self.children[owner].discard(uid)
        self.rollouts.pop(uid, None)
        self.applications.pop(uid, None)
        if old.get("kind") in ROUTER_KINDS and self.routers.get(_ref(old)) == uid:
            del self.routers[_ref(old)]

    def rollouts_of(self, obj: Mapping[str, Any]) -> set[str]:
        """The rollouts an object belongs to (following owners up), or that an Application manages."""
        if obj.get("kind") == "Rollout":
            return {self.uid(obj)}
        if obj.get("kind") in ROUTER_KINDS:
            ref = _ref(obj)
            return {uid for uid, ro in self.rollouts.items() if ref in router_refs(ro)}
        if obj.get("kind") == HPA:
            target = hpa_target(obj)
            return {uid for uid, ro in self.rollouts.items() if target in rollout_targets(ro)}
        if obj.get("kind") == "Application":
            targets = {
                (dig_str(r, "namespace"), dig_str(r, "name"))
                for r in maps(dig(obj, "status", "resources"))
                if r.get("kind") == "Rollout"
            }
            return {
                uid
                for uid, ro in self.rollouts.items()
                if (dig_str(ro, "metadata", "namespace"), dig_str(ro, "metadata", "name")) in targets
            }
        found: set[str] = set()
        frontier = owner_uids(obj)
        for _ in range(4):
            upper: list[str] = []
            for owner in frontier:
                if owner in self.rollouts:
                    found.add(owner)
                elif owner in self.by_uid:
                    upper += owner_uids(self.by_uid[owner])
            frontier = upper
        return found

    def objects_of(self, rollout_uid: str) -> RolloutObjects:
        rollout = self.rollouts[rollout_uid]
        kids = [self.by_uid[u] for u in sorted(self.children.get(rollout_uid, ())) if u in self.by_uid]
        replicasets = [k for k in kids if k.get("kind") == "ReplicaSet"]
        pods = [
            self.by_uid[p]
            for rs in replicasets
            for p in sorted(self.children.get(self.uid(rs), ()))
            if p in self.by_uid and self.by_uid[p].get("kind") == "Pod"
        ]
        return RolloutObjects(
            rollout=rollout,
            replicasets=replicasets,
            analysisruns=[k for k in kids if k.get("kind") == "AnalysisRun"],
            pods=pods,
            applications=list(self.applications.values()),
            routers=[
                self.by_uid[self.routers[ref]] for ref in router_refs(rollout) if ref in self.routers
            ],
            autoscalers=[
                o
                for o in self.by_uid.values()
                if o.get("kind") == HPA and hpa_target(o) in rollout_targets(rollout)
            ],
        )


def _ref(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    return str(obj.get("kind")), dig_str(obj, "metadata", "namespace"), dig_str(obj, "metadata", "name")


def diagnose_snapshot(
    objects: Sequence[Mapping[str, Any]],
    *,
    now: datetime | None = None,
    thresholds: Thresholds = Thresholds(),  # noqa: B008 - frozen
    pipelines: Mapping[str, str] | None = None,
    cluster: str = "",
) -> Diagnosis:
    index = ObjectIndex()
    for obj in objects:
        if isinstance(obj, Mapping):
            index.put(obj)
    moment = now or latest_timestamp(objects) or datetime.now(UTC)
    result = Diagnosis()
    for uid in sorted(index.rollouts, key=lambda u: _name_key(index.rollouts[u])):
        rollout = index.rollouts[uid]
        result.rollouts.append((cluster, *_name_key(rollout)))
        view = {"cluster": cluster}
        for finding in detect_findings(
            view, objects=index.objects_of(uid), now=moment, pipelines=pipelines, thresholds=thresholds
        ):
            result.findings.append(Diagnosed(finding))
    return result


def _name_key(rollout: Mapping[str, Any]) -> tuple[str, str]:
    return dig_str(rollout, "metadata", "namespace"), dig_str(rollout, "metadata", "name")


# ---- recordings --------------------------------------------------------------------------------------------


def replay_recording(
    events: Iterable[RecordedEvent],
    *,
    thresholds: Thresholds = Thresholds(),  # noqa: B008 - frozen
    pipelines: Mapping[str, str] | None = None,
    source: str = "",
    settle: timedelta = SETTLE,
) -> Diagnosis:
    """Replay watch events in order, observing and diagnosing each affected rollout as the watcher would.

    A controller writes a ReplicaSet and then the Rollout's status a moment later; judging the objects
    between those writes would see orphans that are not. So, like the watcher's coalescing, changes are
    diagnosed once the stream has moved ``settle`` past the first pending one (or at the end).
    """
    indexes: dict[str, ObjectIndex] = defaultdict(ObjectIndex)
    history: dict[tuple[str, str], Observations] = {}
    active: dict[tuple[str, str], list[Finding]] = {}
    seen: dict[tuple[str, str, tuple[str, str]], Diagnosed] = {}
    result = Diagnosis()
    names: dict[tuple[str, str], RolloutKey] = {}
    last_at: datetime | None = None

    def evaluate(cluster: str, uid: str, at: datetime) -> None:
        index = indexes[cluster]
        key = (cluster, uid)
        if uid not in index.rollouts:
            current: list[Finding] = []
        else:
            objects = index.objects_of(uid)
            names.setdefault(key, (cluster, *_name_key(objects.rollout)))
            current = detect_findings(
                {"cluster": cluster},
                objects=objects,
                history=history.get(key),
                now=at,
                pipelines=pipelines,
                thresholds=thresholds,
            )
        previous = active.get(key, [])
        result.events += finding_changes(previous, current, at=at)
        current_keys = {f.key for f in current}
        for finding in previous:
            if finding.key not in current_keys:
                seen[(cluster, uid, finding.key)].cleared_at = at
        for finding in current:
            seen[(cluster, uid, finding.key)] = Diagnosed(finding, None, source)
        active[key] = current

    pending: set[tuple[str, str]] = set()
    pending_since: datetime | None = None

    def flush(at: datetime) -> None:
        nonlocal pending_since
        for cluster, uid in sorted(pending):
            evaluate(cluster, uid, at)
        pending.clear()
        pending_since = None

    last_sweep: datetime | None = None
    for event in events:
        if pending_since is not None and last_at is not None and event.at - pending_since >= settle:
            flush(last_at)
        if last_sweep is None:
            last_sweep = event.at
        elif event.at - last_sweep >= RECHECK:
            # Time alone raises some findings (stuck at step 0, a passed deadline): judge every rollout as
            # it stood just before this event, as the watcher's periodic re-evaluation would.
            flush(last_at or event.at)
            before = event.at - timedelta(microseconds=1)
            for cluster, index in indexes.items():
                for uid in sorted(index.rollouts):
                    evaluate(cluster, uid, before)
            last_sweep = event.at
        last_at = event.at
        index = indexes[event.cluster]
        obj = event.object
        affected = index.rollouts_of(obj)
        if event.type == "DELETED":
            index.remove(index.uid(obj))
        else:
            index.put(obj)
            affected |= index.rollouts_of(obj)
            if obj.get("kind") == "Rollout":  # history sees every Rollout write, not just settled states
                uid = index.uid(obj)
                key = (event.cluster, uid)
                history[key] = observe(history.get(key), None, index.objects_of(uid), event.at)
            elif obj.get("kind") in ROUTER_KINDS:  # and every write of the routing objects they name
                for uid in affected:
                    key = (event.cluster, uid)
                    history[key] = observe(history.get(key), None, index.objects_of(uid), event.at)
        pending.update((event.cluster, uid) for uid in affected)
        if pending and pending_since is None:
            pending_since = event.at
    if last_at is not None:  # what is pending, then one last look at every rollout at the end
        flush(last_at)
        for cluster, index in indexes.items():
            for uid in sorted(index.rollouts):
                evaluate(cluster, uid, last_at)
    result.findings = list(seen.values())
    result.rollouts = sorted(set(names.values()))
    return result
