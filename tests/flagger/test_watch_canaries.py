"""The watcher publishes Flagger Canaries like rollouts: kubesim's Flagger → watcher → bus and fleet row.

Also what makes that cheap and safe: the Flagger kinds are only watched where the Canary CRD is served,
Events are asked for with a field selector, and the cache keeps only the newest Events of each Canary.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from dashboard.domain.timeline import timeline_basis, timeline_events
from dashboard.history.models import TimelineEvent
from dashboard.history.recorder import Recorder
from dashboard.kube.cache import EVENTS_PER_CANARY, ClusterCache
from dashboard.kube.connection import ApiError
from dashboard.kube.watcher import PipelineSettings, Watcher
from dashboard.live.bus import MemoryBus, fleet_row
from dashboard.live.lease import MemoryLease
from dashboard.metrics.baseline import BaselineCache
from dashboard.metrics.config import MetricsConfig
from kubesim.testing import free_port, running_kubesim
from tests.kube.watch_helpers import PagesByGet, db, redis_bus_and_lease, wait_until, watching

NS = "test"


def canary(name: str = "podinfo", uid: str = "can-1", rv: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "flagger.app/v1beta1",
        "kind": "Canary",
        "metadata": {"name": name, "namespace": NS, "uid": uid, "resourceVersion": rv},
        "spec": {
            "provider": "gatewayapi:v1",
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "service": {"port": 9898},
            "analysis": {"interval": "10s", "threshold": 3, "maxWeight": 30, "stepWeight": 10},
        },
        "status": {
            "phase": "Progressing",
            "canaryWeight": 10,
            "lastAppliedSpec": "b",
            "lastPromotedSpec": "a",
        },
    }


def event(n: int, about: str = "podinfo", kind: str = "Canary") -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"{about}.{n}",
            "namespace": NS,
            "uid": f"ev-{about}-{n}",
            "resourceVersion": str(n),
        },
        "involvedObject": {"kind": kind, "name": about, "namespace": NS},
        "type": "Normal",
        "reason": "Synced",
        "message": f"Advance {about}.{NS} canary weight {n}",
        "lastTimestamp": f"2026-11-29T10:{n // 60:02d}:{n % 60:02d}Z",
    }


def deployment(name: str, image: str, uid: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": NS, "uid": uid, "resourceVersion": "1"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "app", "image": image}]}}},
        "status": {"readyReplicas": 2, "availableReplicas": 2},
    }


# ---- the cache ----------------------------------------------------------------------------------------


def test_events_deployments_and_routes_find_their_canary_whichever_arrives_first() -> None:
    cache = ClusterCache()
    assert cache.apply("Event", "ADDED", event(1)) == set()
    assert cache.apply("Deployment", "ADDED", deployment("podinfo-primary", "podinfo:1", "dep-p")) == set()
    assert cache.apply("Canary", "ADDED", canary()) == {"can-1"}
    assert cache.apply("Event", "ADDED", event(2)) == {"can-1"}
    assert cache.apply("Deployment", "ADDED", deployment("podinfo", "podinfo:2", "dep-c")) == {"can-1"}
    route = {"metadata": {"name": "podinfo", "namespace": NS, "uid": "route"}, "spec": {}}
    assert cache.apply("HTTPRoute", "ADDED", route) == {"can-1"}
    assert cache.apply("Deployment", "ADDED", deployment("unrelated", "x:1", "dep-x")) == set()
    inputs = cache.canary_inputs("can-1")
    assert inputs is not None
    assert sorted(e["metadata"]["uid"] for e in inputs.events) == ["ev-podinfo-1", "ev-podinfo-2"]
    assert sorted((o["kind"], o["metadata"]["name"]) for o in inputs.objects) == [
        ("Deployment", "podinfo"),
        ("Deployment", "podinfo-primary"),
        ("HTTPRoute", "podinfo"),
    ]
    assert cache.apply("Deployment", "DELETED", deployment("podinfo", "podinfo:2", "dep-c")) == {"can-1"}
    assert set(cache.root_names()) == {"can-1"}


def test_only_the_newest_events_of_each_canary_are_kept() -> None:
    cache = ClusterCache()
    cache.apply("Canary", "ADDED", canary())
    for n in range(EVENTS_PER_CANARY + 30):
        cache.apply("Event", "ADDED", event(n))
    cache.apply("Event", "ADDED", event(1, about="other"))
    inputs = cache.canary_inputs("can-1")
    assert inputs is not None
    kept = sorted(int(e["metadata"]["uid"].rsplit("-", 1)[1]) for e in inputs.events)
    assert kept == list(range(30, EVENTS_PER_CANARY + 30))
    assert len(cache.objects["Event"]) == EVENTS_PER_CANARY + 1


def test_events_about_anything_but_a_canary_are_not_kept() -> None:
    cache = ClusterCache()
    assert cache.apply("Event", "ADDED", event(1, kind="Pod")) == set()
    assert cache.objects["Event"] == {}


# ---- what is watched ----------------------------------------------------------------------------------


class FakeApi(PagesByGet):
    """Empty lists (404 for the Canary CRD unless ``flagger``), and watches that stay silent."""

    host = "https://fake.invalid"  # the server a handoff is kept for

    def __init__(self, flagger: bool, canaries: list[dict[str, Any]] | None = None) -> None:
        self.flagger = flagger
        self.canaries = canaries or []
        self.calls: list[tuple[str, dict[str, str]]] = []

    async def get(self, path: str, params: Mapping[str, str], timeouts: Any) -> dict[str, Any]:
        self.calls.append((path, dict(params)))
        if path.startswith("/apis/flagger.app/") and not self.flagger:
            raise ApiError(404, "Not Found")
        items = self.canaries if path == "/apis/flagger.app/v1beta1/canaries" else []
        return {"items": items, "metadata": {"resourceVersion": "1"}}

    async def stream(self, path: str, params: Mapping[str, str], timeouts: Any, on_event: Any) -> None:
        await asyncio.sleep(3600)


def quiet_watcher() -> Watcher:
    return Watcher("c", bus=MemoryBus(prefix=uuid.uuid4().hex), lease=MemoryLease(), baselines=no_baselines())


def no_baselines() -> BaselineCache:
    return BaselineCache(MetricsConfig())


async def run_against(api: FakeApi) -> list[tuple[str, dict[str, str]]]:
    watcher = quiet_watcher()
    task = asyncio.create_task(watcher.run(api))  # type: ignore[arg-type]
    try:
        await asyncio.wait_for(watcher._ready.wait(), 5)
        await asyncio.sleep(0.05)
        return api.calls
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_without_the_canary_crd_no_flagger_kind_is_asked_for_and_the_watcher_gets_ready() -> None:
    calls = await run_against(FakeApi(flagger=False))
    paths = [path for path, _ in calls]
    assert "/apis/flagger.app/v1beta1/canaries" in paths
    # Events about Rollouts and their children are watched regardless (the rollout timeline shows them);
    # Canary ones are not.
    rollout_events = {
        f"involvedObject.kind={kind}" for kind in ("Rollout", "ReplicaSet", "Pod", "AnalysisRun")
    }
    flagger_reads = [
        p
        for p, params in calls
        if p.endswith(("/events", "/deployments", "/httproutes"))
        and params.get("fieldSelector") not in rollout_events
    ]
    assert not flagger_reads


async def test_with_the_canary_crd_events_are_listed_with_a_field_selector() -> None:
    listed = await run_against(FakeApi(flagger=True))
    selectors = {params.get("fieldSelector") for path, params in listed if path == "/api/v1/events"}
    assert "involvedObject.kind=Canary" in selectors
    calls = dict(listed)
    assert "/apis/apps/v1/deployments" in calls
    # HTTPRoutes only where a Canary (or a Rollout) names one: none here.
    assert not any(path.endswith("/httproutes") for path in calls)


async def test_a_canarys_http_route_is_watched_in_its_namespace_only() -> None:
    calls = dict(await run_against(FakeApi(flagger=True, canaries=[canary()])))
    assert f"/apis/gateway.networking.k8s.io/v1/namespaces/{NS}/httproutes" in calls
    assert "/apis/gateway.networking.k8s.io/v1/httproutes" not in calls


# ---- publishing ---------------------------------------------------------------------------------------


async def test_a_canary_is_published_under_its_key_with_its_controller_in_the_fleet_row() -> None:
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    watcher = Watcher(
        "c",
        bus=bus,
        lease=MemoryLease(),
        settings=PipelineSettings(min_publish_interval=0),
        baselines=no_baselines(),
    )
    watcher.leader = True
    watcher.changed("Canary", "ADDED", canary())
    await watcher.flush()
    view = await bus.snapshot("c/test/podinfo")
    assert view is not None and view["controller"] == "flagger" and view["kind"] == "Canary"
    assert [row["controller"] for row in await bus.fleet()] == ["flagger"]
    watcher.changed("Event", "ADDED", event(3))
    await watcher.flush()
    view = await bus.snapshot("c/test/podinfo")
    assert view is not None and [e["message"] for e in view["events"]] == [
        "Advance podinfo.test canary weight 3"
    ]
    watcher.changed("Canary", "DELETED", canary())
    await watcher.flush()
    assert await bus.snapshot("c/test/podinfo") is None


def test_a_rollouts_fleet_row_says_argo_rollouts() -> None:
    assert fleet_row({"cluster": "c", "namespace": "n", "name": "r"})["controller"] == "argo-rollouts"


def test_the_timeline_diff_works_on_canary_views() -> None:
    from dashboard.domain.flagger import canary_view

    at = datetime(2026, 11, 29, 10, tzinfo=UTC)
    before = canary_view(canary(), events=[event(1)], now=at, cluster="c").to_dict()
    moved = canary()
    moved["status"] = {**moved["status"], "canaryWeight": 20, "phase": "Failed"}
    after = canary_view(moved, events=[event(1), event(2)], now=at, cluster="c").to_dict()
    assert isinstance(timeline_events(timeline_basis(before), after, at=at), list)
    assert isinstance(timeline_events(None, after, at=at), list)


# ---- end to end ---------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
async def test_kubesim_flagger_canary_waiting_for_promotion_reaches_the_bus_and_the_fleet(
    redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The confirm-promotion gate asks a port nobody listens on: it stays closed.
    monkeypatch.setenv("KUBESIM_FLAGGER_GATE_URL", f"http://127.0.0.1:{free_port()}/gates/")
    cluster = "f2e"
    bus, lease = redis_bus_and_lease(redis_url, redis_prefix, cluster)
    recorder = Recorder(max_wait=0.05).start()
    try:
        with running_kubesim(["flagger-waiting-approval"], speed=40, bookmark_interval=1.0) as sim:
            async with watching(sim, cluster=cluster, bus=bus, lease=lease, recorder=recorder) as (_, task):

                async def waiting() -> dict[str, Any] | None:
                    view = await bus.snapshot(f"{cluster}/test/backend")
                    return view if view and view.get("phase") == "WaitingPromotion" else None

                view = await wait_until(waiting, 60, "the Canary to wait for promotion")
                assert not task.done()
                await asyncio.to_thread(recorder.flush)
        assert view["controller"] == "flagger" and view["kind"] == "Canary"
        assert view["status"] == "Paused"
        # status.canaryWeight reads 0 here; the HTTPRoute the watcher read says what users get.
        assert view["actualWeight"] == 30
        assert {w["name"] for w in view["workloads"]} == {"backend", "backend-primary"}
        assert view["events"], "the Events about the Canary reached its view"
        (row,) = [r for r in await bus.fleet() if r["key"] == f"{cluster}/test/backend"]
        assert row["controller"] == "flagger" and row["status"] == "Paused"
        stream = await bus.read_since("0-0", count=10_000)
        assert any(entry["key"] == f"{cluster}/test/backend" and entry["events"] for _, entry in stream)
        # The timeline events went to the history like a rollout's.
        assert await db(lambda: TimelineEvent.objects.filter(release__rollout="backend").count()) > 0
    finally:
        await asyncio.to_thread(recorder.stop)
        await bus.close()
