"""Helpers for the watcher's end-to-end tests: run a watcher against kubesim, compute fresh views, wait."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from dashboard.actions.availability import action_availability
from dashboard.domain.rollout_view import rollout_views
from dashboard.history.models import Release, TimelineEvent
from dashboard.history.recorder import Recorder
from dashboard.kube.connection import KubeApi
from dashboard.kube.watch import WatchSettings
from dashboard.kube.watcher import PipelineSettings, Watcher, comparable
from dashboard.live.bus import BusError, LiveBus, RedisBus
from dashboard.live.lease import Lease, RedisLease

FAST_WATCH = WatchSettings(silence_timeout=3.0, backoff_initial=0.1, backoff_max=1.0, server_timeout=30.0)
RESOURCES = {
    "argoproj.io/rollouts": "Rollout",
    "apps/replicasets": "ReplicaSet",
    "pods": "Pod",
    "argoproj.io/analysisruns": "AnalysisRun",
    "argoproj.io/experiments": "Experiment",
    "events": "Event",  # the Events about each Rollout (its view lists the newest)
    # The routing objects Rollouts name (their view shows what the router says).
    "networking.istio.io/virtualservices": "VirtualService",
    "networking.istio.io/destinationrules": "DestinationRule",
    "networking.k8s.io/ingresses": "Ingress",
    "gateway.networking.k8s.io/httproutes": "HTTPRoute",
    "split.smi-spec.io/trafficsplits": "TrafficSplit",
    "autoscaling/horizontalpodautoscalers": "HorizontalPodAutoscaler",
}



class PagesByGet:
    """A fake API whose ``get`` answers each page of a list (``KubeApi.list_connection`` in its place)."""

    async def get(self, path: str, params: Mapping[str, str], timeouts: Any) -> dict[str, Any]:
        raise NotImplementedError

    @contextlib.asynccontextmanager
    async def list_connection(self) -> AsyncIterator[Callable[..., Any]]:
        yield self.get

def fresh_views(sim: Any, cluster: str) -> dict[str, dict[str, Any]]:
    """What a fresh list of the simulator computes, keyed like the bus."""

    def list_all() -> list[dict[str, Any]]:
        objects: list[dict[str, Any]] = []
        for resource, kind in RESOURCES.items():
            items, _ = sim.store.list(resource)
            objects.extend({**item, "kind": kind} for item in items)
        return objects

    objects, now = sim.call(list_all), datetime.now(UTC)
    views = {
        f"{cluster}/{v.namespace}/{v.name}": v.to_dict()
        for v in rollout_views(objects, now=now, cluster=cluster)
    }
    for obj in objects:  # the action bar, from the same objects (as RolloutInputs.view adds it)
        if obj["kind"] == "Rollout":
            meta = obj["metadata"]
            replica_sets = [o for o in objects if o["kind"] == "ReplicaSet"]
            view = views[f"{cluster}/{meta['namespace']}/{meta['name']}"]
            view["availableActions"] = action_availability(obj, replica_sets, now)
    return views


async def assert_bus_matches_fresh_list(bus: LiveBus, sim: Any, cluster: str, timeout: float = 10.0) -> None:
    """Eventually every snapshot equals what a fresh list computes (and nothing else is there)."""
    deadline = time.monotonic() + timeout
    while True:
        expected = {k: _plain(v) for k, v in fresh_views(sim, cluster).items()}
        try:
            held = {k: _plain(v) for k, v in (await bus.snapshots(cluster)).items()}
        except BusError:  # the reader's own connection to a restarted Redis: ask again
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)
            continue
        for view in held.values():
            # The watcher adds what a fresh list cannot know (Argo CD context; findings need history).
            view.pop("gitops", None)
            view.pop("findings", None)
        for view in expected.values():
            view.pop("findings", None)
        if held == expected:
            return
        if time.monotonic() > deadline:
            missing, extra = expected.keys() - held.keys(), held.keys() - expected.keys()
            differing = [k for k in expected.keys() & held.keys() if expected[k] != held[k]]
            raise AssertionError(
                f"bus differs from a fresh list: missing={sorted(missing)} "
                f"extra={sorted(extra)} differing={sorted(differing)[:5]}"
            )
        await asyncio.sleep(0.3)


def _plain(view: dict[str, Any]) -> Any:
    import json

    return json.loads(json.dumps(comparable(view), default=str))


async def wait_until(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@contextlib.asynccontextmanager
async def watching(
    sim: Any,
    *,
    cluster: str,
    bus: LiveBus,
    lease: Lease,
    recorder: Recorder | None = None,
    settings: PipelineSettings = PipelineSettings(),  # noqa: B008
    watch_settings: WatchSettings = FAST_WATCH,
) -> AsyncIterator[tuple[Watcher, asyncio.Task[None]]]:
    api = await KubeApi.connect(str(sim.kubeconfig))
    watcher = Watcher(
        cluster, bus=bus, lease=lease, recorder=recorder, settings=settings, watch_settings=watch_settings
    )
    task = asyncio.create_task(watcher.run(api))
    try:
        yield watcher, task
    finally:
        task.cancel()
        stopped, _ = await asyncio.wait({task}, timeout=STOP_WITHIN)
        if not stopped:  # a watcher that ignores its cancellation would also ignore SIGTERM: name where
            raise AssertionError(
                f"the watcher did not stop within {STOP_WITHIN} s of being cancelled:\n{_stacks()}"
            )


STOP_WITHIN = 15.0


def _stacks() -> str:
    """Where every pending task of this loop waits: the diagnosis of a hang, in the failure itself."""
    lines = []
    for pending in asyncio.all_tasks():
        frames = pending.get_stack(limit=8)
        where = " <- ".join(f"{f.f_code.co_name}:{f.f_lineno}" for f in reversed(frames))
        lines.append(f"  {pending.get_name()}: {where}")
    return "\n".join(sorted(lines))


def redis_bus_and_lease(
    redis_url: str, prefix: str, cluster: str, **lease_args: Any
) -> tuple[RedisBus, RedisLease]:
    return (
        RedisBus(redis_url, prefix=prefix),
        RedisLease(redis_url, prefix=prefix, cluster=cluster, **lease_args),
    )


async def db(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ORM code on a worker thread and close that thread's connection afterwards."""

    def run() -> Any:
        from django.db import connection

        try:
            return fn(*args, **kwargs)
        finally:
            connection.close()

    return await asyncio.to_thread(run)


def history_problems(cluster: str) -> list[str]:
    """Duplicated or missing step transitions in the recorded history (sync: call in a thread)."""
    problems = []
    for release in Release.objects.filter(cluster=cluster):
        steps = [
            e.data.get("toIndex")
            for e in TimelineEvent.objects.filter(release=release, kind="step.changed").order_by("at", "id")
            if not str(e.dedupe).startswith("step:back")
        ]
        if len(steps) != len(set(steps)):
            problems.append(f"{release}: duplicated step transitions {steps}")
        first = min(steps) if steps else 1
        wanted = list(range(first, release.steps_reached + 1)) if steps else []
        if sorted(steps) != wanted:
            problems.append(f"{release}: step transitions {sorted(steps)} do not cover {wanted}")
    return problems


def timeline(cluster: str, rollout: str) -> list[tuple[str, str, str]]:
    """(pod hash, kind, dedupe) of every recorded event of a rollout, in order (sync)."""
    return [
        (e.release.pod_hash, e.kind, e.dedupe)
        for e in TimelineEvent.objects.filter(release__cluster=cluster, release__rollout=rollout)
        .select_related("release")
        .order_by("at", "id")
    ]
