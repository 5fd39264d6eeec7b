"""The rendered ClusterRoles grant exactly what the code asks of Kubernetes: none missing, none extra.

The code's requests are not copied here: they are captured by running the code.

- Watcher: every kind ``Watcher`` watches by default goes through ``watch_kind`` against a recording API;
  its list and watch requests become rules (a watched kind is granted the read triple get/list/watch).
- Actions: ``ActionClient`` reads a rollout, lists its ReplicaSets and sends one request of every target
  ``plans.Target`` names; Flagger's ``patch_suspend`` sends its patch. urllib3 is intercepted, so each HTTP
  request (method, path, impersonation headers) is recorded without a server. With ``KUBE_IMPERSONATE``
  on, a request carrying ``Impersonate-User`` is authorized as the user: the service account needs only
  ``impersonate`` for it.
- A guard fails when a new module starts calling the Kubernetes client, so it gets added here.
"""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import typing
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml

from tests.kube.watch_helpers import PagesByGet

ROOT = Path(__file__).resolve().parents[2]
Rule = tuple[str, str, str]  # (verb, apiGroup, resource[/subresource])
READ = ("get", "list", "watch")


def render(overlay: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        ["kubectl", "kustomize", str(ROOT / "deploy" / overlay)], capture_output=True, text=True, check=True
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def role_rules(docs: list[dict[str, Any]], name: str) -> set[Rule]:
    (role,) = [d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == name]
    found: set[Rule] = set()
    for rule in role.get("rules") or []:
        assert not rule.get("resourceNames"), "rules are per kind"
        assert "*" not in rule.get("verbs", []) and "*" not in rule.get("resources", []), "no wildcards"
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    found.add((verb, group, resource))
    return found


def parse_path(path: str) -> tuple[str, str, bool]:
    """``/apis/g/v/namespaces/ns/res/name/sub`` → (group, "res[/sub]", named)."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if parts[0] == "api":
        group, rest = "", parts[2:]
    else:
        group, rest = parts[1], parts[3:]
    if rest[:1] == ["namespaces"] and len(rest) > 2:
        rest = rest[2:]
    resource = rest[0] + (f"/{rest[2]}" if len(rest) > 2 else "")
    return group, resource, len(rest) > 1


# --- the watcher ---------------------------------------------------------------------------------------


class RecordingApi(PagesByGet):
    """Answers one empty list, then ends the watch loop at its first watch request."""

    host = "https://fake.invalid"  # the server a handoff is kept for

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, str]]] = []

    async def get(self, path: str, params: Mapping[str, str], timeouts: Any) -> dict[str, Any]:
        self.calls.append(("GET", path, dict(params)))
        return {"items": [], "metadata": {"resourceVersion": "1"}}

    async def stream(self, path: str, params: Mapping[str, str], timeouts: Any, on_event: Any) -> None:
        self.calls.append(("GET", path, {**params, "watch": "true"}))
        raise asyncio.CancelledError


class NullSink:
    def listed(self, *args: Any) -> None: ...

    def changed(self, *args: Any) -> None: ...

    def unavailable(self, *args: Any) -> None: ...


def watcher_rules() -> set[Rule]:
    from dashboard.kube.watch import watch_kind
    from dashboard.kube.watcher import Watcher

    kinds = inspect.signature(Watcher).parameters["kinds"].default
    api = RecordingApi()

    async def run_all() -> None:
        for kind in kinds:
            with pytest.raises(asyncio.CancelledError):
                await watch_kind(api, kind, None, NullSink())  # type: ignore[arg-type]

    asyncio.run(run_all())
    rules: set[Rule] = set()
    for method, path, params in api.calls:
        assert method == "GET"
        group, resource, named = parse_path(path)
        verb = "watch" if params.get("watch") == "true" else ("get" if named else "list")
        rules.add((verb, group, resource))
    # A watched kind gets the read triple (the get/list/watch); nothing else is widened.
    return {(verb, group, resource) for _, group, resource in rules for verb in READ}


# --- the actions ---------------------------------------------------------------------------------------


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[tuple[str, str, Any]]]:
    from dashboard.kube.actions import _registered, forget_clients, register_cluster

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "not-a-real-token"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    calls: list[tuple[str, str, Any]] = []

    def request(self: Any, method: str, url: str, *args: Any, headers: Any = None, **kwargs: Any) -> Any:
        calls.append((method, url, urllib3.HTTPHeaderDict(headers or {})))
        return urllib3.HTTPResponse(
            body=b'{"items": [], "metadata": {}}',
            status=200,
            headers={"Content-Type": "application/json"},
            preload_content=True,
        )

    monkeypatch.setattr(urllib3.PoolManager, "request", request)

    class Drained:  # an aiohttp response whose log has ended at once
        status = 200

        class content:
            @staticmethod
            async def readline() -> bytes:
                return b""

        def close(self) -> None: ...

        @property
        def response(self) -> Any:  # the RESTResponse's aiohttp response
            return self

    async def aio_request(self: Any, method: str, url: str, headers: Any = None, **kwargs: Any) -> Any:
        calls.append((method, url, urllib3.HTTPHeaderDict(list((headers or {}).items()))))
        return Drained()

    from kubernetes.aio.client import rest

    monkeypatch.setattr(rest.RESTClientObject, "request", aio_request)
    register_cluster("rbac-probe", str(kubeconfig))
    forget_clients()
    yield calls
    _registered.pop("rbac-probe", None)
    forget_clients()


def exercise_actions(impersonate: tuple[str, Sequence[str]] | None) -> None:
    from dashboard.actions import plans
    from dashboard.flagger_gates.services import patch_suspend
    from dashboard.kube.actions import ActionClient
    from dashboard.kube.podlogs import pod_log_lines

    client = ActionClient("rbac-probe", impersonate=impersonate)
    client.get_rollout("ns", "app")
    client.list_replica_sets("ns", {"spec": {"selector": {"matchLabels": {"app": "app"}}}})
    for target in typing.get_args(plans.Target):
        for patch_type in ("merge", "json"):
            body: Any = {} if patch_type == "merge" else []
            client.send("ns", plans.Request(target, "app-123", body, patch_type))
    patch_suspend("rbac-probe", "ns", "canary", True)

    async def read_logs() -> None:
        lines = pod_log_lines(
            "rbac-probe",
            "ns",
            "app-123-x",
            container="app",
            since_seconds=60,
            tail_lines=10,
            impersonate=impersonate,
        )
        async for _ in lines:
            pass

    asyncio.run(read_logs())


def action_rules(calls: list[tuple[str, str, Any]]) -> set[Rule]:
    verbs = {"GET": "get", "PATCH": "patch", "POST": "create", "PUT": "update", "DELETE": "delete"}
    rules: set[Rule] = set()
    for method, url, headers in calls:
        path = "/" + url.split("://", 1)[1].split("/", 1)[1]
        if headers.get("Impersonate-User"):
            rules.add(("impersonate", "", "users"))
            if headers.getlist("Impersonate-Group"):
                rules.add(("impersonate", "", "groups"))
            continue  # authorized as the impersonated user, not as the service account
        group, resource, named = parse_path(path)
        verb = verbs[method] if named or method != "GET" else "list"
        rules.add((verb, group, resource))
    return rules


KUBE_CLIENT_MARKERS = (
    "CustomObjectsApi(",
    "AppsV1Api(",
    "CoreV1Api(",
    "BatchV1Api(",
    "api.list_connection(",
    "api.stream(",
)
KNOWN_CALL_SITES = {
    "dashboard/kube/actions.py",  # exercised by exercise_actions
    "dashboard/flagger_gates/services.py",  # patch_suspend, exercised by exercise_actions
    "dashboard/kube/watch.py",  # watch_kind, exercised by watcher_rules
    "dashboard/kube/podlogs.py",  # pod_log_lines, exercised by exercise_actions
}
# Call sites that never talk to a cluster, so need no role.
NOT_A_CLUSTER = {
    "dashboard/bench/floor.py",  # receive_floor: the watcher's reader against the benchmark's own server
}


def test_no_module_calls_kubernetes_unseen_by_this_test() -> None:
    found = set()
    for path in (ROOT / "dashboard").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if any(marker in text for marker in KUBE_CLIENT_MARKERS):
            found.add(str(path.relative_to(ROOT)))
    assert found <= KNOWN_CALL_SITES | NOT_A_CLUSTER, (
        f"new Kubernetes call sites: {found - KNOWN_CALL_SITES - NOT_A_CLUSTER}; exercise them here"
    )


def test_watch_role_is_exactly_what_the_watcher_reads() -> None:
    rendered = role_rules(render("overlays/single-cluster"), "rollouts-ui-watch")
    needed = watcher_rules()
    assert needed - rendered == set(), "missing"
    assert rendered - needed == set(), "extra"


@pytest.mark.django_db
def test_act_role_is_exactly_what_the_actions_send(
    captured: list[tuple[str, str, Any]], settings: Any
) -> None:
    settings.KUBE_IMPERSONATE = False
    from dashboard.kube.actions import impersonation_for

    exercise_actions(impersonation_for("alice", ["team"]))
    needed = action_rules(captured)
    rendered = role_rules(render("overlays/single-cluster"), "rollouts-ui-act")
    assert ("patch", "argoproj.io", "rollouts/status") in needed  # the capture works
    assert needed - rendered == set(), "missing"
    assert rendered - needed == set(), "extra"
    assert not any(verb == "impersonate" for verb, _, _ in rendered)


@pytest.mark.django_db
def test_with_impersonation_on_the_act_role_is_impersonate_plus_what_is_sent_as_itself(
    captured: list[tuple[str, str, Any]], settings: Any
) -> None:
    settings.KUBE_IMPERSONATE = True
    from dashboard.kube.actions import impersonation_for

    exercise_actions(impersonation_for("alice", ["team"]))
    needed = action_rules(captured)
    docs = render("overlays/multi-cluster")
    (config,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "rollouts-ui"]
    assert config["data"]["KUBE_IMPERSONATE"] == "true"
    rendered = role_rules(docs, "rollouts-ui-act")
    assert ("impersonate", "", "users") in needed
    assert needed - rendered == set(), "missing"
    assert rendered - needed == set(), "extra"


def test_impersonation_is_granted_only_where_the_mode_is_on() -> None:
    for overlay in ("base", "overlays/single-cluster", "remote-cluster"):
        docs = render(overlay)
        for doc in docs:
            if doc["kind"] == "ClusterRole":
                assert all("impersonate" not in r["verbs"] for r in doc["rules"]), (overlay, doc["metadata"])
            if doc["kind"] == "ConfigMap" and "KUBE_IMPERSONATE" in doc.get("data", {}):
                assert doc["data"]["KUBE_IMPERSONATE"] == "false"


def test_remote_clusters_get_the_same_roles_as_the_home_cluster() -> None:
    home, remote = render("overlays/single-cluster"), render("remote-cluster")
    for name in ("rollouts-ui-watch", "rollouts-ui-act"):
        assert role_rules(home, name) == role_rules(remote, name)
    tokens = [d for d in remote if d["kind"] == "Secret"]
    assert {t["metadata"]["annotations"]["kubernetes.io/service-account.name"] for t in tokens} == {
        "rollouts-ui-watcher",
        "rollouts-ui-actions",
    }


def test_each_process_runs_with_only_its_identity() -> None:
    docs = render("overlays/multi-cluster")
    accounts = {
        d["metadata"]["name"]: d["spec"]["template"]["spec"]["serviceAccountName"]
        for d in docs
        if d["kind"] in ("Deployment", "Job")
    }
    assert accounts["rollouts-ui-watcher-default"] == "rollouts-ui-watcher"
    assert accounts["rollouts-ui-web"] == accounts["rollouts-ui-worker"] == "rollouts-ui-actions"
    # a remote cluster's watcher and the processes that need no API get no token at all
    for name in ("rollouts-ui-watcher-prod-eu", "rollouts-ui-scheduler", "rollouts-ui-migrate"):
        assert accounts[name] == "rollouts-ui-nokube"
    (nokube,) = [
        d for d in docs if d["kind"] == "ServiceAccount" and d["metadata"]["name"] == "rollouts-ui-nokube"
    ]
    assert nokube["automountServiceAccountToken"] is False
    bindings = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ClusterRoleBinding"}
    assert all(s["namespace"] == "rollouts-ui" for b in bindings.values() for s in b["subjects"])
