"""kubesim driven by the official `kubernetes` client, sync and `kubernetes.aio`, over HTTPS with a token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

from kubesim.kubeconfig import write_kubeconfig
from kubesim.testing import KubesimHandle, running_kubesim

GROUP, VERSION = "argoproj.io", "v1alpha1"


@pytest.fixture(scope="module")
def sim() -> Iterator[KubesimHandle]:
    with running_kubesim(bookmark_interval=0.5) as handle:
        yield handle


@pytest.fixture
def api(sim: KubesimHandle) -> Iterator[client.ApiClient]:
    api_client = config.new_client_from_config(config_file=str(sim.kubeconfig))
    yield api_client
    api_client.close()


def custom_api(api: Any, module: Any = client) -> Any:
    """CustomObjectsApi, typed loosely: its methods return plain dicts for custom resources."""
    return module.CustomObjectsApi(api)


def make_rollout(sim: KubesimHandle, ns: str, name: str, replicas: int = 3) -> dict[str, Any]:
    body = {
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}},
    }
    return sim.call(sim.store.create, "argoproj.io/rollouts", body)


def test_it_lists_rollouts(sim: KubesimHandle, api: client.ApiClient) -> None:
    make_rollout(sim, "list", "web")
    result = custom_api(api).list_namespaced_custom_object(GROUP, VERSION, "list", "rollouts")
    assert [i["metadata"]["name"] for i in result["items"]] == ["web"]
    assert int(result["metadata"]["resourceVersion"]) >= 1


def test_it_lists_typed_core_and_apps_objects(sim: KubesimHandle, api: client.ApiClient) -> None:
    sim.call(
        sim.store.create,
        "apps/replicasets",
        {
            "metadata": {
                "name": "web-1",
                "namespace": "typed",
                "labels": {"rollouts-pod-template-hash": "abc"},
            },
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "nginx"}]},
                },
            },
        },
    )
    sets = client.AppsV1Api(api).list_namespaced_replica_set(
        "typed", label_selector="rollouts-pod-template-hash"
    )
    assert [rs.to_dict()["metadata"]["name"] for rs in sets.items] == ["web-1"]
    namespaces = client.CoreV1Api(api).list_namespace()
    assert "typed" in [n.to_dict()["metadata"]["name"] for n in namespaces.items]


def test_it_watches_from_a_version(sim: KubesimHandle, api: client.ApiClient) -> None:
    make_rollout(sim, "watch", "a")
    since = sim.store.resource_version
    make_rollout(sim, "watch", "b")
    sim.call(sim.store.patch, "argoproj.io/rollouts", "watch", "a", {"spec": {"replicas": 5}})
    custom = custom_api(api)
    seen = []
    for event in watch.Watch().stream(
        custom.list_namespaced_custom_object,
        GROUP,
        VERSION,
        "watch",
        "rollouts",
        resource_version=str(since),
        timeout_seconds=2,
        _request_timeout=5,
    ):
        seen.append((event["type"], event["object"]["metadata"]["name"]))
        if len(seen) == 2:
            break
    assert seen == [("ADDED", "b"), ("MODIFIED", "a")]


def test_it_answers_410_and_the_client_relists(sim: KubesimHandle, api: client.ApiClient) -> None:
    make_rollout(sim, "gone", "web")
    old = sim.store.resource_version - 1
    sim.call(sim.store.compact)
    custom = custom_api(api)
    with pytest.raises(ApiException) as error:
        for _ in watch.Watch().stream(
            custom.list_namespaced_custom_object,
            GROUP,
            VERSION,
            "gone",
            "rollouts",
            resource_version=str(old),
            timeout_seconds=2,
            _request_timeout=5,
        ):
            pass
    assert error.value.status == 410
    relisted = custom.list_namespaced_custom_object(GROUP, VERSION, "gone", "rollouts")
    fresh = relisted["metadata"]["resourceVersion"]
    events = list(
        watch.Watch().stream(
            custom.list_namespaced_custom_object,
            GROUP,
            VERSION,
            "gone",
            "rollouts",
            resource_version=fresh,
            timeout_seconds=1,
            _request_timeout=5,
        )
    )
    assert events == []


def test_it_sends_bookmarks(sim: KubesimHandle, api: client.ApiClient) -> None:
    custom = custom_api(api)
    rv = custom.list_cluster_custom_object(GROUP, VERSION, "rollouts")["metadata"]["resourceVersion"]
    types = []
    for event in watch.Watch().stream(
        custom.list_cluster_custom_object,
        GROUP,
        VERSION,
        "rollouts",
        resource_version=rv,
        allow_watch_bookmarks=True,
        timeout_seconds=3,
        _request_timeout=5,
    ):
        types.append(event["type"])
        break
    assert types == ["BOOKMARK"]


def test_status_patch_on_the_status_subresource(sim: KubesimHandle, api: client.ApiClient) -> None:
    make_rollout(sim, "status", "web")
    custom = custom_api(api)
    patched = custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, "status", "rollouts", "web", {"status": {"abort": True}}
    )
    assert patched["status"] == {"abort": True}
    ignored = custom.patch_namespaced_custom_object(
        GROUP, VERSION, "status", "rollouts", "web", {"status": {"abort": False}, "spec": {"replicas": 2}}
    )
    assert ignored["status"] == {"abort": True} and ignored["spec"]["replicas"] == 2


def test_scale_through_the_scale_subresource(sim: KubesimHandle, api: client.ApiClient) -> None:
    make_rollout(sim, "scale", "web")
    custom = custom_api(api)
    scale = custom.patch_namespaced_custom_object_scale(
        GROUP, VERSION, "scale", "rollouts", "web", {"spec": {"replicas": 7}}
    )
    assert scale["spec"]["replicas"] == 7
    assert (
        custom.get_namespaced_custom_object(GROUP, VERSION, "scale", "rollouts", "web")["spec"]["replicas"]
        == 7
    )


def test_put_with_a_stale_resource_version_is_a_conflict(sim: KubesimHandle, api: client.ApiClient) -> None:
    stale = make_rollout(sim, "conflict", "web")
    sim.call(sim.store.patch, "argoproj.io/rollouts", "conflict", "web", {"spec": {"replicas": 4}})
    custom = custom_api(api)
    with pytest.raises(ApiException) as error:
        custom.replace_namespaced_custom_object(GROUP, VERSION, "conflict", "rollouts", "web", stale)
    assert error.value.status == 409 and "Conflict" in str(error.value.body)


def test_an_unknown_token_gets_401(sim: KubesimHandle, tmp_path: Path) -> None:
    bad_config = write_kubeconfig(tmp_path / "bad", sim.url, "not-the-token", ca_pem=sim.ca_pem)
    with (
        config.new_client_from_config(config_file=str(bad_config)) as bad,
        pytest.raises(ApiException) as error,
    ):
        custom_api(bad).list_cluster_custom_object(GROUP, VERSION, "rollouts")
    assert error.value.status == 401


def test_impersonated_writes_are_recorded(sim: KubesimHandle, api: client.ApiClient) -> None:
    make_rollout(sim, "imp", "web")
    api.set_default_header("Impersonate-User", "alice@example.com")
    custom_api(api).patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        "imp",
        "rollouts",
        "web",
        {"status": {"pauseConditions": None}},
        field_manager="rollouts-ui",
    )
    entries = [e for e in sim.store.audit if e["namespace"] == "imp"]
    assert [(e["user"], e["fieldManager"], e["subresource"]) for e in entries] == [
        ("alice@example.com", "rollouts-ui", "status")
    ]


async def test_the_aio_client_lists_and_watches(sim: KubesimHandle) -> None:
    from kubernetes.aio import client as aio_client
    from kubernetes.aio import config as aio_config
    from kubernetes.aio import watch as aio_watch

    make_rollout(sim, "aio", "a")
    configuration = aio_client.Configuration()
    await aio_config.load_kube_config(config_file=str(sim.kubeconfig), client_configuration=configuration)
    async with aio_client.ApiClient(configuration) as api:
        custom = custom_api(api, aio_client)
        listed = await custom.list_namespaced_custom_object(GROUP, VERSION, "aio", "rollouts")
        assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
        rv = listed["metadata"]["resourceVersion"]
        sim.call(sim.store.patch, "argoproj.io/rollouts", "aio", "a", {"spec": {"replicas": 1}})
        seen = []
        w = aio_watch.Watch()
        async for event in w.stream(
            custom.list_namespaced_custom_object,
            GROUP,
            VERSION,
            "aio",
            "rollouts",
            resource_version=rv,
            allow_watch_bookmarks=True,
            timeout_seconds=3,
            _request_timeout=5,
        ):
            seen.append(event["type"])
            if event["type"] == "BOOKMARK":
                w.stop()
                break
        assert seen[0] == "MODIFIED" and seen[-1] == "BOOKMARK"
        sim.call(sim.store.compact)
        with pytest.raises(aio_client.exceptions.ApiException) as error:
            async for _ in aio_watch.Watch().stream(
                custom.list_namespaced_custom_object,
                GROUP,
                VERSION,
                "aio",
                "rollouts",
                resource_version=rv,
                timeout_seconds=2,
                _request_timeout=5,
            ):
                pass
        assert error.value.status == 410


def test_namespaces_are_created_and_required(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="made-by-client")))
    assert core.read_namespace("made-by-client").status.phase == "Active"
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Rollout", "metadata": {"name": "web"}, "spec": {}}
    with pytest.raises(ApiException) as error:
        custom_api(api).create_namespaced_custom_object(GROUP, VERSION, "nowhere", "rollouts", body)
    assert error.value.status == 404 and 'namespaces \\"nowhere\\" not found' in str(error.value.body)


def test_server_side_apply_through_the_dynamic_client(api: client.ApiClient) -> None:
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.exceptions import ConflictError

    client.CoreV1Api(api).create_namespace(
        client.V1Namespace(metadata=client.V1ObjectMeta(name="ssa-client"))
    )
    rollouts = DynamicClient(api).resources.get(api_version=f"{GROUP}/{VERSION}", kind="Rollout")
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "ssa-client"},
        "spec": {"replicas": 2},
    }
    rollouts.server_side_apply(body=body, field_manager="one")
    with pytest.raises(ConflictError):
        rollouts.server_side_apply(body={**body, "spec": {"replicas": 4}}, field_manager="two")
    got = rollouts.server_side_apply(
        body={**body, "spec": {"replicas": 4}}, field_manager="two", force_conflicts=True
    )
    managers = {e["manager"]: e["operation"] for e in got.to_dict()["metadata"]["managedFields"]}
    # "one" owned nothing else, so forcing its only field away drops its entry, as on a real server.
    assert got.spec.replicas == 4 and managers == {"two": "Apply"}
