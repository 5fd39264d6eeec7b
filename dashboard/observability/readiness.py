"""Readiness checks: the database, Redis and every configured cluster's API server, each by name.

``run_checks(skip)`` runs them concurrently (threads, short timeouts) and returns one ``Check`` per
dependency, so ``/readyz`` can say exactly which one is down. A cluster is checked with ``GET /version``
(allowed to every client by Kubernetes' default ``system:public-info-viewer`` role, so it needs no RBAC
rule); the clusters are the ones actions can reach (``CLUSTERS``, plus clusters registered at run time such
as the demo's simulator), and ``default`` only when a default configuration exists (``KUBECONFIG``,
``~/.kube/config`` or a service account in a pod) — an installation with no Kubernetes configured is
not "unready" for it.

``skip`` drops checks by name (``database``, ``redis``, ``cluster:prod``) or all clusters (``clusters``):
the web Deployment's probe skips clusters, because one remote cluster's outage must not take the whole
dashboard out of its Service (its pages say that cluster is unreachable instead).

Each watched cluster also has a ``live:{cluster}`` check (skipped with ``clusters`` too): its watcher's
freshness report on the bus (``dashboard.live.freshness``) — not ready while it is stale or its watches
keep failing (a new API server certificate, a rotated token), even though ``GET /version`` answers.

Every check is bounded: the whole run answers within ``DEADLINE`` seconds, naming what did not answer
(a database that accepts connections and never replies, a Redis behind a dead route).

Non-goals: no caching (probes are seconds apart and each check is one round trip), no repair.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

TIMEOUT = (1.5, 1.5)  # connect, read: a probe must answer well inside Kubernetes' default 1 s… 10 s window
DEADLINE = 2.0  # seconds: every check that has not answered by then is reported as not answering


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str = "ok"


def check_database() -> Check:
    from django.db import connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as error:  # any driver error means "not ready"; the reason is reported
        return Check("database", False, f"error: {type(error).__name__}: {_first_line(error)}")
    finally:
        connection.close()  # a probe thread must not keep a connection open
    return Check("database", True)


def check_redis(url: str) -> Check:
    import redis

    from dashboard.live import outage

    # The probe's answer is also this process's view of the live bus: without it, an outage noted by a
    # page (the "live updates are down since …" banner) would only end when a browser polled live-status,
    # and the next outage would report the first one's start.
    try:
        redis.Redis.from_url(url, socket_timeout=TIMEOUT[1], socket_connect_timeout=TIMEOUT[0]).ping()
    except Exception as error:
        outage.failed(error)
        return Check("redis", False, f"error: {type(error).__name__}: {_first_line(error)}")
    outage.recovered()
    return Check("redis", True)


def check_cluster(name: str) -> Check:
    from kubernetes import client

    from dashboard.kube.actions import ActionClient, KubeError

    label = f"cluster:{name}"
    try:
        api = ActionClient(name).api_client
        version = client.VersionApi(api).get_code(_request_timeout=TIMEOUT)
    except KubeError as error:
        return Check(label, False, f"error: {error.message}")
    except Exception as error:  # unreachable, TLS, auth: all "not ready", with the reason
        return Check(label, False, f"error: {type(error).__name__}: {_first_line(error)}")
    return Check(label, True, f"ok ({version.git_version})")


def check_freshness() -> list[Check]:
    """One ``live:{cluster}`` check per cluster whose watcher reports to the bus."""
    from dashboard.live.bus import read_cluster_reports
    from dashboard.live.freshness import fleet_freshness, stale_after_seconds

    try:
        reports = read_cluster_reports(timeout=TIMEOUT[1])
    except Exception as error:  # Redis down is the redis check's to report
        return [Check("live", False, f"error: cannot read the watchers' reports: {_first_line(error)}")]
    checks = []
    for fresh in fleet_freshness(reports, now=time.time(), stale_after=stale_after_seconds()):
        label = f"live:{fresh['cluster']}"
        if fresh["stale"]:
            since = fresh["staleSince"] or "start"
            checks.append(Check(label, False, f"stale since {since}: {fresh['reason']}"))
        elif fresh["failing"]:
            first = fresh["failing"][0]
            checks.append(Check(label, False, f"watch {first['watch']} failing since {first['since']}: "
                                              f"{_first_line(Exception(first['error']))}"))
        else:
            checks.append(Check(label, True, f"ok (last seen {fresh['lastSeenAt']})"))
    return checks


def clusters_to_check() -> list[str]:
    from dashboard.kube.actions import DEFAULT_CLUSTER, clusters

    names = sorted(clusters())
    if DEFAULT_CLUSTER in names and not _default_configured():
        names.remove(DEFAULT_CLUSTER)
    return names


def _default_configured() -> bool:
    return bool(
        os.environ.get("KUBECONFIG")
        or (Path.home() / ".kube" / "config").is_file()
        or os.environ.get("KUBERNETES_SERVICE_HOST")
    )


def run_checks(skip: Collection[str] = (), *, deadline: float = DEADLINE) -> list[Check]:
    planned: list[tuple[str, Callable[[], Check | list[Check]]]] = [("database", check_database)]
    if settings.REDIS_URL:
        url = settings.REDIS_URL
        planned.append(("redis", lambda: check_redis(url)))
    problems: list[Check] = []
    if "clusters" not in skip:
        try:
            planned += [(f"cluster:{n}", _cluster_check(n)) for n in clusters_to_check()]
        except Exception as error:  # a bad CLUSTERS value is a failed check, never a 500 page
            problems.append(Check("clusters", False, f"error: {_first_line(error)}"))
        planned.append(("live", check_freshness))
    planned = [(name, fn) for name, fn in planned if name not in skip]
    # Not a ``with`` block: leaving it waits for every thread, and a check that hangs must not hold the
    # answer (its thread ends by its own timeout, after the probe has been answered).
    pool = ThreadPoolExecutor(max_workers=min(8, len(planned)) or 1, thread_name_prefix="readyz")
    futures: list[tuple[str, Future[Check | list[Check]]]] = [(name, pool.submit(fn)) for name, fn in planned]
    pool.shutdown(wait=False)
    wait_all([future for _, future in futures], timeout=deadline)
    results = list(problems)
    for name, future in futures:
        if not future.done():
            results.append(Check(name, False, f"error: no answer within {deadline:g}s"))
            continue
        try:
            answer = future.result()
        except Exception as error:
            answer = Check(name, False, f"error: {type(error).__name__}: {_first_line(error)}")
        results.extend(answer if isinstance(answer, list) else [answer])
    return results


def _cluster_check(name: str) -> Callable[[], Check]:
    return lambda: check_cluster(name)


def _first_line(error: BaseException) -> str:
    from dashboard.observability.logs import redact

    text = str(error).strip().splitlines()
    return redact(text[0][:200]) if text else ""
