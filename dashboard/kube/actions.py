"""The Kubernetes requests behind the actions, sent with the official (synchronous) ``kubernetes`` client.

``clusters()`` maps a cluster name to its kubeconfig and context: the ``CLUSTERS`` setting
(``name=path[#context],…``), plus clusters registered at run time (the embedded demo registers its
kubesim), plus ``default`` → the default kubeconfig (``KUBECONFIG``, ``~/.kube/config`` or in-cluster),
the same name and rules ``manage.py watch`` uses without ``--cluster``.

``ActionClient`` reads the rollout and its ReplicaSets and sends a ``plans.Request``: merge patches to
the rollout or its ``/status`` subresource (``CustomObjectsApi``), JSON patches for undo, and ReplicaSet
scale patches (``AppsV1Api``). With ``KUBE_IMPERSONATE`` on, every request carries ``Impersonate-User``
and one ``Impersonate-Group`` header per group of the dashboard user, so the cluster's own RBAC and
audit log see who acted.

Non-goals: deciding what to send (``dashboard.actions.plans``), retries (``dashboard.actions.service``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from urllib3 import HTTPHeaderDict
from urllib3.exceptions import HTTPError as Urllib3Error

from dashboard.kube.connection import ConfigError, sync_api_client

GROUP, VERSION, PLURAL = "argoproj.io", "v1alpha1", "rollouts"
REQUEST_TIMEOUT = (5.0, 20.0)  # connect, read — a hung API server must not hold the rollout's lock
TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})
DEFAULT_CLUSTER = "default"


@dataclass(frozen=True)
class ClusterConfig:
    name: str
    kubeconfig: str | None  # None: the default kubeconfig rules
    context: str | None = None


class KubeError(Exception):
    """A request failed; ``status`` is the HTTP status (0: no answer) and the message is the API's."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    @property
    def transient(self) -> bool:
        return self.status == 0 or self.status in TRANSIENT_STATUSES


class ClusterUnavailable(KubeError):
    """The cluster is not configured, or its configuration cannot be loaded (retrying will not help)."""

    @property
    def transient(self) -> bool:
        return False


def parse_clusters(value: str) -> dict[str, ClusterConfig]:
    """``"prod=/etc/kube/prod.yaml#prod-admin,staging=/etc/kube/staging.yaml"`` → configs by name."""
    found: dict[str, ClusterConfig] = {}
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        name, sep, target = item.partition("=")
        name, target = name.strip(), target.strip()
        if not sep or not name or not target:
            raise ImproperlyConfigured(f"CLUSTERS item {item!r} is not name=kubeconfig-path[#context]")
        path, _, context = target.partition("#")
        found[name] = ClusterConfig(name, path.strip(), context.strip() or None)
    return found


_registered: dict[str, ClusterConfig] = {}


def register_cluster(name: str, kubeconfig: str | None, context: str | None = None) -> None:
    """Make ``name`` reachable for actions (the embedded demo registers its simulator this way)."""
    _registered[name] = ClusterConfig(name, kubeconfig, context)


def clusters() -> dict[str, ClusterConfig]:
    configured = {DEFAULT_CLUSTER: ClusterConfig(DEFAULT_CLUSTER, None)}
    configured.update(parse_clusters(str(getattr(settings, "CLUSTERS", "") or "")))
    configured.update(_registered)
    return configured


_clients: dict[ClusterConfig, Any] = {}
_clients_lock = threading.Lock()


def _api_client(config: ClusterConfig) -> Any:
    with _clients_lock:
        client = _clients.get(config)
        if client is None:
            client = sync_api_client(config.kubeconfig, config.context)
            _clients[config] = client
        return client


def forget_clients() -> None:
    """Drop cached connections (tests start a fresh simulator per test)."""
    with _clients_lock:
        _clients.clear()


def impersonation_headers(user: str, groups: Sequence[str]) -> HTTPHeaderDict:
    """``Impersonate-User`` plus one ``Impersonate-Group`` header per group (the API wants them repeated)."""
    headers = HTTPHeaderDict({"Impersonate-User": user})
    for group in groups:
        headers.add("Impersonate-Group", group)
    return headers


class _HeaderPool:
    """Wraps urllib3's pool so per-request headers can repeat a name (the generated client flattens them)."""

    def __init__(self, pool: Any, extra: HTTPHeaderDict) -> None:
        self._pool = pool
        self._extra = extra

    def request(self, method: str, url: str, *args: Any, headers: Any = None, **kwargs: Any) -> Any:
        merged = HTTPHeaderDict(headers or {})
        for name, value in self._extra.items():
            merged.add(name, value)
        return self._pool.request(method, url, *args, headers=merged, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)


