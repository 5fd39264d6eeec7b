"""The GitOps chain (merge → commit → pipeline → sync) as the pages show it (pure, no I/O).

``dashboard.gitops.queries`` reads the chain (webhook tables + the view's ``gitops``); this module turns it
into what the flow diagram's merge / git / sync nodes and the release page's chain strip say. Without a
chain (replayed diagrams, the database unavailable) ``view_chain`` derives what the view alone knows: the
Application from ``view["gitops"]`` and the revision it synced. A stage whose source is not configured stays
and says why it is not observed.

Non-goals: reading webhooks or the database; deciding which commit a render belongs to (the gitops package
does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dashboard.web.fleet import ARGOCD_HEALTH_ICONS
from dashboard.web.timefmt import clock

PIPELINE_ICONS = {
    "success": "healthy",
    "running": "progressing",
    "pending": "paused",
    "failure": "degraded",
    "canceled": "warning",
    "skipped": "unknown",
}
STAGES = ("merge", "commit", "pipeline", "sync")


def safe_url(value: object) -> str:
    """``value`` when it is an http(s) URL, else ``""`` (webhook payloads must never become script links)."""
    if isinstance(value, str) and value.lower().startswith(("https://", "http://")):
        return value
    return ""


def _not_observed(reason: str) -> dict[str, Any]:
    return {"observed": False, "reason": reason}


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def view_chain(view: Mapping[str, Any]) -> dict[str, Any]:
    """The chain as far as the view alone knows it (the Application; commits need the webhook tables)."""
    gitops = _mapping(view.get("gitops") or view.get("argocd"))
    source = _mapping(view.get("source"))
    merge, commit = _mapping(source.get("merge")), _mapping(source.get("commit"))
    revision = commit.get("sha") or gitops.get("revision")
    no_webhooks = "no merge or push webhook seen for this rollout's repository"
    chain: dict[str, Any] = {
        "merge": {"observed": True, **merge} if merge else _not_observed(no_webhooks),
        "commit": (
            {
                "observed": True,
                "sha": str(revision),
                "short": str(revision)[:7],
                "title": commit.get("message") or commit.get("title") or "",
                "url": commit.get("url") or "",
            }
            if revision
            else _not_observed("no revision known for this rollout")
        ),
        "pipeline": _not_observed("no pipeline reported"),
        "sync": (
            {"observed": True, **gitops}
            if gitops
            else _not_observed("no Argo CD Application manages this rollout")
        ),
    }
    return chain


def _value_files(sync: Mapping[str, Any]) -> list[str]:
    files: list[str] = []
    for source in sync.get("sources") or ():
        values = _mapping(_mapping(source).get("values"))
        for name in values.get("valueFiles") or ():
            if str(name) not in files:
                files.append(str(name))
    return files


def values_text(sync: Mapping[str, Any]) -> str:
    """Where the rendered values came from: the value files, plus "inline" when the Application has some."""
    files = _value_files(sync)
    origin = str(sync.get("valuesFrom") or "")
    if files:
        return ", ".join(files) + (" + inline values" if origin.startswith("inline") else "")
    words = {"inline": "inline values", "files": "value files", "inline+files": "inline values + files"}
    return words.get(origin, origin)


def renders_of_commit(sync: Mapping[str, Any]) -> int:
    renders = sync.get("renders")
    return renders if isinstance(renders, int) and not isinstance(renders, bool) else 0


def split_render_times(sync: Mapping[str, Any]) -> list[str]:
    """Clock times of the renders of the current commit when it was rendered more than once."""
    renders: Sequence[Any] = sync.get("splitRender") or ()
    if not renders:
        revision = sync.get("revision")
        renders = [
            h
            for h in sync.get("history") or ()
            if isinstance(h, Mapping)
            and revision
            and h.get("commit") == revision
            and h.get("changed") != "none"
        ]
    times = [clock(_mapping(r).get("startedAt") or _mapping(r).get("deployedAt")) for r in renders]
    return [t for t in times if t]


def merge_node(merge: Mapping[str, Any]) -> dict[str, Any]:
    """Kind, title, lines, link and status for the diagram's merge node."""
    if not merge.get("observed"):
        return {"kind": "Merge", "title": "not observed", "lines": [], "hint": str(merge.get("reason") or "")}
    number = merge.get("number")
    push = merge.get("kind") == "push"
    title = f"PR #{number}" if number else ("push" if push else str(merge.get("title") or "merge"))
    lines = []
    if number or push:
        lines.append({"text": f"“{merge.get('title') or ''}”", "cls": "muted"})
    who = " · ".join(x for x in (str(merge.get("author") or ""), clock(merge.get("at"))) if x)
    if who:
        lines.append({"text": who, "cls": "muted"})
    return {
        "kind": "Push" if push else "Merge",
        "title": title,
        "lines": lines,
        "url": safe_url(merge.get("url")),
        "status": "healthy",
        "hint": "merged" if not push else "pushed",
    }


