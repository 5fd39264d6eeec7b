"""Findings where the sync engine (Argo CD) and the pipeline disagree with the rollout itself.

- ``paused-reported-degraded`` (info): the rollout is Paused by design while its Application reports it
  Suspended or Degraded; a pipeline that waits on app health fails a healthy release.
- ``pipeline-red-rollout-healthy`` (warning): the commit's pipeline failed, yet the rollout is fully
  promoted and Healthy; the deploy succeeded underneath a red pipeline.

Also the helpers that tie a ReplicaSet to the Argo CD sync that rendered it (``sync_near``) and to its
commit (``commit_of``). Non-goals: fetching pipeline states (callers pass them in), commit metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from ..applications import application_view, attribute_renders, split_renders
from ..objects import as_str, dig, dig_map, dig_str, maps, parse_time, rfc3339
from .base import INFO, WARNING, Context, Finding, ReplicaSetFacts

PAUSED_REPORTED_DEGRADED = "paused-reported-degraded"
PIPELINE_RED_ROLLOUT_HEALTHY = "pipeline-red-rollout-healthy"

FAILED_PIPELINE_STATES = frozenset({"failed", "failure", "error", "errored", "timed_out", "red"})
# The Rollout is written by the sync, so its new ReplicaSet appears just after the sync's deployedAt.
_SYNC_TO_REPLICASET = timedelta(seconds=60)


def _revisions(entry: Mapping[str, Any]) -> list[str]:
    revision = entry.get("revision")
    if isinstance(revision, str) and revision:
        return [revision]
    return [r for r in (dig(entry, "revisions") or []) if isinstance(r, str) and r]


def _inline_values(source: Any) -> Any:
    helm = dig_map(source, "helm")
    return helm.get("valuesObject") if helm.get("valuesObject") is not None else helm.get("values")


def sync_near(ctx: Context, moment: datetime | None) -> dict[str, Any] | None:
    """The Application history entry (sync) that rendered a ReplicaSet created at ``moment``."""
    if moment is None:
        return None
    for app in ctx.managing_applications:
        history = [e for e in maps(dig(app, "status", "history")) if parse_time(e.get("deployedAt"))]
        history.sort(key=lambda e: parse_time(e.get("deployedAt")))  # type: ignore[arg-type,return-value]
        match = None
        for index, entry in enumerate(history):
            deployed = parse_time(entry.get("deployedAt"))
            assert deployed is not None
            if deployed <= moment + timedelta(seconds=5) and moment - deployed <= _SYNC_TO_REPLICASET:
                match = index
        if match is None:
            continue
        entry = history[match]
        before = history[match - 1] if match > 0 else None
        commit, reason, renders = _attributed(app, entry.get("id"))
        return {
            # The commit this render belongs to and how many renders that commit took, by the same
            # attribution the diagram's sync node uses (a split render's first half belongs to the commit
            # whose values file it was waiting for), so the finding and the node tell one story.
            "commit": commit,
            "reason": reason,
            "rendersOfCommit": renders,
            "application": f"{dig_str(app, 'metadata', 'namespace')}/{dig_str(app, 'metadata', 'name')}",
            "id": entry.get("id"),
            "revisions": _revisions(entry),
            "deployedAt": rfc3339(parse_time(entry.get("deployedAt"))),
            "automated": bool(dig(entry, "initiatedBy", "automated")),
            "revisionChanged": before is not None and _revisions(before) != _revisions(entry),
            "inlineValuesChanged": before is not None
            and _inline_values(before.get("source")) != _inline_values(entry.get("source")),
        }
    return None


def _attributed(app: Mapping[str, Any], history_id: Any) -> tuple[str | None, str, int]:
    renders = application_view(app).renders
    attributed = attribute_renders(renders)
    found = next((a for a in attributed if a.render.id is not None and a.render.id == history_id), None)
    if found is None or not found.commit:
        return None, "", 0
    return found.commit, found.reason, len(split_renders(attributed).get(found.commit, ())) or 1


def commit_of(ctx: Context, rs: ReplicaSetFacts | None) -> list[str]:
    """The commit(s) a revision was rendered from: its sync in the history, else the app's sync revision."""
    if rs is not None:
        sync = sync_near(ctx, rs.created)
        if sync is not None:
            return list(sync["revisions"])
    for app in ctx.managing_applications:
        sync_status = dig_map(app, "status", "sync")
        found = _revisions(sync_status)
        if found:
            return found
    return []