class ActionClient:
    """Reads and writes for one cluster, optionally as an impersonated user."""

    def __init__(self, cluster: str, *, impersonate: tuple[str, Sequence[str]] | None = None) -> None:
        config = clusters().get(cluster)
        if config is None:
            known = ", ".join(sorted(clusters()))
            raise ClusterUnavailable(0, f"cluster {cluster!r} is not configured for actions (known: {known})")
        try:
            base = _api_client(config)
        except ConfigError as error:
            raise ClusterUnavailable(0, f"cluster {cluster!r}: {error}") from None
        self.api_client = base if impersonate is None else _impersonating(base, *impersonate)

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from kubernetes.client.exceptions import ApiException

        try:
            return fn(*args, _request_timeout=REQUEST_TIMEOUT, **kwargs)
        except ApiException as error:
            raise KubeError(int(error.status or 0), _api_message(error)) from None
        except (Urllib3Error, OSError) as error:
            raise KubeError(0, f"the API server did not answer: {error}") from None

    def get_rollout(self, namespace: str, name: str) -> dict[str, Any]:
        from kubernetes import client

        api = client.CustomObjectsApi(self.api_client)
        return dict(self._call(api.get_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL, name))

    def list_replica_sets(self, namespace: str, rollout: Mapping[str, Any]) -> list[dict[str, Any]]:
        """ReplicaSets matching the rollout's selector (as ``undo`` lists them), as plain dicts."""
        from kubernetes import client

        api = client.AppsV1Api(self.api_client)
        selector = _label_selector(rollout)
        response = self._call(
            api.list_namespaced_replica_set, namespace, label_selector=selector, _preload_content=False
        )
        import json

        return [dict(item) for item in json.loads(response.data).get("items") or []]

    def send(self, namespace: str, request: Any) -> dict[str, Any]:
        """Send one ``plans.Request``; returns the object the API answered with."""
        from kubernetes import client

        if request.target == "scale":
            apps = client.AppsV1Api(self.api_client)
            result = self._call(
                apps.patch_namespaced_replica_set_scale,
                request.name,
                namespace,
                request.body,
                _content_type="application/merge-patch+json",
            )
            return dict(self.api_client.sanitize_for_serialization(result))
        api = client.CustomObjectsApi(self.api_client)
        content_type = f"application/{request.patch_type}-patch+json"
        if request.target == "status":
            fn = api.patch_namespaced_custom_object_status
        else:
            fn = api.patch_namespaced_custom_object
        return dict(
            self._call(
                fn, GROUP, VERSION, namespace, PLURAL, request.name, request.body, _content_type=content_type
            )
        )


def _impersonating(base: Any, user: str, groups: Sequence[str]) -> Any:
    from kubernetes import client

    api_client = client.ApiClient(base.configuration)
    api_client.rest_client.pool_manager = _HeaderPool(  # type: ignore[assignment]
        api_client.rest_client.pool_manager, impersonation_headers(user, groups)
    )
    return api_client


def _label_selector(rollout: Mapping[str, Any]) -> str:
    selector = (rollout.get("spec") or {}).get("selector") or {}
    parts = [f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items()]
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression.get("key"), expression.get("operator")
        values = ",".join(expression.get("values") or [])
        if operator == "In":
            parts.append(f"{key} in ({values})")
        elif operator == "NotIn":
            parts.append(f"{key} notin ({values})")
        elif operator == "Exists":
            parts.append(str(key))
        elif operator == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def _api_message(error: Any) -> str:
    import json

    try:
        body = json.loads(error.body or "{}")
        if isinstance(body, dict) and body.get("message"):
            return str(body["message"])
    except (TypeError, ValueError):
        pass
    return f"{error.status} {error.reason}".strip()


RESERVED_PREFIX = "system:"  # Kubernetes' own users and groups: system:masters, system:serviceaccount:…


def impersonation_for(username: str, groups: Sequence[str]) -> tuple[str, Sequence[str]] | None:
    """The (user, groups) to impersonate, or None when ``KUBE_IMPERSONATE`` is off.

    Names come from the identity provider, which may send anything: a group ``system:masters`` would
    act as cluster-admin and a user ``system:serviceaccount:…`` as that service account. Such groups are
    left out and such a user is refused (``KubeError``), as the API server's OIDC prefixes would do."""
    if not settings.KUBE_IMPERSONATE:
        return None
    if not username or username.startswith(RESERVED_PREFIX):
        raise KubeError(
            403,
            f"refusing to act as {username!r}: names starting with {RESERVED_PREFIX!r} are Kubernetes' own",
        )
    return username, [group for group in groups if not group.startswith(RESERVED_PREFIX)]
