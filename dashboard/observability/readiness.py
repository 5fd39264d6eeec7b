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

Non-goals: no caching (probes are seconds apart and each check is one round trip), no repair.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

TIMEOUT = (2.0, 3.0)  # connect, read: a probe must answer well inside Kubernetes' default 1 s… 10 s window


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

    try:
        redis.Redis.from_url(url, socket_timeout=TIMEOUT[1], socket_connect_timeout=TIMEOUT[0]).ping()
    except Exception as error:
        return Check("redis", False, f"error: {type(error).__name__}: {_first_line(error)}")
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


def run_checks(skip: Collection[str] = ()) -> list[Check]:
    planned: list[tuple[str, Callable[[], Check]]] = [("database", check_database)]
    if settings.REDIS_URL:
        url = settings.REDIS_URL
        planned.append(("redis", lambda: check_redis(url)))
    if "clusters" not in skip:
        planned += [(f"cluster:{n}", _cluster_check(n)) for n in clusters_to_check()]
    planned = [(name, fn) for name, fn in planned if name not in skip]
    with ThreadPoolExecutor(max_workers=min(8, len(planned)) or 1) as pool:
        return list(pool.map(lambda item: item[1](), planned))


def _cluster_check(name: str) -> Callable[[], Check]:
    return lambda: check_cluster(name)


def _first_line(error: BaseException) -> str:
    from dashboard.observability.logs import redact

    text = str(error).strip().splitlines()
    return redact(text[0][:200]) if text else ""
