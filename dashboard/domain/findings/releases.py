"""Findings about a release restarting underneath itself: the re-render race and its symptoms.

- ``rerender-race`` (critical): the pod-template hash changed while a release was in progress and the step
  index fell back to 0. Seen live through ``Observations.resets``; on a plain dump it is inferred from two
  ReplicaSets of consecutive revisions created close together, the older one never promoted.
- ``config-only-revision`` (warning): the current revision's pod template differs from the previous one's
  only in annotations (such as a config checksum): the render changed, the application did not.
- ``stuck-at-step-zero`` (warning): Progressing at step 0 well past the release's start.

Non-goals: the orphaned ReplicaSet itself (``replicasets``), explaining which Helm input changed beyond what
the Application's history records.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ..objects import dig, dig_str, maps, rfc3339
from ..observations import Reset
from .base import CRITICAL, HASH_LABEL, UNWEDGE, WARNING, Context, Finding, ReplicaSetFacts
from .gitops import sync_near
from .replicasets import Orphan

RERENDER_RACE = "rerender-race"
CONFIG_ONLY_REVISION = "config-only-revision"
STUCK_AT_STEP_ZERO = "stuck-at-step-zero"
_MISSING = object()
MAX_DIFF_ENTRIES = 50


def _is_mapping(value: Any) -> bool:
    # JSON gives dicts: the ABC check is the slow path.
    return type(value) is dict or isinstance(value, Mapping)


def _flatten(value: Any, path: str, out: dict[str, Any]) -> None:
    if _is_mapping(value):
        for key in value:
            _flatten(value[key], f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _flatten(item, f"{path}[{index}]", out)
    elif value is not _MISSING:
        out[path] = value


def _leaf_changes(before: Any, after: Any, path: str, out: list[dict[str, Any]]) -> None:
    """The leaves under ``path`` that differ, as ``_flatten`` names them. Equal subtrees are skipped whole
    (one comparison in C): two revisions' templates differ in a few leaves of hundreds, and flattening
    both whole was a fifth of the findings' cost on every view build."""
    if before == after:
        return
    if _is_mapping(before) and _is_mapping(after):
        for key in before.keys() | after.keys():
            child = f"{path}.{key}" if path else str(key)
            _leaf_changes(before.get(key, _MISSING), after.get(key, _MISSING), child, out)
        return
    if isinstance(before, list) and isinstance(after, list):
        for index in range(max(len(before), len(after))):
            old = before[index] if index < len(before) else _MISSING
            new = after[index] if index < len(after) else _MISSING
            _leaf_changes(old, new, f"{path}[{index}]", out)
        return
    left: dict[str, Any] = {}
    right: dict[str, Any] = {}
    _flatten(before, path, left)
    _flatten(after, path, right)
    for leaf in left.keys() | right.keys():
        old, new = left.get(leaf, _MISSING), right.get(leaf, _MISSING)
        if old != new:
            before_value = None if old is _MISSING else old
            out.append({"path": leaf, "before": before_value, "after": None if new is _MISSING else new})


