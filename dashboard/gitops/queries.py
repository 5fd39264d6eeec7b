"""The read side of the GitOps chain, for the flow diagram's merge / git / sync nodes and the release page.

``latest_chain`` and ``chain_for_release`` return one dict with a node per stage::

    {"merge":    {"observed": true, "kind": "merge"|"push", "title", "number", "url", "author", "mergedBy",
                  "at", "sha"},
     "commit":   {"observed": true, "sha", "short", "title", "author", "url", "at", "repository", "source"},
     "pipeline": {"observed": true, "state", "url", "runs": [{"pipeline", "provider", "state", "url", "at"}]},
     "sync":     {"observed": true, "application", "sync", "health", "healthMessage", "revision", "operation",
                  "reconciledAt", "autoSync", "selfHeal", "valuesFrom", "render", "splitRender", "renders"},
     "release":  {...}                       # chain_for_release only
     "source":   {"merge": {...} | None, "commit": {...} | None}}   # the shape dashboard.web.flow reads

A node whose source is not configured (no Application manages the rollout, the repository has no webhook
configured, no pipeline reported) is ``{"observed": false, "reason": "..."}``.

The sync facts come from the rollout's published view (``view["gitops"]``, built by
``dashboard.domain.applications.gitops_for_rollout`` in the watcher); merges, commits and pipelines from
the webhook tables; releases from the history tables. The functions are synchronous (Django ORM); the async
wrappers fetch the view from the live bus first.

Non-goals: no writes, no provider API calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async

from dashboard.domain.applications import (
    SPLIT_RENDER_WINDOW,
    Attribution,
    Render,
    attribute_renders,
    render_for_release,
    render_from_dict,
)
from dashboard.domain.objects import rfc3339
from dashboard.gitops.config import repo_key, repositories
from dashboard.gitops.models import Commit, PipelineRun
from dashboard.gitops.providers import CANCELED, FAILURE, PENDING, RUNNING, SKIPPED, SUCCESS
from dashboard.history.models import Release

# Worst first: the chain's pipeline state is the worst of the latest run of each pipeline.
_STATE_ORDER = (FAILURE, RUNNING, PENDING, CANCELED, SUCCESS, SKIPPED)
_MAX_COMMITS = 200


def _not_observed(reason: str) -> dict[str, Any]:
    return {"observed": False, "reason": reason}


def _gitops(view: Mapping[str, Any] | None) -> Mapping[str, Any]:
    gitops = (view or {}).get("gitops")
    return gitops if isinstance(gitops, Mapping) else {}


def _repository_keys(gitops: Mapping[str, Any]) -> list[str]:
    """The configured repositories the Application renders from (all sources, ref sources included)."""
    configured = repositories()
    keys = []
    for source in gitops.get("sources") or ():
        if isinstance(source, Mapping):
            key = repo_key(source.get("repoURL"))
            if key in configured and key not in keys:
                keys.append(key)
    return keys


def _renders(gitops: Mapping[str, Any]) -> list[Render]:
    return [render_from_dict(h) for h in gitops.get("history") or () if isinstance(h, Mapping)]


def _landed(repo_keys: Sequence[str], renders: Sequence[Render]) -> list[tuple[str, datetime]]:
    """Known commits (sha, landing time) around the renders, for ``attribute_renders``."""
    if not repo_keys:
        return []
    times = [r.at for r in renders if r.at is not None]
    rows = Commit.objects.filter(repository__key__in=repo_keys)
    if times:
        rows = rows.filter(received_at__gte=min(times) - SPLIT_RENDER_WINDOW * 12)
    return [(c.sha, c.landed_at) for c in rows.order_by("-received_at")[:_MAX_COMMITS]]


def pipeline_state(runs: Iterable[Mapping[str, Any]]) -> str | None:
    """The worst state among the latest run of each (provider, pipeline); None without runs (pure)."""
    latest: dict[tuple[str, str], Mapping[str, Any]] = {}
    for run in runs:
        key = (str(run.get("provider")), str(run.get("pipeline")))
        if key not in latest or str(run.get("at") or "") >= str(latest[key].get("at") or ""):
            latest[key] = run
    states = {str(r.get("state")) for r in latest.values()}
    return next((s for s in _STATE_ORDER if s in states), None)


def pipeline_states_for(shas: Iterable[str]) -> dict[str, str]:
    """sha → pipeline state for the commits that have reported runs: the ``pipelines`` argument of
    ``dashboard.domain.findings`` (``pipeline-red-rollout-healthy``)."""
    wanted = {s.lower() for s in shas if isinstance(s, str) and s}
    by_sha: dict[str, list[dict[str, Any]]] = {}
    for run in PipelineRun.objects.filter(sha__in=wanted).values(
        "sha", "provider", "pipeline", "state", "at"
    ):
        by_sha.setdefault(run["sha"], []).append({**run, "at": rfc3339(run["at"])})
    return {sha: state for sha, runs in by_sha.items() if (state := pipeline_state(runs)) is not None}


def _find_commit(sha: str, repo_keys: Sequence[str]) -> Commit | None:
    rows = Commit.objects.select_related("repository").filter(sha=sha.lower())
    if repo_keys:
        rows = rows.filter(repository__key__in=repo_keys)
    return rows.first()


def _commit_nodes(sha: str | None, repo_keys: Sequence[str], revision_source: str) -> dict[str, Any]:
    """merge, commit and pipeline nodes for one commit."""
    if not sha:
        reason = "no revision known for this rollout"
        return {
            "merge": _not_observed(reason),
            "commit": _not_observed(reason),
            "pipeline": _not_observed(reason),
        }
    commit = _find_commit(sha, repo_keys)
    webhooks = bool(repo_keys) or commit is not None
    commit_node: dict[str, Any] = {
        "observed": True,
        "sha": sha,
        "short": sha[:7],
        "title": commit.title if commit else "",
        "author": commit.author if commit else "",
        "url": commit.url if commit else "",
        "at": rfc3339(commit.committed_at) if commit else None,
        "repository": commit.repository.key if commit else (repo_keys[0] if repo_keys else ""),
        "source": "webhook" if commit else revision_source,
    }
    if commit is None:
        reason = (
            f"no push or merge webhook received for {sha[:7]}"
            if webhooks
            else "the repository is not configured for webhooks (GITOPS_REPOSITORIES)"
        )
        merge_node = _not_observed(reason)
    elif commit.merge_number or commit.merge_url:
        merge_node = {
            "observed": True,
            "kind": "merge",
            "sha": sha,
            "number": commit.merge_number,
            "title": commit.merge_title or commit.title,
            "url": commit.merge_url,
            "author": commit.author,
            "mergedBy": commit.merged_by,
            "at": rfc3339(commit.merged_at or commit.committed_at),
        }
    else:
        merge_node = {
            "observed": True,
            "kind": "push",
            "sha": sha,
            "number": "",
            "title": commit.title,
            "url": commit.url,
            "author": commit.author,
            "mergedBy": "",
            "at": rfc3339(commit.committed_at or commit.received_at),
        }
    if not webhooks:
        pipeline_node = _not_observed("the repository is not configured for webhooks (GITOPS_REPOSITORIES)")
    else:
        rows = PipelineRun.objects.filter(sha=sha.lower())
        if repo_keys:
            rows = rows.filter(repository__key__in=repo_keys)
        runs = [
            {
                "pipeline": r.pipeline,
                "provider": r.provider,
                "state": r.state,
                "url": r.url,
                "at": rfc3339(r.at),
            }
            for r in rows.order_by("-at")[:50]
        ]
        state = pipeline_state(runs)
        if state is None:
            pipeline_node = _not_observed(f"no pipeline reported for {sha[:7]}")
        else:
            worst = next((r for r in runs if r["state"] == state), runs[0])
            pipeline_node = {"observed": True, "state": state, "url": worst["url"], "runs": runs}
    return {"merge": merge_node, "commit": commit_node, "pipeline": pipeline_node}


def _sync_node(
    gitops: Mapping[str, Any], attribution: Attribution | None, attributions: Sequence[Attribution]
) -> dict[str, Any]:
    if not gitops:
        return _not_observed("no Argo CD Application manages this rollout")
    node: dict[str, Any] = {"observed": True}
    for key in (
        "application",
        "app",
        "sync",
        "health",
        "healthMessage",
        "revision",
        "revisions",
        "operation",
        "reconciledAt",
        "autoSync",
        "selfHeal",
        "valuesFrom",
        "renders",
        "alsoManagedBy",
    ):
        if key in gitops:
            node[key] = gitops[key]
    node["render"] = None
    node["splitRender"] = []
    if attribution is not None:
        node["render"] = {
            **attribution.render.to_dict(),
            "commit": attribution.commit,
            "reason": attribution.reason,
        }
        same = [a for a in attributions if a.commit == attribution.commit and a.render.changed != "none"]
        if len(same) > 1:
            node["splitRender"] = [{**a.render.to_dict(), "reason": a.reason} for a in same]
    return node


def _flow_source(chain: Mapping[str, Any]) -> dict[str, Any]:
    merge, commit = chain["merge"], chain["commit"]
    return {
        "merge": {"title": merge.get("title"), "author": merge.get("author"), "url": merge.get("url")}
        if merge.get("observed")
        else None,
        "commit": {"sha": commit.get("sha"), "message": commit.get("title"), "url": commit.get("url")}
        if commit.get("observed")
        else None,
    }


def _assemble(
    gitops: Mapping[str, Any],
    attribution: Attribution | None,
    attributions: Sequence[Attribution],
    sha: str | None,
) -> dict[str, Any]:
    repo_keys = _repository_keys(gitops)
    chain = _commit_nodes(sha, repo_keys, "argocd" if gitops else "release")
    chain["sync"] = _sync_node(gitops, attribution, attributions)
    chain["source"] = _flow_source(chain)
    return chain


def latest_chain(
    cluster: str, namespace: str, rollout: str, view: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The chain behind what the rollout runs now: the newest render and the commit it belongs to."""
    gitops = _gitops(view)
    renders = _renders(gitops)
    attributions = attribute_renders(renders, _landed(_repository_keys(gitops), renders))
    latest = attributions[-1] if attributions else None
    sha = (latest.commit if latest else None) or gitops.get("revision")
    if not gitops:
        release = _latest_release(cluster, namespace, rollout)
        sha = release.git_revision if release and release.git_revision else None
    return _assemble(gitops, latest, attributions, sha if isinstance(sha, str) else None)


