"""Environments: one application across clusters and namespaces, in promotion order (pure, no I/O).

``environments(rows, group_by=..., order=...)`` takes presented fleet rows (``dashboard.web.fleet.fleet_row``)
and groups them into applications:

- ``group_by`` says what makes rollouts one application: ``label:<key>`` (default
  ``label:app.kubernetes.io/name``), ``applicationset`` (the Argo CD ApplicationSet that generated the
  managing Application) or ``name`` (the rollout's name). Rollouts without that key belong to no
  application and are not listed.
- Each rollout's environment is its ``environment`` (or ``env``) label when it has one, else the first word
  of ``order`` found among the dash/dot/underscore-separated words of its namespace, then its cluster
  (``shop-staging`` → staging; ``production`` → prod, by prefix), else its namespace.
- Environments are sorted by ``order`` (default dev → test → qa → staging → prod), unknown ones after them
  by name.

``find_commit(apps, text)`` marks where a commit (a prefix of the synced Git revision, at least 4
characters) or an image (a substring of an image reference) runs. Non-goals: live state, permissions
(callers pass only rows the user may see).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

DEFAULT_GROUP_BY = "label:app.kubernetes.io/name"
DEFAULT_ORDER = ("dev", "test", "qa", "staging", "prod")
ENV_LABELS = ("environment", "env")
_WORDS = re.compile(r"[-_.]+")


class EnvironmentsConfigError(ValueError):
    """A grouping rule that cannot be used (settings)."""


def check_group_by(rule: str) -> str:
    if rule in ("applicationset", "name") or (rule.startswith("label:") and len(rule) > len("label:")):
        return rule
    raise EnvironmentsConfigError(
        f"ENVIRONMENTS_GROUP_BY: expected label:<key>, applicationset or name, got {rule!r}"
    )


def app_of(row: Mapping[str, Any], group_by: str) -> str:
    """The application a presented fleet row belongs to under ``group_by`` ("" for none)."""
    if group_by == "applicationset":
        return str(row.get("applicationSet") or "")
    if group_by == "name":
        return str(row.get("name") or "")
    labels = row.get("labels") or {}
    return str(labels.get(group_by[len("label:") :]) or "")


def _matches(word: str, env: str) -> bool:
    return word == env or (len(word) >= 3 and (word.startswith(env) or env.startswith(word)))


def environment_of(row: Mapping[str, Any], order: Sequence[str]) -> str:
    labels = row.get("labels") or {}
    for key in ENV_LABELS:
        if labels.get(key):
            return str(labels[key])
    for place in (str(row.get("namespace") or ""), str(row.get("cluster") or "")):
        words = [w.lower() for w in _WORDS.split(place) if w]
        for env in order:
            if any(_matches(word, env) for word in words):
                return env
    return str(row.get("namespace") or "")


def _images(row: Mapping[str, Any], tag: str) -> list[str]:
    return [str(i.get("image")) for i in row.get("images") or () if tag in (i.get("tags") or ())]


def _place(row: Mapping[str, Any], env: str) -> dict[str, Any]:
    stable = _images(row, "stable")
    canary = [i for i in _images(row, "canary") if i not in stable]
    revision = str(row.get("gitRevision") or "")
    return {
        "environment": env,
        "key": row.get("key"),
        "cluster": row.get("cluster"),
        "namespace": row.get("namespace"),
        "name": row.get("name"),
        "url": row.get("url"),
        "status": row.get("status"),
        "icon": row.get("icon"),
        "tone": row.get("tone"),
        "reason": row.get("reason"),
        "step": row.get("step") or "",
        "setWeight": row.get("setWeight"),
        "stableImages": stable or [str(i.get("image")) for i in row.get("images") or ()][:1],
        "canaryImages": canary,
        "stableHash": row.get("stableHash") or "",
        "canaryHash": row.get("canaryHash") or "",
        "commit": revision,
        "commitShort": revision[:7],
        "application": row.get("application") or "",
        "gitops": row.get("gitops") or "",  # the managing Application's health · sync, when there is one
        "gitopsIcon": row.get("gitopsIcon") or "",
        "match": False,
    }


def environments(
    rows: Iterable[Mapping[str, Any]],
    *,
    group_by: str = DEFAULT_GROUP_BY,
    order: Sequence[str] = DEFAULT_ORDER,
) -> list[dict[str, Any]]:
    """Applications, each with its environments in promotion order (apps in more places first)."""
    rank = {env: i for i, env in enumerate(order)}
    apps: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        app = app_of(row, group_by)
        if app:
            apps.setdefault(app, []).append(_place(row, environment_of(row, order)))
    result: list[dict[str, Any]] = []
    for app, places in apps.items():
        places.sort(
            key=lambda p: (
                rank.get(p["environment"], len(rank)),
                p["environment"],
                p["cluster"] or "",
                p["namespace"] or "",
            )
        )
        result.append({"app": app, "environments": places, "count": len(places)})
    result.sort(key=lambda a: (-int(a["count"]), str(a["app"])))
    return result


def find_commit(apps: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """Mark the places running ``text`` (a commit prefix of ≥ 4 characters, or part of an image); the
    matching places, in the apps' order."""
    needle = text.strip().lower()
    found: list[dict[str, Any]] = []
    if not needle:
        return found
    for app in apps:
        for place in app["environments"]:
            commit = str(place["commit"]).lower()
            images = [i.lower() for i in (*place["stableImages"], *place["canaryImages"])]
            hit = (len(needle) >= 4 and bool(commit) and commit.startswith(needle)) or any(
                needle in image for image in images
            )
            place["match"] = hit
            if hit:
                found.append({"app": app["app"], "environment": place["environment"], "key": place["key"]})
    return found