def git_node(
    commit: Mapping[str, Any], pipeline: Mapping[str, Any], sync: Mapping[str, Any]
) -> dict[str, Any]:
    """The diagram's git node: short sha, message, values file, and the pipeline's state."""
    if not commit.get("observed"):
        return {"kind": "Git", "title": "not observed", "lines": [], "hint": str(commit.get("reason") or "")}
    lines = []
    if commit.get("title"):
        lines.append({"text": str(commit["title"]), "cls": "muted"})
    values = values_text(sync) if sync.get("observed") else ""
    if values:
        lines.append({"text": values, "cls": "mono muted"})
    alert = ""
    if pipeline.get("observed"):
        state = str(pipeline.get("state") or "")
        lines.append(
            {
                "text": f"CI {state}",
                "cls": "pipeline",
                "icon": PIPELINE_ICONS.get(state, "unknown"),
                "url": safe_url(pipeline.get("url")),
            }
        )
        alert = "warning" if state == "failure" else ""
    else:
        lines.append({"text": "CI not observed", "cls": "muted"})
    return {
        "kind": "Git",
        "title": str(commit.get("short") or str(commit.get("sha") or "")[:7]),
        "lines": lines,
        "url": safe_url(commit.get("url")),
        "mono": True,
        "alert": alert,
        "hint": str(commit.get("sha") or ""),
    }


def sync_node(sync: Mapping[str, Any]) -> dict[str, Any]:
    """The diagram's sync node: the Application, what Argo CD says (sync + health), the revision synced."""
    if not sync.get("observed"):
        return {
            "kind": "Argo CD sync",
            "title": "not observed",
            "lines": [],
            "hint": str(sync.get("reason") or ""),
        }
    status, health = str(sync.get("sync") or "sync ?"), str(sync.get("health") or "health ?")
    revision = str(sync.get("revision") or "")
    lines = [{"text": f"{status} · {health}", "cls": "engine"}]
    if revision:
        lines.append({"text": f"revision {revision[:7]}", "cls": "muted mono"})
    operation = _mapping(sync.get("operation"))
    if operation.get("phase") == "Running":
        lines.append({"text": "sync running", "cls": "muted"})
    node: dict[str, Any] = {
        "kind": "Argo CD sync",
        "title": str(sync.get("app") or sync.get("application") or "Application"),
        "lines": lines,
        "status": ARGOCD_HEALTH_ICONS.get(health, "unknown"),
        "hint": str(sync.get("application") or ""),
    }
    renders = renders_of_commit(sync)
    if renders > 1:
        times = split_render_times(sync)
        node["alert"] = "warning"
        node["marker"] = {
            "text": f"{renders} renders of this commit",
            "cls": "warning",
            "sub": ("at " + " · ".join(times)) if times else "",
            "reset": False,
            "role": "renders",
        }
    return node


def _stage(stage: str, label: str, node: Mapping[str, Any], observed: bool, reason: object) -> dict[str, Any]:
    return {
        "stage": stage,
        "label": label,
        "observed": observed,
        "title": str(node.get("title") or "not observed"),
        "detail": " · ".join(line["text"] for line in node.get("lines") or ()) if observed else "",
        "url": str(node.get("url") or ""),
        "mono": bool(node.get("mono")),
        "reason": "" if observed else str(reason or "not observed"),
    }


def release_chain(chain: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The release page's strip: merge → commit → sync → revision, each observed or saying why not."""
    chain = chain or {}
    merge, commit, sync = (_mapping(chain.get(k)) for k in ("merge", "commit", "sync"))
    pipeline, release = _mapping(chain.get("pipeline")), _mapping(chain.get("release"))
    git = git_node(commit, pipeline, {})  # no values line: the release's values are not recorded
    synced = sync_node(sync)
    render = _mapping(sync.get("render"))
    rendered = clock(render.get("startedAt") or render.get("deployedAt"))
    if rendered:
        synced["lines"] = [*synced["lines"], {"text": f"rendered {rendered}", "cls": "muted"}]
    revision = {
        "title": f"rev {release.get('revision')}" if release.get("revision") else release.get("podHash"),
        "lines": [{"text": str(release.get("podHash") or ""), "cls": "mono"}],
        "mono": True,
    }
    return [
        _stage(
            "merge",
            str(merge_node(merge)["kind"]),
            merge_node(merge),
            bool(merge.get("observed")),
            merge.get("reason"),
        ),
        _stage("commit", "Commit", git, bool(commit.get("observed")), commit.get("reason")),
        _stage("sync", "Argo CD sync", synced, bool(sync.get("observed")), sync.get("reason")),
        _stage("revision", "Revision", revision, bool(release.get("observed")), release.get("reason")),
    ]