def _latest_release(cluster: str, namespace: str, rollout: str) -> Release | None:
    return (
        Release.objects.filter(cluster=cluster, namespace=namespace, rollout=rollout)
        .order_by("-started_at")
        .first()
    )


def chain_for_release(
    cluster: str, namespace: str, rollout: str, pod_hash: str, view: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The chain behind one release (a pod-template hash): the render that produced it and its commit."""
    release = Release.objects.filter(
        cluster=cluster, namespace=namespace, rollout=rollout, pod_hash=pod_hash
    ).first()
    gitops = _gitops(view)
    if release is None:
        reason = f"no release {pod_hash!r} recorded for {cluster}/{namespace}/{rollout}"
        return {
            "release": _not_observed(reason),
            "merge": _not_observed(reason),
            "commit": _not_observed(reason),
            "pipeline": _not_observed(reason),
            "sync": _sync_node(gitops, None, []),
            "source": {"merge": None, "commit": None},
        }
    renders = _renders(gitops)
    attributions = attribute_renders(renders, _landed(_repository_keys(gitops), renders))
    render = render_for_release(renders, release.started_at, release.git_revision)
    attribution = next((a for a in attributions if render is not None and a.render == render), None)
    sha = (attribution.commit if attribution else None) or release.git_revision or None
    chain = _assemble(gitops, attribution, attributions, sha)
    chain["release"] = {
        "observed": True,
        "podHash": release.pod_hash,
        "revision": release.revision,
        "startedAt": rfc3339(release.started_at),
        "endedAt": rfc3339(release.ended_at),
        "outcome": release.outcome,
        "gitRevision": release.git_revision,
        "commit": sha,
    }
    return chain


async def alatest_chain(cluster: str, namespace: str, rollout: str, *, bus: Any) -> dict[str, Any]:
    """``latest_chain`` with the view read from the live bus (``bus``: a ``dashboard.live.bus.LiveBus``)."""
    view = await bus.snapshot(f"{cluster}/{namespace}/{rollout}")
    return await sync_to_async(latest_chain)(cluster, namespace, rollout, view)


async def achain_for_release(
    cluster: str, namespace: str, rollout: str, pod_hash: str, *, bus: Any
) -> dict[str, Any]:
    view = await bus.snapshot(f"{cluster}/{namespace}/{rollout}")
    return await sync_to_async(chain_for_release)(cluster, namespace, rollout, pod_hash, view)