def template_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Leaf-by-leaf differences of two pod templates, ignoring the pod-template-hash label."""
    ignored = f"metadata.labels.{HASH_LABEL}"
    diff: list[dict[str, Any]] = []
    _leaf_changes(before, after, "", diff)
    return sorted((d for d in diff if d["path"] != ignored), key=lambda d: d["path"])


def annotations_only(diff: list[dict[str, Any]]) -> bool:
    return bool(diff) and all(d["path"].startswith("metadata.annotations.") for d in diff)


def _previous_revision(ctx: Context, rs: ReplicaSetFacts) -> ReplicaSetFacts | None:
    """The ReplicaSet of the revision right before ``rs`` (consecutive revisions only)."""
    return next((p for p in ctx.replica_sets if p.revision == rs.revision - 1), None)


def _describe_diff(diff: list[dict[str, Any]]) -> str:
    if not diff:
        return "no visible template change"
    paths = [d["path"] for d in diff[:3]]
    more = f" and {len(diff) - 3} more" if len(diff) > 3 else ""
    return "only " + ", ".join(paths) + more if annotations_only(diff) else ", ".join(paths) + more


def rerender_race(ctx: Context, found_orphans: list[Orphan]) -> list[Finding]:
    if ctx.canary is None or not ctx.current_hash or ctx.fully_promoted or ctx.aborted:
        return []
    current = ctx.current_rs
    reset: Reset | None = next(
        (r for r in reversed(ctx.history.resets) if r.to_hash == ctx.current_hash), None
    )
    if reset is not None:
        previous = ctx.replica_set(reset.from_hash)
        inferred = False
    else:
        if current is None or current.created is None:
            return []
        previous = _previous_revision(ctx, current)
        if previous is None or previous.created is None or previous.hash == ctx.stable_hash:
            return []
        stable = ctx.replica_set(ctx.stable_hash)
        if stable is not None and previous.revision <= stable.revision:
            return []  # the older one is a rollback target, not an unpromoted release
        gap = (current.created - previous.created).total_seconds()
        if not 0 <= gap <= ctx.thresholds.rerender_window_seconds:
            return []
        diff = template_diff(previous.template, current.template)
        if (ctx.step_index or 0) != 0 and not annotations_only(diff):
            return []
        inferred = True

    diff = template_diff(previous.template, current.template) if previous and current else []
    config_only = annotations_only(diff)
    since = (current.created if current else None) or (reset.at if reset else ctx.now)
    first_at = reset.at if reset else since
    earlier = ctx.history.sighting(reset.from_hash) if reset else None
    previous_at = (previous.created if previous else None) or (earlier.first_seen if earlier else None)
    orphan_names = [o.replica_set.name for o in found_orphans]
    syncs = [
        s for s in (sync_near(ctx, previous_at), sync_near(ctx, current.created if current else None)) if s
    ]
    evidence: dict[str, Any] = {
        "previousHash": reset.from_hash if reset else previous.hash if previous else None,
        "currentHash": ctx.current_hash,
        "previousRevision": (reset.from_revision if reset else None)
        or (previous.revision if previous else None),
        "currentRevision": (reset.to_revision if reset else None) or (current.revision if current else None),
        "previousRenderAt": rfc3339(previous_at),
        "rerenderAt": rfc3339(since if inferred else first_at),
        "stepBefore": reset.step_before if reset else None,
        "stepAfter": reset.step_after if reset else ctx.step_index,
        "templateDiff": diff[:MAX_DIFF_ENTRIES],
        "configOnly": config_only,
        "syncs": syncs,
        "orphanedReplicaSets": orphan_names,
        "inferred": inferred,
    }
    if inferred:
        gap_text = int((since - previous_at).total_seconds()) if previous_at else "?"
        evidence["inferredFrom"] = (
            f"ReplicaSets of consecutive revisions {evidence['previousRevision']} and "
            f"{evidence['currentRevision']} created {gap_text} s apart, the older one never promoted; "
            "the step reset itself was not observed"
        )
    step_text = (
        f"the canary had reached step {reset.step_before} and went back to step {reset.step_after}"
        if reset
        else "the canary restarted at step 0"
    )
    commit = next((str(x["commit"]) for x in syncs if x.get("commit")), None)
    if commit is not None:
        evidence["commit"] = commit  # the one commit both renders belong to (as the sync node counts)
        evidence["rendersOfCommit"] = max(int(x.get("rendersOfCommit") or 0) for x in syncs) or len(syncs)
    phase, _ = ctx.phase
    action: str | None = None
    params: dict[str, Any] | None = None
    if orphan_names:
        action, params = UNWEDGE, {"replicaSet": orphan_names[0]}
        now_text = (
            f"Now: scale the orphaned ReplicaSet {', '.join(orphan_names)} to zero (Unwedge), let the abort "
            "converge, then do one clean run."
        )
    elif phase == "Paused":
        action, params = "promote", {}
        now_text = (
            "Now: the pipeline's promotion job waited for a pause it had already seen and timed out; the "
            "restarted canary is the same application, so promote it from here (Promote) and do not re-run "
            "the pipeline."
        )
    else:
        now_text = (
            "Now: let the restarted canary run through once and do not re-run the pipeline; trust the "
            "rollout's own phase, not the app health (a paused canary reads Degraded/Suspended in Argo CD)."
        )
    fix_text = (
        "For good: render once per commit — put the inline Helm values in the values file in git (or pin the "
        "values file to the same revision, e.g. a multi-source Application with a $values ref), so a config "
        "change cannot arrive in two syncs; and make the pipeline wait on the rollout's phase "
        "(kubectl argo rollouts status), not on Argo CD's app health."
    )
    evidence["doNow"] = now_text
    evidence["fixForGood"] = fix_text
    runbook = [ctx.runbook.watch_step_and_hash(), ctx.runbook.diff_templates()]
    runbook += [ctx.runbook.scale_to_zero(name) for name in orphan_names]
    if action == "promote":
        runbook.append(ctx.runbook.argo("promote"))
    renders_text = (
        f"rendered commit {commit[:7]} twice" if commit is not None else "rendered the release twice"
    )
    return [
        ctx.finding(
            RERENDER_RACE,
            CRITICAL,
            "Re-render race: the canary restarted at step 0",
            f"The pod template changed while revision {evidence['previousRevision']} was still rolling out "
            f"({_describe_diff(diff)}), so {step_text} on a new revision. The sync engine {renders_text} "
            "(inline values applied at once, the values file read from a checkout that lagged), and "
            f"re-running the pipeline renders it again and restarts the canary once more. {now_text} "
            f"{fix_text}",
            evidence,
            runbook,
            since,
            action=action,
            action_params=params,
        )
    ]


def config_only_revision(ctx: Context) -> list[Finding]:
    current = ctx.current_rs
    if current is None or (ctx.fully_promoted and ctx.phase[0] == "Healthy"):
        return []  # once the revision is promoted and healthy there is no restart left to warn about
    previous = _previous_revision(ctx, current)
    if previous is None:
        return []
    diff = template_diff(previous.template, current.template)
    if not annotations_only(diff):
        return []
    keys = sorted({d["path"].removeprefix("metadata.annotations.") for d in diff})
    return [
        ctx.finding(
            CONFIG_ONLY_REVISION,
            WARNING,
            f"Revision {current.revision} changed only {', '.join(keys)}",
            f"Revisions {previous.revision} and {current.revision} have the same containers and "
            "differ only in "
            f"pod-template annotations ({', '.join(keys)}). Nothing about the application changed; "
            "the render "
            "did, and every such render restarts the canary.",
            {
                "previousReplicaSet": previous.name,
                "currentReplicaSet": current.name,
                "previousRevision": previous.revision,
                "currentRevision": current.revision,
                "templateDiff": diff[:MAX_DIFF_ENTRIES],
            },
            [ctx.runbook.diff_templates()],
            current.created or ctx.now,
        )
    ]


def _pod_problems(ctx: Context, pod_hash: str) -> list[str]:
    reasons = []
    for pod in ctx.objects.pods:
        if dig(pod, "metadata", "labels", HASH_LABEL) != pod_hash:
            continue
        for status in maps(dig(pod, "status", "containerStatuses")):
            reason = dig_str(status, "state", "waiting", "reason")
            if reason:
                reasons.append(f"{dig_str(pod, 'metadata', 'name')}: {reason}")
    return sorted(set(reasons))[:10]


def stuck_at_step_zero(ctx: Context) -> list[Finding]:
    phase, message = ctx.phase
    if ctx.canary is None or not ctx.steps or ctx.fully_promoted or phase != "Progressing":
        return []
    if (ctx.step_index or 0) != 0:
        return []
    current = ctx.current_rs
    sighting = ctx.history.sighting(ctx.current_hash)
    started = (current.created if current else None) or (sighting.first_seen if sighting else None)
    if started is None:
        return []
    threshold = timedelta(seconds=ctx.thresholds.stuck_at_step_zero_seconds)
    waited = ctx.now - started
    if waited < threshold:
        return []
    minutes = int(waited.total_seconds() // 60)
    after_rerender = any(r.to_hash == ctx.current_hash for r in ctx.history.resets) or (
        current is not None
        and (previous := _previous_revision(ctx, current)) is not None
        and previous.hash != ctx.stable_hash
        and previous.created is not None
        and current.created is not None
        and (current.created - previous.created).total_seconds() <= ctx.thresholds.rerender_window_seconds
    )
    cause = (
        " It follows a second render of the same release, the re-render race's symptom."
        if after_rerender
        else " Look at the canary's pods: something keeps the first step from completing."
    )
    return [
        ctx.finding(
            STUCK_AT_STEP_ZERO,
            WARNING,
            f"Stuck at step 0 for {minutes} min",
            f"Revision {current.revision if current else '?'} started {minutes} min ago and the "
            "rollout is still "
            f"Progressing at step 0 ({message or 'no message'}). A pause would read Paused; Progressing at "
            f"step 0 this long after the start is not the design working.{cause}",
            {
                "startedAt": rfc3339(started),
                "waitedSeconds": int(waited.total_seconds()),
                "thresholdSeconds": int(threshold.total_seconds()),
                "phaseMessage": message,
                "replicaSet": current.name if current else None,
                "canaryReplicas": current.replicas if current else None,
                "canaryAvailable": current.available if current else None,
                "podProblems": _pod_problems(ctx, ctx.current_hash),
                "afterRerender": bool(after_rerender),
            },
            [
                ctx.runbook.phase_and_message(),
                ctx.runbook.watch_step_and_hash(),
                ctx.runbook.pods_of(ctx.current_hash),
            ],
            started + threshold,
        )
    ]
