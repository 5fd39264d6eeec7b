"""The simulator's truth at the end of a run: what every fleet page should show.

Lists every kind the watcher watches straight from each kubesim (same label selectors, paginated), builds
each rollout's view with the domain model exactly as a freshly started watcher would, and presents it as
the fleet page's compact row. A client whose table differs from this, row for row, missed or kept a
stale update.

Non-goals: judging the domain model itself (its own tests do); clock-dependent fields (the compact row
has none: ages are computed in the browser).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import aiohttp
import orjson

from dashboard.bench.churn import Cluster
from dashboard.bench.clients import canonical


async def list_objects(
    session: aiohttp.ClientSession, cluster: Cluster, path: str, label_selector: str | None
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    params: dict[str, str] = {"limit": "2000"}
    if label_selector:
        params["labelSelector"] = label_selector
    context = cluster.ssl_context()
    while True:
        async with session.get(
            cluster.url + path, params=params, headers=cluster.headers(), ssl=context
        ) as r:
            if r.status == 404:  # an optional CRD that is not installed
                return items
            r.raise_for_status()
            page = await r.json()
        items.extend(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return items
        params["continue"] = token


def bus_rows(client: Any, prefix: str) -> dict[str, str]:
    """The fleet rows the bus holds (``client``: a Redis client), presented like ``expected_rows``'."""
    from dashboard.bench.clients import canonical
    from dashboard.web.fleet_index import present

    now = datetime.now(UTC)
    rows = client.hgetall(f"{prefix}fleet")
    return {key.decode(): canonical(present(orjson.loads(raw), now)) for key, raw in rows.items()}


async def expected_rows(clusters: list[Cluster]) -> dict[str, str]:
    """Rollout key → canonical compact fleet row, for every rollout in every cluster."""
    from dashboard.domain.applications import gitops_for_rollout
    from dashboard.kube.cache import ClusterCache
    from dashboard.kube.watch import WATCHED_KINDS
    from dashboard.live.bus import fleet_row
    from dashboard.web.fleet_index import present

    now = datetime.now(UTC)
    rows: dict[str, str] = {}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=300)) as session:
        for cluster in clusters:
            cache = ClusterCache()
            for kind in WATCHED_KINDS:
                objects = await list_objects(session, cluster, kind.path(None), kind.label_selector)
                cache.replace(kind.name, None, objects)
            for uid in cache.rollouts():
                inputs = cache.inputs(uid)
                if inputs is None:
                    continue
                view = inputs.view(now=now, cluster=cluster.name)
                gitops = gitops_for_rollout(
                    inputs.applications, str(view.get("namespace")), str(view.get("name"))
                )
                if gitops is not None:
                    view.setdefault("gitops", gitops)
                row = fleet_row(view)
                rows[str(row["key"])] = canonical(present(row, now))
    return rows
