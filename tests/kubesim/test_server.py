"""kubesim's HTTP API server driven with raw HTTP (aiohttp): discovery, errors, watches, tables, admin."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest

from kubesim.faults import Faults
from kubesim.server import RunningServer, dumps, start_server
from kubesim.store import DEFAULT_WATCH_WINDOW, Store

TOKEN = "test-token"
RO = "/apis/argoproj.io/v1alpha1"


@dataclass
class Api:
    store: Store
    faults: Faults
    server: RunningServer
    http: aiohttp.ClientSession

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body)
        all_headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": content_type, **(headers or {})}
        async with self.http.request(method, self.server.url + path, data=data, headers=all_headers) as r:
            text = await r.text()
            return r.status, json.loads(text) if text.startswith(("{", "[")) else text

    async def watch(self, path: str, *, stop_after: int = 100, timeout: float = 5.0) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with self.http.get(
            self.server.url + path, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout)
        ) as r:
            assert r.status == 200
            async for line in r.content:
                if line.strip():
                    events.append(json.loads(line))
                if len(events) >= stop_after:
                    break
        return events


@pytest.fixture
async def api() -> AsyncIterator[Api]:
    store = Store(seed=1)
    for ns in ("shop", "other"):  # the namespaces these tests write into exist, as on a real cluster
        store.create("namespaces", {"metadata": {"name": ns}})
    faults = Faults(store)
    server = await start_server(store, token=TOKEN, faults=faults, bookmark_interval=0.3, tls=False)
    async with aiohttp.ClientSession() as http:
        yield Api(store, faults, server, http)
    await server.close()


async def test_the_schemas_writes_are_checked_against_are_built_before_the_first_request() -> None:
    from kubesim import openapi

    openapi.core_components.cache_clear()
    store = Store(seed=1)
    server = await start_server(store, token=TOKEN, faults=Faults(store), tls=False)
    try:  # a first write does not wait for them (0.4 s: the client's models imported)
        assert openapi.core_components.cache_info().currsize == 1
    finally:
        await server.close()


def rollout(name: str = "web", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": name, "labels": labels or {"app": name}},
        "spec": {"replicas": 3},
    }


async def test_discovery_lists_rollouts_with_their_subresources(api: Api) -> None:
    status, groups = await api.call("GET", "/apis")
    assert status == 200
    assert {g["name"] for g in groups["groups"]} >= {"apps", "argoproj.io", "apiextensions.k8s.io"}
    _, resources = await api.call("GET", RO)
    by_name = {r["name"]: r for r in resources["resources"]}
    assert by_name["rollouts"]["shortNames"] == ["ro"] and by_name["rollouts"]["kind"] == "Rollout"
    assert by_name["rollouts"]["singularName"] == "rollout" and by_name["rollouts"]["namespaced"] is True
    assert (
        by_name["rollouts/scale"]["group"] == "autoscaling" and by_name["rollouts/scale"]["kind"] == "Scale"
    )
    assert "rollouts/status" in by_name and "analysisruns/status" not in by_name
    _, core = await api.call("GET", "/api/v1")
    assert {"pods", "services", "namespaces", "events", "pods/status"} <= {
        r["name"] for r in core["resources"]
    }
    status, version = await api.call("GET", "/version", headers={"Authorization": ""})
    assert status == 200 and version["major"] == "1"


async def test_it_answers_401_for_an_unknown_token(api: Api) -> None:
    status, body = await api.call("GET", f"{RO}/rollouts", headers={"Authorization": "Bearer nope"})
    assert status == 401
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }


async def test_it_answers_403_without_credentials(api: Api) -> None:
    async with api.http.get(api.server.url + f"{RO}/rollouts") as r:
        assert r.status == 403
        assert (await r.json())["reason"] == "Forbidden"


async def test_errors_are_kubernetes_status_bodies(api: Api) -> None:
    status, body = await api.call("GET", f"{RO}/namespaces/shop/rollouts/missing")
    assert (status, body["reason"], body["message"]) == (
        404,
        "NotFound",
        'rollouts.argoproj.io "missing" not found',
    )
    assert body["details"] == {"name": "missing", "group": "argoproj.io", "kind": "rollouts"}
    status, body = await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("Bad_Name"))
    assert (status, body["reason"]) == (422, "Invalid")
    status, body = await api.call("GET", "/apis/nope.io/v1/things")
    assert status == 404
    status, body = await api.call("GET", f"{RO}/rollouts?timeoutSeconds=abc&watch=true")
    assert (status, body["reason"]) == (400, "BadRequest")


async def test_create_get_list_with_selectors(api: Api) -> None:
    status, created = await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("web", app="web"))
    assert status == 201 and created["metadata"]["namespace"] == "shop"
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("api", app="api"))
    _, listed = await api.call("GET", f"{RO}/rollouts?labelSelector=app%20in%20(web)")
    assert listed["kind"] == "RolloutList" and [i["metadata"]["name"] for i in listed["items"]] == ["web"]
    assert listed["metadata"]["resourceVersion"] == str(api.store.resource_version)
    _, by_field = await api.call("GET", f"{RO}/namespaces/shop/rollouts?fieldSelector=metadata.name%3Dapi")
    assert [i["metadata"]["name"] for i in by_field["items"]] == ["api"]


async def test_list_pages_with_limit_and_continue(api: Api) -> None:
    for i in range(5):
        await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout(f"r{i}"))
    _, first = await api.call("GET", f"{RO}/rollouts?limit=2")
    assert [i["metadata"]["name"] for i in first["items"]] == ["r0", "r1"]
    assert first["metadata"]["remainingItemCount"] == 3
    names = []
    token = first["metadata"]["continue"]
    while token:
        _, page = await api.call("GET", f"{RO}/rollouts?limit=2&continue={token}")
        names += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue")
    assert names == ["r2", "r3", "r4"]


async def test_a_list_across_namespaces_pages_in_etcd_key_order_and_loses_no_object(api: Api) -> None:
    # etcd orders keys by bytes: "team-a/…" sorts before "team/…" ("-" < "/"); a page that ended in
    # "team" used to skip every object of "team-a".
    for namespace in ("team", "team-a"):
        await api.call("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
        for name in ("x", "y"):
            status, _ = await api.call("POST", f"{RO}/namespaces/{namespace}/rollouts", rollout(name))
            assert status == 201
    _, whole = await api.call("GET", f"{RO}/rollouts")
    keys = [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in whole["items"]]
    assert keys == ["team-a/x", "team-a/y", "team/x", "team/y"]
    paged, token = [], ""
    while True:
        _, page = await api.call("GET", f"{RO}/rollouts?limit=1" + (f"&continue={token}" if token else ""))
        paged += [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in page["items"]]
        token = page["metadata"].get("continue", "")
        if not token:
            break
    assert paged == keys


async def test_status_patch_changes_only_status_and_main_patch_ignores_status(api: Api) -> None:
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout())
    merge = "application/merge-patch+json"
    _, patched = await api.call(
        "PATCH",
        f"{RO}/namespaces/shop/rollouts/web/status",
        {"status": {"abort": True}, "spec": {"replicas": 1}},
        content_type=merge,
    )
    assert patched["status"] == {"abort": True} and patched["spec"]["replicas"] == 3
    _, main = await api.call(
        "PATCH", f"{RO}/namespaces/shop/rollouts/web", {"status": {"abort": False}}, content_type=merge
    )
    assert main["status"] == {"abort": True}


async def test_every_write_says_when_the_store_made_it_and_a_read_does_not(api: Api) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/merge-patch+json"}
    url = f"{api.server.url}{RO}/namespaces/shop/rollouts/web"
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout())
    sent = time.time()
    async with api.http.patch(url, data=json.dumps({"spec": {"replicas": 2}}), headers=headers) as r:
        assert r.status == 200
        committed = float(r.headers["Kubesim-Committed-At"])
    assert sent <= committed <= time.time()
    async with api.http.get(url, headers=headers) as r:
        assert "Kubesim-Committed-At" not in r.headers
    async with api.http.delete(url, headers=headers) as r:
        assert r.status == 200 and "Kubesim-Committed-At" in r.headers


async def test_strategic_merge_patch_is_refused_for_custom_resources(api: Api) -> None:
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout())
    status, body = await api.call(
        "PATCH",
        f"{RO}/namespaces/shop/rollouts/web",
        {"spec": {"replicas": 1}},
        content_type="application/strategic-merge-patch+json",
    )
    assert status == 415 and body["reason"] == "UnsupportedMediaType"


async def test_put_with_a_stale_resource_version_conflicts(api: Api) -> None:
    _, created = await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout())
    await api.call(
        "PATCH",
        f"{RO}/namespaces/shop/rollouts/web",
        {"spec": {"replicas": 4}},
        content_type="application/merge-patch+json",
    )
    status, body = await api.call("PUT", f"{RO}/namespaces/shop/rollouts/web", created)
    assert (status, body["reason"]) == (409, "Conflict")
    del created["metadata"]["resourceVersion"]
    status, body = await api.call("PUT", f"{RO}/namespaces/shop/rollouts/web", created)
    assert (status, body["reason"]) == (422, "Invalid")


async def test_scale_subresource_over_http(api: Api) -> None:
    await api.call(
        "POST",
        "/apis/apps/v1/namespaces/shop/replicasets",
        {"metadata": {"name": "web-1"}, "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}}},
    )
    status, scale = await api.call("GET", "/apis/apps/v1/namespaces/shop/replicasets/web-1/scale")
    assert status == 200 and scale["status"]["selector"] == "a=b"
    scale["spec"]["replicas"] = 4
    status, scale = await api.call("PUT", "/apis/apps/v1/namespaces/shop/replicasets/web-1/scale", scale)
    assert status == 200 and scale["spec"]["replicas"] == 4


async def test_watch_from_a_version_streams_later_events(api: Api) -> None:
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("before"))
    since = api.store.resource_version
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("after"))
    watch = asyncio.create_task(api.watch(f"{RO}/rollouts?watch=true&resourceVersion={since}", stop_after=3))
    await asyncio.sleep(0.1)
    await api.call(
        "PATCH",
        f"{RO}/namespaces/shop/rollouts/before",
        {"spec": {"replicas": 9}},
        content_type="application/merge-patch+json",
    )
    await api.call("DELETE", f"{RO}/namespaces/shop/rollouts/after")
    events = await watch
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "after"),
        ("MODIFIED", "before"),
        ("DELETED", "after"),
    ]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and versions[0] > since


async def test_watch_without_a_version_starts_with_the_current_objects(api: Api) -> None:
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("a"))
    await api.call("POST", f"{RO}/namespaces/other/rollouts", rollout("b"))
    events = await api.watch(f"{RO}/namespaces/shop/rollouts?watch=1&timeoutSeconds=1")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "a")]


async def test_watch_from_a_compacted_version_gets_an_expired_error_event(api: Api) -> None:
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout())
    old = api.store.resource_version - 1
    api.store.compact()
    events = await api.watch(f"{RO}/rollouts?watch=true&resourceVersion={old}")
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 410 and events[0]["object"]["reason"] == "Expired"
    status, body = await api.call("GET", f"{RO}/rollouts?resourceVersion={old}&resourceVersionMatch=Exact")
    assert (status, body["code"]) == (410, 410)


async def test_watch_from_a_version_the_server_has_not_reached_is_refused_as_too_large(api: Api) -> None:
    ahead = api.store.resource_version + 1000  # another server's version, or one from before a reset
    status, body = await api.call("GET", f"{RO}/rollouts?watch=true&resourceVersion={ahead}")
    assert (status, body["code"], body["reason"]) == (504, 504, "Timeout")
    assert body["message"].startswith(f"Too large resource version: {ahead}")


async def test_watch_sends_bookmarks_when_allowed(api: Api) -> None:
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout())
    rv = api.store.resource_version
    events = await api.watch(
        f"{RO}/rollouts?watch=true&resourceVersion={rv}&allowWatchBookmarks=true", stop_after=2
    )
    assert [e["type"] for e in events] == ["BOOKMARK", "BOOKMARK"]
    assert events[0]["object"] == {
        "kind": "Rollout",
        "apiVersion": "argoproj.io/v1alpha1",
        "metadata": {"resourceVersion": str(rv)},
    }


async def test_watch_ends_after_timeout_seconds(api: Api) -> None:
    started = time.monotonic()
    events = await api.watch(f"{RO}/rollouts?watch=true&timeoutSeconds=1&resourceVersion=1")
    assert events == [] and 0.9 < time.monotonic() - started < 3


async def test_objects_leaving_a_label_selector_are_deleted_for_the_watch(api: Api) -> None:
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("web", tier="front"))
    rv = api.store.resource_version
    watch = asyncio.create_task(
        api.watch(f"{RO}/rollouts?watch=true&resourceVersion={rv}&labelSelector=tier", stop_after=2)
    )
    await asyncio.sleep(0.1)
    merge = "application/merge-patch+json"
    await api.call(
        "PATCH",
        f"{RO}/namespaces/shop/rollouts/web",
        {"metadata": {"labels": {"tier": None}}},
        content_type=merge,
    )
    await api.call(
        "PATCH",
        f"{RO}/namespaces/shop/rollouts/web",
        {"metadata": {"labels": {"tier": "x"}}},
        content_type=merge,
    )
    assert [e["type"] for e in await watch] == ["DELETED", "ADDED"]


async def test_tables_for_kubectl(api: Api) -> None:
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout())
    headers = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
    _, body = await api.call("GET", f"{RO}/namespaces/shop/rollouts", headers=headers)
    assert body["kind"] == "Table"
    assert [c["name"] for c in body["columnDefinitions"]] == [
        "Name",
        "Desired",
        "Current",
        "Up-to-date",
        "Available",
        "Age",
    ]
    assert body["rows"][0]["cells"][:2] == ["web", 3]
    assert body["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


async def test_impersonation_is_recorded_in_the_audit_log(api: Api) -> None:
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout())
    await api.call(
        "PATCH",
        f"{RO}/namespaces/shop/rollouts/web/status?fieldManager=rollouts-ui",
        {"status": {"abort": True}},
        content_type="application/merge-patch+json",
        headers={"Impersonate-User": "alice", "Impersonate-Group": "release-managers"},
    )
    _, audit = await api.call("GET", "/kubesim/audit?user=alice")
    assert [
        (e["user"], e["groups"], e["verb"], e["subresource"], e["fieldManager"]) for e in audit["items"]
    ] == [("alice", ["release-managers"], "patch", "status", "rollouts-ui")]


async def test_field_manager_defaults_to_the_user_agent_product(api: Api) -> None:
    await api.call(
        "POST", f"{RO}/namespaces/shop/rollouts", rollout(), headers={"User-Agent": "deployer/1.2 (x)"}
    )
    managers = [
        e["manager"]
        for e in api.store.get("argoproj.io/rollouts", "shop", "web")["metadata"]["managedFields"]
    ]
    assert managers == ["deployer"]


async def test_admin_faults_fail_hang_and_expire(api: Api) -> None:
    status, body = await api.call("POST", "/kubesim/faults/fail", {"count": 2})
    assert status == 200
    assert [(await api.call("GET", f"{RO}/rollouts"))[0] for _ in range(3)] == [500, 500, 200]
    await api.call("POST", "/kubesim/faults/hang", {"seconds": 0.5})
    started = time.monotonic()
    assert (await api.call("GET", f"{RO}/rollouts"))[0] == 200
    assert time.monotonic() - started >= 0.4
    await api.call("POST", "/kubesim/faults/expire-next-watch", {"mode": "status"})
    status, body = await api.call("GET", f"{RO}/rollouts?watch=true&resourceVersion=1")
    assert (status, body["code"]) == (410, 410)
    status, body = await api.call("POST", "/kubesim/faults/hang", {"seconds": -1})
    assert status == 400 and "seconds must be a positive number" in body["message"]
    status, body = await api.call("POST", "/kubesim/faults/nonsense", {})
    assert status == 404


async def test_admin_drop_watches_and_restart_close_open_watches(api: Api) -> None:
    rv = api.store.resource_version
    watch = asyncio.create_task(api.watch(f"{RO}/rollouts?watch=true&resourceVersion={rv}"))
    await asyncio.sleep(0.1)
    status, body = await api.call("POST", "/kubesim/faults/drop-watches")
    assert (status, body["result"]) == (200, 1)
    assert await watch == []
    watch = asyncio.create_task(api.watch(f"{RO}/rollouts?watch=true&resourceVersion={rv}"))
    await asyncio.sleep(0.1)
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout())
    await asyncio.sleep(0.1)
    status, body = await api.call("POST", "/kubesim/faults/restart")
    assert body["result"] == 1
    assert [e["type"] for e in await watch] == ["ADDED"]
    events = await api.watch(f"{RO}/rollouts?watch=true&resourceVersion={rv}")
    assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410


async def test_crds_are_served_read_only(api: Api) -> None:
    status, crd = await api.call(
        "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/applications.argoproj.io"
    )
    assert status == 200 and crd["spec"]["names"]["shortNames"] == ["app", "apps"]
    status, body = await api.call(
        "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/applications.argoproj.io"
    )
    assert (status, body["reason"]) == (405, "MethodNotAllowed")


async def test_core_events_can_be_created_listed_and_watched(api: Api) -> None:
    event = {
        "metadata": {"name": "web.1"},
        "involvedObject": {"kind": "Rollout", "name": "web"},
        "reason": "RolloutPaused",
        "message": "Rollout is paused",
        "type": "Normal",
    }
    status, _ = await api.call("POST", "/api/v1/namespaces/shop/events", event)
    assert status == 201
    _, listed = await api.call("GET", "/api/v1/events?fieldSelector=involvedObject.name%3Dweb")
    assert [e["reason"] for e in listed["items"]] == ["RolloutPaused"]


# ---- behaving like a real API server (issue 17) -------------------------------------------------------


async def test_a_continue_token_serves_the_list_as_of_its_first_page(api: Api) -> None:
    for i in range(4):
        await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout(f"r{i}"))
    _, first = await api.call("GET", f"{RO}/rollouts?limit=1")
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("r9"))  # after page 1
    await api.call("DELETE", f"{RO}/namespaces/shop/rollouts/r2")
    await api.call(
        "PATCH",
        f"{RO}/namespaces/shop/rollouts/r3/status",
        {"status": {"abort": True}},
        content_type="application/merge-patch+json",
    )
    names, token, pages = ["r0"], first["metadata"]["continue"], []
    while token:
        _, page = await api.call("GET", f"{RO}/rollouts?limit=1&continue={token}")
        assert page["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        names += [i["metadata"]["name"] for i in page["items"]]
        pages += page["items"]
        token = page["metadata"].get("continue")
    assert names == ["r0", "r1", "r2", "r3"]
    assert "abort" not in (pages[-1].get("status") or {})  # r3 as it was at the first page


async def test_an_expired_continue_token_answers_410_with_an_inconsistent_token(api: Api) -> None:
    for i in range(3):
        await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout(f"r{i}"))
    _, first = await api.call("GET", f"{RO}/rollouts?limit=1")
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("r9"))
    api.store.compact()
    status, body = await api.call("GET", f"{RO}/rollouts?limit=1&continue={first['metadata']['continue']}")
    assert (status, body["reason"], body["code"]) == (410, "Expired", 410)
    assert body["message"].startswith("The provided continue parameter is too old")
    assert body["metadata"]["continue"]
    status, body = await api.call("GET", f"{RO}/rollouts?limit=1&continue=not-a-token")
    assert status == 400 and "continue key is not valid" in body["message"]


async def test_watches_resume_only_within_the_window() -> None:
    store = Store(seed=1, history_limit=20)
    faults = Faults(store)
    server = await start_server(store, token=TOKEN, faults=faults, bookmark_interval=0.3, tls=False)
    try:
        async with aiohttp.ClientSession() as http:
            api = Api(store, faults, server, http)
            await api.call("POST", "/api/v1/namespaces", {"metadata": {"name": "shop"}})
            start = store.resource_version
            for i in range(30):
                await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout(f"r{i}"))
            events = await api.watch(f"{RO}/rollouts?watch=true&resourceVersion={start}")
            assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410
            assert events[0]["object"]["message"].startswith(f"too old resource version: {start} (")
            recent = store.resource_version - 5
            events = await api.watch(
                f"{RO}/rollouts?watch=true&resourceVersion={recent}", stop_after=5, timeout=2
            )
            assert [e["type"] for e in events] == ["ADDED"] * 5
    finally:
        await server.close()


def test_the_default_watch_window_is_bounded() -> None:
    assert 0 < DEFAULT_WATCH_WINDOW <= 10_000
    assert Store()._history.maxlen == DEFAULT_WATCH_WINDOW


async def test_writing_into_a_missing_namespace_is_not_found(api: Api) -> None:
    status, body = await api.call("POST", f"{RO}/namespaces/nowhere/rollouts", rollout())
    assert status == 404 and body["reason"] == "NotFound"
    assert body["message"] == 'namespaces "nowhere" not found'
    assert body["details"] == {"name": "nowhere", "kind": "namespaces"}
    assert api.store.try_get("namespaces", None, "nowhere") is None


async def test_illegal_label_values_and_names_are_invalid(api: Api) -> None:
    status, body = await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("web", app="bad value"))
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"].startswith(
        'Rollout.argoproj.io "web" is invalid: metadata.labels: Invalid value: "bad value"'
    )
    assert body["details"]["causes"][0]["field"] == "metadata.labels"
    status, body = await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("Web_1"))
    assert status == 422 and "a lowercase RFC 1123 subdomain" in body["message"]
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout("ok"))
    merge = "application/merge-patch+json"
    bad_key = {"metadata": {"labels": {"-bad/key": "x"}}}
    status, body = await api.call("PATCH", f"{RO}/namespaces/shop/rollouts/ok", bad_key, content_type=merge)
    assert status == 422 and "metadata.labels" in body["message"]


async def test_protobuf_bodies_other_than_namespaces_are_unsupported(api: Api) -> None:
    status, body = await api.call(
        "POST", "/api/v1/namespaces/shop/pods", {"x": 1}, content_type="application/vnd.kubernetes.protobuf"
    )
    assert (status, body["reason"]) == (415, "UnsupportedMediaType")
    status, body = await api.call("POST", "/api/v1/namespaces", "<xml/>", content_type="application/xml")
    assert status == 415


async def test_server_side_apply_over_http(api: Api) -> None:
    apply = "application/apply-patch+yaml"
    path = f"{RO}/namespaces/shop/rollouts/web"
    status, body = await api.call("PATCH", path, rollout(), content_type=apply)
    assert status == 422 and "fieldManager: Required value" in body["message"]
    status, created = await api.call("PATCH", path + "?fieldManager=a", rollout(), content_type=apply)
    assert status == 201
    assert [(e["manager"], e["operation"]) for e in created["metadata"]["managedFields"]] == [("a", "Apply")]
    changed = {**rollout(), "spec": {"replicas": 5}}
    status, body = await api.call("PATCH", path + "?fieldManager=b", changed, content_type=apply)
    assert (status, body["reason"]) == (409, "Conflict")
    assert body["message"] == 'Apply failed with 1 conflict: conflict with "a": .spec.replicas'
    assert body["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "a"', "field": ".spec.replicas"}
    ]
    status, forced = await api.call("PATCH", path + "?fieldManager=b&force=true", changed, content_type=apply)
    assert status == 200 and forced["spec"]["replicas"] == 5
    owners = {e["manager"]: e["fieldsV1"] for e in forced["metadata"]["managedFields"]}
    assert owners["b"]["f:spec"] == {"f:replicas": {}} and "f:spec" not in owners["a"]
    # A manager that stops applying a field it alone owns removes it.
    label_only = {**rollout(), "spec": {}}
    label_only["metadata"] = {"name": "web", "labels": {"app": "web", "tier": "front"}}
    _, applied = await api.call("PATCH", path + "?fieldManager=b", label_only, content_type=apply)
    assert "replicas" not in applied["spec"] and applied["metadata"]["labels"]["tier"] == "front"


async def test_updates_are_recorded_in_managed_fields_by_manager(api: Api) -> None:
    await api.call("POST", f"{RO}/namespaces/shop/rollouts?fieldManager=creator", rollout())
    merge = "application/merge-patch+json"
    _, patched = await api.call(
        "PATCH",
        f"{RO}/namespaces/shop/rollouts/web?fieldManager=scaler",
        {"spec": {"replicas": 9}},
        content_type=merge,
    )
    entries = {(e["manager"], e["operation"]): e["fieldsV1"] for e in patched["metadata"]["managedFields"]}
    assert entries[("scaler", "Update")] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in entries[("creator", "Update")].get("f:spec", {})


async def test_field_validation_strict_refuses_unknown_fields_and_warn_warns(api: Api) -> None:
    body = {**rollout(), "spec": {"replicas": 1, "bogus": True}}
    status, error = await api.call("POST", f"{RO}/namespaces/shop/rollouts?fieldValidation=Strict", body)
    assert status == 400 and error["message"] == 'strict decoding error: unknown field "spec.bogus"'
    async with api.http.post(
        api.server.url + f"{RO}/namespaces/shop/rollouts",
        data=json.dumps(body),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    ) as r:
        assert r.status == 201
        assert r.headers.getall("Warning") == ['299 - "unknown field \\"spec.bogus\\""']


async def test_openapi_documents_are_served_as_json(api: Api) -> None:
    status, root = await api.call("GET", "/openapi/v3")
    assert status == 200 and "apis/argoproj.io/v1alpha1" in root["paths"] and "api/v1" in root["paths"]
    url = root["paths"]["apis/argoproj.io/v1alpha1"]["serverRelativeURL"]
    status, doc = await api.call("GET", url)
    rollout_schema = doc["components"]["schemas"]["io.argoproj.v1alpha1.Rollout"]
    assert rollout_schema["x-kubernetes-group-version-kind"] == [
        {"group": "argoproj.io", "kind": "Rollout", "version": "v1alpha1"}
    ]
    patch = doc["paths"]["/apis/argoproj.io/v1alpha1/namespaces/{namespace}/rollouts/{name}"]["patch"]
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    status, v2 = await api.call("GET", "/openapi/v2", headers={"Accept": "application/json"})
    assert status == 200 and v2["swagger"] == "2.0" and "io.k8s.api.core.v1.Pod" in v2["definitions"]
    status, _ = await api.call(
        "GET", "/openapi/v2", headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}
    )
    assert status == 406


async def test_strict_validation_looks_only_at_what_the_client_sent(api: Api) -> None:
    meta = {"name": "web", "namespace": "shop"}
    stored = {**rollout(), "metadata": meta, "spec": {"replicas": 1, "odd": 1}}
    api.store.create("argoproj.io/rollouts", stored)  # written in-process, with a field the schema lacks
    merge = "application/merge-patch+json"
    path = f"{RO}/namespaces/shop/rollouts/web?fieldValidation=Strict"
    status, patched = await api.call("PATCH", path, {"spec": {"replicas": 2}}, content_type=merge)
    assert status == 200 and patched["spec"]["replicas"] == 2


async def test_dry_run_checks_and_computes_but_stores_nothing(api: Api) -> None:
    before = api.store.resource_version
    status, created = await api.call("POST", f"{RO}/namespaces/shop/rollouts?dryRun=All", rollout())
    assert (
        status == 201
        and created["metadata"]["name"] == "web"
        and "resourceVersion" not in created["metadata"]
    )
    assert api.store.try_get("argoproj.io/rollouts", "shop", "web") is None
    status, body = await api.call(
        "POST", f"{RO}/namespaces/shop/rollouts?dryRun=All", rollout("web", app="no good")
    )
    assert status == 422
    await api.call("POST", f"{RO}/namespaces/shop/rollouts", rollout())
    rv = api.store.resource_version
    merge = "application/merge-patch+json"
    path = f"{RO}/namespaces/shop/rollouts/web"
    status, patched = await api.call(
        "PATCH", path + "?dryRun=All", {"spec": {"replicas": 9}}, content_type=merge
    )
    assert status == 200 and patched["spec"]["replicas"] == 9 and patched["metadata"]["generation"] == 2
    status, _ = await api.call("DELETE", path, {"dryRun": ["All"]})
    assert status == 200
    stored = api.store.get("argoproj.io/rollouts", "shop", "web")
    assert stored["spec"]["replicas"] == 3 and api.store.resource_version == rv > before
    status, body = await api.call("DELETE", path + "?dryRun=Some")
    assert status == 400 and body["message"] == 'dryRun: Unsupported value: "Some": supported values: "All"'


def test_responses_are_the_json_the_standard_library_would_write() -> None:
    obj = {
        "metadata": {"name": "web", "labels": {"app": "wéb ✓"}, "annotations": {"a": 'q"\\\n\t<>&'}},
        "spec": {"replicas": 3, "weight": 12.5, "ratio": 0.1, "none": None, "on": True, "off": False},
        "items": [[], {}, -1, 2**63 - 1, -(2**63)],
    }
    assert dumps(obj) == json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
    exponents = {"tiny": 1e-7, "big": 1e21}  # orjson writes 1e-7 where json writes 1e-07: the same number
    assert json.loads(dumps(exponents)) == exponents


def test_what_orjson_refuses_is_still_encoded_as_before() -> None:
    beyond_64_bits = {"n": 2**64, "m": -(2**70)}
    assert dumps(beyond_64_bits) == b'{"n":18446744073709551616,"m":-1180591620717411303424}'
    assert dumps({1: "a"}) == b'{"1":"a"}'
    with pytest.raises(TypeError):
        dumps({"at": datetime.now(UTC)})