def _pipeline_state(pipelines: Mapping[str, str], commit: str) -> tuple[str, str] | None:
    """The pipeline state of ``commit``; keys may be full or abbreviated (7+ characters) SHAs."""
    if commit in pipelines:
        return commit, pipelines[commit]
    for key, state in pipelines.items():
        if len(key) >= 7 and len(commit) >= 7 and (commit.startswith(key) or key.startswith(commit)):
            return key, state
    return None


def paused_reported_degraded(ctx: Context) -> list[Finding]:
    phase, message = ctx.phase
    if phase != "Paused" or _timed_pause(ctx):
        return []
    for app in ctx.managing_applications:
        health = dig_map(app, "status", "health")
        resource_health = next(
            (
                dig_map(r, "health")
                for r in maps(dig(app, "status", "resources"))
                if r.get("kind") == "Rollout" and r.get("name") == ctx.name and dig(r, "health") is not None
            ),
            {},
        )
        reported = as_str(health.get("status")) or as_str(resource_health.get("status"))
        if reported not in ("Suspended", "Degraded"):
            continue
        pauses = maps(ctx.status.get("pauseConditions"))
        started = [t for t in (parse_time(p.get("startTime")) for p in pauses) if t is not None]
        since = min(started) if started else parse_time(health.get("lastTransitionTime")) or ctx.now
        app_name = dig_str(app, "metadata", "name")
        operation = dig_map(app, "status", "operationState")
        return [
            ctx.finding(
                PAUSED_REPORTED_DEGRADED,
                INFO,
                f"Paused by design, Argo CD says {reported}",
                f"The rollout is Paused ({message or 'paused'}), which is the release working as designed, "
                f"while Argo CD reports application {app_name} as {reported}. Trust the rollout's own phase: "
                "a pipeline step that waits for the app to be Healthy will fail this healthy release.",
                {
                    "rolloutPhase": phase,
                    "rolloutMessage": message,
                    "pauseReasons": [as_str(p.get("reason")) for p in pauses],
                    "application": f"{dig_str(app, 'metadata', 'namespace')}/{app_name}",
                    "applicationHealth": reported,
                    "applicationHealthMessage": as_str(health.get("message")) or None,
                    "syncOperation": as_str(operation.get("phase")) or None,
                    "syncMessage": as_str(operation.get("message")) or None,
                },
                [ctx.runbook.phase_and_message(), ctx.runbook.phase_and_step()],
                since,
            )
        ]
    return []


def _timed_pause(ctx: Context) -> bool:
    """A canary pause step with a duration resumes by itself: nobody is left waiting on app health."""
    reasons = {as_str(p.get("reason")) for p in maps(ctx.status.get("pauseConditions"))}
    index = ctx.step_index
    if reasons != {"CanaryPauseStep"} or index is None or not 0 <= index < len(ctx.steps):
        return False
    pause = ctx.steps[index].get("pause")
    return isinstance(pause, Mapping) and pause.get("duration") is not None


def pipeline_red_rollout_healthy(ctx: Context) -> list[Finding]:
    if not ctx.pipelines or not ctx.fully_promoted or ctx.phase[0] != "Healthy":
        return []
    rs = ctx.current_rs
    for commit in commit_of(ctx, rs):
        match = _pipeline_state(ctx.pipelines, commit)
        if match is None or match[1].strip().lower() not in FAILED_PIPELINE_STATES:
            continue
        healthy = next(
            (c for c in maps(dig(ctx.rollout, "status", "conditions")) if c.get("type") == "Healthy"), {}
        )
        since = parse_time(healthy.get("lastTransitionTime")) or (rs.created if rs else None) or ctx.now
        return [
            ctx.finding(
                PIPELINE_RED_ROLLOUT_HEALTHY,
                WARNING,
                "Deployed under a red pipeline",
                f"The pipeline of commit {commit[:12]} is marked {match[1]}, yet the rollout reached full "
                "weight and is Healthy: the deploy succeeded underneath the red pipeline. Do not re-run it; "
                "a re-run renders the release again and churns production for nothing.",
                {
                    "commit": commit,
                    "pipelineState": match[1],
                    "revision": rs.revision if rs else None,
                    "podTemplateHash": ctx.current_hash,
                    "rolloutPhase": ctx.phase[0],
                },
                [ctx.runbook.phase_and_step(), ctx.runbook.get_rollout()],
                since,
            )
        ]
    return []
