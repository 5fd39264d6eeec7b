"""The store's write semantics, selectors, history and garbage collection (no HTTP)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubesim.store import BadRequest, Conflict, Gone, Invalid, NotFound, Store

ROLLOUTS = "argoproj.io/rollouts"


def rollout(name: str = "web", ns: str = "shop", **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": ns, "labels": labels or {"app": name}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": name}}},
    }


@pytest.fixture
def store() -> Store:
    return Store(seed=7, now=lambda: datetime(2026, 11, 29, 10, 0, 0, tzinfo=UTC))


def test_every_write_gets_a_higher_resource_version(store: Store) -> None:
    created = store.create(ROLLOUTS, rollout())
    patched = store.patch(ROLLOUTS, "shop", "web", {"metadata": {"labels": {"tier": "front"}}})
    assert int(patched["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    assert store.resource_version == int(patched["metadata"]["resourceVersion"])


def test_it_stamps_uid_timestamps_generation_and_type(store: Store) -> None:
    created = store.create(ROLLOUTS, rollout())
    assert created["apiVersion"] == "argoproj.io/v1alpha1" and created["kind"] == "Rollout"
    assert created["metadata"]["creationTimestamp"] == "2026-11-29T10:00:00Z"
    assert created["metadata"]["generation"] == 1
    assert len(created["metadata"]["uid"]) == 36


def test_uids_are_deterministic_for_a_seed() -> None:
    uids = [Store(seed=3).create(ROLLOUTS, rollout())["metadata"]["uid"] for _ in range(2)]
    assert uids[0] == uids[1]
    assert Store(seed=4).create(ROLLOUTS, rollout())["metadata"]["uid"] != uids[0]


def test_generation_bumps_only_on_spec_changes(store: Store) -> None:
    store.create(ROLLOUTS, rollout())
    labelled = store.patch(ROLLOUTS, "shop", "web", {"metadata": {"labels": {"tier": "front"}}})
    assert labelled["metadata"]["generation"] == 1
    scaled = store.patch(ROLLOUTS, "shop", "web", {"spec": {"replicas": 5}})
    assert scaled["metadata"]["generation"] == 2
    status = store.patch(ROLLOUTS, "shop", "web", {"status": {"phase": "Healthy"}}, subresource="status")
    assert status["metadata"]["generation"] == 2


def test_main_resource_writes_keep_the_rollout_status(store: Store) -> None:
    store.create(ROLLOUTS, rollout())
    store.patch(ROLLOUTS, "shop", "web", {"status": {"phase": "Healthy"}}, subresource="status")
    patched = store.patch(ROLLOUTS, "shop", "web", {"status": {"abort": True}, "spec": {"replicas": 4}})
    assert patched["status"] == {"phase": "Healthy"}
    assert patched["spec"]["replicas"] == 4


def test_status_writes_ignore_everything_but_status(store: Store) -> None:
    store.create(ROLLOUTS, rollout())
    patched = store.patch(
        ROLLOUTS,
        "shop",
        "web",
        {"status": {"abort": True}, "spec": {"replicas": 9}, "metadata": {"labels": {"x": "y"}}},
        subresource="status",
    )
    assert patched["status"] == {"abort": True}
    assert patched["spec"]["replicas"] == 3
    assert "x" not in patched["metadata"]["labels"]


def test_analysis_runs_have_no_status_subresource(store: Store) -> None:
    store.create("argoproj.io/analysisruns", {"metadata": {"name": "run", "namespace": "shop"}, "spec": {}})
    patched = store.patch("argoproj.io/analysisruns", "shop", "run", {"status": {"phase": "Running"}})
    assert patched["status"] == {"phase": "Running"}
    with pytest.raises(NotFound):
        store.patch("argoproj.io/analysisruns", "shop", "run", {"status": {}}, subresource="status")


def test_a_write_that_changes_nothing_is_a_no_op(store: Store) -> None:
    store.create(ROLLOUTS, rollout())
    events: list[str] = []
    store.subscribe(lambda kind, resource, obj: events.append(kind))
    before = store.resource_version
    again = store.patch(ROLLOUTS, "shop", "web", {"spec": {"replicas": 3}})
    assert store.resource_version == before and events == []
    assert again["metadata"]["resourceVersion"] == str(before)


def test_replace_with_a_stale_resource_version_conflicts(store: Store) -> None:
    stale = store.create(ROLLOUTS, rollout())
    store.patch(ROLLOUTS, "shop", "web", {"spec": {"replicas": 4}})
    stale["spec"]["replicas"] = 1
    with pytest.raises(Conflict) as error:
        store.replace(ROLLOUTS, stale)
    assert error.value.code == 409
    assert "the object has been modified" in error.value.message


def test_replace_with_the_current_version_succeeds(store: Store) -> None:
    current = store.create(ROLLOUTS, rollout())
    current["spec"]["replicas"] = 1
    replaced = store.replace(ROLLOUTS, current)
    assert replaced["spec"]["replicas"] == 1 and replaced["metadata"]["generation"] == 2


def test_creating_twice_is_already_exists(store: Store) -> None:
    store.create(ROLLOUTS, rollout())
    with pytest.raises(Exception) as error:
        store.create(ROLLOUTS, rollout())
    assert getattr(error.value, "reason", None) == "AlreadyExists"


def test_an_invalid_name_is_rejected(store: Store) -> None:
    with pytest.raises(Invalid):
        store.create(ROLLOUTS, rollout(name="Bad_Name"))


def test_generate_name_makes_a_unique_name(store: Store) -> None:
    created = store.create("pods", {"metadata": {"generateName": "web-", "namespace": "shop"}, "spec": {}})
    assert created["metadata"]["name"].startswith("web-") and len(created["metadata"]["name"]) == 9


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", ["web"]),
        ("app==web", ["web"]),
        ("app!=web", ["api", "db"]),
        ("app in (web,api)", ["api", "web"]),
        ("app notin (web,api)", ["db"]),
        ("tier", ["api", "web"]),
        ("!tier", ["db"]),
        ("tier=front,app in (web, api)", ["web"]),
    ],
)
def test_label_selectors(store: Store, selector: str, expected: list[str]) -> None:
    store.create(ROLLOUTS, rollout("web", app="web", tier="front"))
    store.create(ROLLOUTS, rollout("api", app="api", tier="back"))
    store.create(ROLLOUTS, rollout("db", app="db"))
    items, _ = store.list(ROLLOUTS, "shop", label_selector=selector)
    assert sorted(i["metadata"]["name"] for i in items) == expected


def test_a_malformed_label_selector_is_a_bad_request(store: Store) -> None:
    with pytest.raises(BadRequest):
        store.list(ROLLOUTS, label_selector="app=web,,")


def test_field_selectors_on_name_and_namespace(store: Store) -> None:
    store.create(ROLLOUTS, rollout("web"))
    store.create(ROLLOUTS, rollout("web", ns="other"))
    store.create(ROLLOUTS, rollout("api"))
    by_name, _ = store.list(ROLLOUTS, field_selector="metadata.name=web")
    assert len(by_name) == 2
    both, _ = store.list(ROLLOUTS, field_selector="metadata.name=web,metadata.namespace!=other")
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in both] == [("shop", "web")]
    with pytest.raises(BadRequest, match=r"field label not supported: spec\.replicas"):
        store.list(ROLLOUTS, field_selector="spec.replicas=3")


def test_list_returns_copies(store: Store) -> None:
    store.create(ROLLOUTS, rollout())
    items, _ = store.list(ROLLOUTS)
    items[0]["spec"]["replicas"] = 100
    assert store.get(ROLLOUTS, "shop", "web")["spec"]["replicas"] == 3


def test_events_since_returns_later_events_of_one_kind(store: Store) -> None:
    store.create(ROLLOUTS, rollout())
    since = store.resource_version
    store.create("pods", {"metadata": {"name": "p", "namespace": "shop"}, "spec": {}})
    store.patch(ROLLOUTS, "shop", "web", {"spec": {"replicas": 4}})
    store.delete(ROLLOUTS, "shop", "web")
    assert [t for t, _ in store.events_since(ROLLOUTS, since)] == ["MODIFIED", "DELETED"]


def test_events_since_a_compacted_version_is_gone(store: Store) -> None:
    store.create(ROLLOUTS, rollout())
    old = store.resource_version
    store.compact()
    assert store.events_since(ROLLOUTS, store.resource_version) == []
    with pytest.raises(Gone) as error:
        store.events_since(ROLLOUTS, old - 1)
    assert error.value.code == 410 and error.value.reason == "Expired"


def test_history_is_bounded() -> None:
    store = Store(history_limit=10)
    for i in range(30):
        store.create(ROLLOUTS, rollout(f"r{i}"))
    with pytest.raises(Gone):
        store.events_since(ROLLOUTS, 5)
    assert len(store.events_since(ROLLOUTS, store.resource_version - 5)) == 5


def test_deleting_an_owner_collects_its_dependents(store: Store) -> None:
    owner = store.create(ROLLOUTS, rollout())
    rs = store.create(
        "apps/replicasets",
        {
            "metadata": {
                "name": "web-1",
                "namespace": "shop",
                "ownerReferences": [
                    {
                        "apiVersion": "argoproj.io/v1alpha1",
                        "kind": "Rollout",
                        "name": "web",
                        "uid": owner["metadata"]["uid"],
                    }
                ],
            },
            "spec": {"replicas": 1},
        },
    )
    store.create(
        "pods",
        {
            "metadata": {
                "name": "web-1-a",
                "namespace": "shop",
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ReplicaSet",
                        "name": "web-1",
                        "uid": rs["metadata"]["uid"],
                    }
                ],
            },
            "spec": {},
        },
    )
    deleted: list[tuple[str, str]] = []
    store.subscribe(lambda kind, resource, obj: deleted.append((resource, obj["metadata"]["name"])))
    store.delete(ROLLOUTS, "shop", "web")
    assert deleted == [(ROLLOUTS, "web"), ("apps/replicasets", "web-1"), ("pods", "web-1-a")]


def test_orphan_propagation_keeps_dependents(store: Store) -> None:
    owner = store.create(ROLLOUTS, rollout())
    store.create(
        "apps/replicasets",
        {
            "metadata": {
                "name": "web-1",
                "namespace": "shop",
                "ownerReferences": [{"kind": "Rollout", "name": "web", "uid": owner["metadata"]["uid"]}],
            },
            "spec": {},
        },
    )
    store.delete(ROLLOUTS, "shop", "web", propagation="Orphan")
    assert store.try_get("apps/replicasets", "shop", "web-1") is not None


def test_deleted_events_carry_a_new_resource_version(store: Store) -> None:
    store.create(ROLLOUTS, rollout())
    last = store.delete(ROLLOUTS, "shop", "web")
    assert last["metadata"]["resourceVersion"] == str(store.resource_version)
    with pytest.raises(NotFound, match=r'rollouts\.argoproj\.io "web" not found'):
        store.get(ROLLOUTS, "shop", "web")


def test_json_patch_and_strategic_merge_patch(store: Store) -> None:
    store.create(
        "apps/deployments",
        {
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {
                "replicas": 1,
                "template": {
                    "spec": {
                        "containers": [{"name": "app", "image": "a:1"}, {"name": "side", "image": "s:1"}]
                    }
                },
            },
        },
    )
    store.patch(
        "apps/deployments",
        "shop",
        "web",
        [{"op": "replace", "path": "/spec/replicas", "value": 2}],
        patch_type="json",
    )
    patched = store.patch(
        "apps/deployments",
        "shop",
        "web",
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "a:2"}]}}}},
        patch_type="strategic",
    )
    containers = patched["spec"]["template"]["spec"]["containers"]
    assert patched["spec"]["replicas"] == 2
    assert containers == [{"name": "app", "image": "a:2"}, {"name": "side", "image": "s:1"}]
    with pytest.raises(Invalid, match="testing value"):
        store.patch(
            "apps/deployments",
            "shop",
            "web",
            [{"op": "test", "path": "/spec/replicas", "value": 7}],
            patch_type="json",
        )


def test_scale_subresource_reads_and_writes_replicas(store: Store) -> None:
    store.create(ROLLOUTS, rollout())
    store.patch(
        ROLLOUTS, "shop", "web", {"status": {"HPAReplicas": 3, "selector": "app=web"}}, subresource="status"
    )
    scale = store.patch(ROLLOUTS, "shop", "web", {"spec": {"replicas": 6}}, subresource="scale")
    assert scale["kind"] == "Scale" and scale["spec"] == {"replicas": 6}
    assert scale["status"] == {"replicas": 3, "selector": "app=web"}
    assert store.get(ROLLOUTS, "shop", "web")["spec"]["replicas"] == 6
    with pytest.raises(Invalid):
        store.patch(ROLLOUTS, "shop", "web", {"spec": {"replicas": -1}}, subresource="scale")


def test_managed_fields_record_who_wrote_what(store: Store) -> None:
    store.create(ROLLOUTS, rollout(), manager="argocd-controller")
    store.patch(ROLLOUTS, "shop", "web", {"spec": {"replicas": 5}}, manager="kubectl-scale")
    store.patch(
        ROLLOUTS,
        "shop",
        "web",
        {"status": {"phase": "Healthy"}},
        subresource="status",
        manager="rollouts-controller",
    )
    entries = {e["manager"]: e for e in store.get(ROLLOUTS, "shop", "web")["metadata"]["managedFields"]}
    assert entries["kubectl-scale"]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in entries["argocd-controller"]["fieldsV1"]["f:spec"]
    assert entries["rollouts-controller"]["subresource"] == "status"
    assert entries["rollouts-controller"]["fieldsV1"] == {"f:status": {"f:phase": {}}}
    assert all(e["operation"] == "Update" and e["fieldsType"] == "FieldsV1" for e in entries.values())


def test_writes_for_a_user_are_audited(store: Store) -> None:
    store.create(ROLLOUTS, rollout())
    store.patch(
        ROLLOUTS,
        "shop",
        "web",
        {"status": {"abort": True}},
        subresource="status",
        user="alice",
        groups=["release-managers"],
        manager="rollouts-ui",
    )
    assert [(e["user"], e["groups"], e["verb"], e["subresource"]) for e in store.audit] == [
        ("alice", ["release-managers"], "patch", "status")
    ]


def test_subscribers_see_events_in_order_even_when_they_write(store: Store) -> None:
    seen: list[tuple[str, str]] = []

    def react(kind: str, resource: str, obj: dict[str, Any]) -> None:
        if resource == ROLLOUTS and kind == "ADDED":
            store.create(
                "apps/replicasets",
                {"metadata": {"name": obj["metadata"]["name"] + "-1", "namespace": "shop"}, "spec": {}},
            )

    store.subscribe(react)
    store.add_listener(
        lambda kind, resource, obj, old: seen.append((resource, obj["metadata"]["resourceVersion"]))
    )
    store.create(ROLLOUTS, rollout())  # also creates the namespace, before the rollout
    assert [resource for resource, _ in seen] == ["namespaces", ROLLOUTS, "apps/replicasets"]
    assert [int(rv) for _, rv in seen] == sorted(int(rv) for _, rv in seen)


def test_deleting_a_crd_stops_serving_its_kind() -> None:
    store = Store()
    store.create(
        "argoproj.io/applications", {"metadata": {"name": "shop", "namespace": "argocd"}, "spec": {}}
    )
    store.delete("apiextensions.k8s.io/customresourcedefinitions", None, "applications.argoproj.io")
    assert "argoproj.io/applications" not in [rt.key for rt in store.served()]
    with pytest.raises(NotFound):
        store.list("argoproj.io/applications")


def test_a_store_can_start_without_the_argo_cd_crd() -> None:
    store = Store(crds=["argoproj.io/rollouts"])
    assert [rt.kind for rt in store.served() if rt.custom] == ["Rollout"]
