"""The simulated pods' request traffic, exposed as real Prometheus metrics on one HTTP endpoint.

A scenario's ``traffic:`` section gives, per rollout, the request rate and for each version (``stable`` /
``canary``) its error ratio and median latency, optionally changing at scenario times::

    traffic:
      - rollout: web
        rps: 40                                   # across all ready pods of the rollout; 0 = no traffic
        stable: {error_rate: 0.01, latency_median: 0.05}
        canary: {error_rate: 0.01, latency_median: 0.05}
        changes:
          - {at: 60, canary: {error_rate: 0.3}}   # an error spike 60 scenario-seconds in

Every ready pod of such a rollout gets ``http_requests_total{namespace, rollout, pod, version,
rollouts_pod_template_hash, status}`` (status 200 / 404 / 500 / 503) and an
``http_request_duration_seconds`` histogram (log-normal latencies). The version is ``stable`` for the
stableRS hash and ``canary`` otherwise; the canary's share of the traffic is the traffic-routing weight in
``status.canary.weights`` or, without routing, its share of the ready pods.

Counters are deterministic integrals advanced lazily on each scrape: ``n = rps × Δt_wall`` is split by the
error ratio and the latency CDF, so ratios and quantiles come out exact and independent of ``--speed``
(Prometheus stamps samples with wall time; see ``dashboard.domain.analysis_eval.scale_query_windows`` for
the other half of that reconciliation). New pods start at zero, as on a real cluster, so a canary's first
``rate()`` answer comes one or two scrapes after it becomes ready.

Non-goals: noise, per-pod scrape targets (one endpoint serves every pod; ``honor_labels: true`` keeps the
labels), request-level simulation.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from aiohttp import web

from kubesim.controller.common import PODS, REPLICA_SETS, ROLLOUTS, Cache, Obj

BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0)
LATENCY_SIGMA = 0.35  # spread of the log-normal latency distribution
SERVER_ERROR_SPLIT = (("500", 0.8), ("503", 0.2))
HASH_LABEL = "rollouts-pod-template-hash"


class TrafficError(ValueError):
    """A bad ``traffic:`` entry or control request; the message names the field."""


@dataclass(frozen=True)
class VersionProfile:
    error_rate: float = 0.01
    latency_median: float = 0.05
    not_found_rate: float = 0.002


@dataclass(frozen=True)
class Change:
    at: float
    rps: float | None
    stable: dict[str, float]
    canary: dict[str, float]


@dataclass
class TrafficProfile:
    rollout: str
    namespace: str
    rps: float = 20.0
    stable: VersionProfile = field(default_factory=VersionProfile)
    canary: VersionProfile = field(default_factory=VersionProfile)
    changes: list[Change] = field(default_factory=list)

    def at(self, sim_seconds: float) -> tuple[float, VersionProfile, VersionProfile]:
        """The rate and both versions' profiles in effect at a scenario time."""
        rps, stable, canary = self.rps, self.stable, self.canary
        for change in sorted(self.changes, key=lambda c: c.at):
            if change.at > sim_seconds:
                break
            rps = change.rps if change.rps is not None else rps
            stable = replace(stable, **change.stable)
            canary = replace(canary, **change.canary)
        return rps, stable, canary


_VERSION_KEYS = {"error_rate", "latency_median", "not_found_rate"}


def _number(value: Any, path: str, minimum: float = 0.0, maximum: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not minimum <= value <= maximum:
        raise TrafficError(f"{path}: expected a number in [{minimum:g}, {maximum:g}], got {value!r}")
    return float(value)


def _version(spec: Any, path: str) -> dict[str, float]:
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise TrafficError(f"{path}: expected a mapping with {', '.join(sorted(_VERSION_KEYS))}")
    unknown = sorted(set(spec) - _VERSION_KEYS)
    if unknown:
        raise TrafficError(f"{path}: unknown key(s) {', '.join(unknown)}")
    out: dict[str, float] = {}
    for key, value in spec.items():
        if key == "latency_median":
            out[key] = _number(value, f"{path}.{key}", 1e-6, 3600)
        else:
            out[key] = _number(value, f"{path}.{key}", 0, 1)
    return out


def parse_traffic(spec: Any, path: str, namespaces: dict[str, str]) -> TrafficProfile:
    """Validate one ``traffic:`` entry; ``namespaces`` maps the scenario's rollout names to namespaces."""
    if not isinstance(spec, dict):
        raise TrafficError(f"{path}: expected a mapping")
    unknown = sorted(set(spec) - {"rollout", "rps", "stable", "canary", "changes"})
    if unknown:
        raise TrafficError(f"{path}: unknown key(s) {', '.join(unknown)}")
    rollout = spec.get("rollout")
    if rollout not in namespaces:
        raise TrafficError(f"{path}.rollout: no rollout named {rollout!r} in this scenario")
    changes = []
    raw_changes = spec.get("changes") or []
    if not isinstance(raw_changes, list):
        raise TrafficError(f"{path}.changes: expected a list")
    for i, item in enumerate(raw_changes):
        cpath = f"{path}.changes[{i}]"
        if not isinstance(item, dict) or "at" not in item:
            raise TrafficError(f"{cpath}: expected a mapping with at and rps / stable / canary")
        extra = sorted(set(item) - {"at", "rps", "stable", "canary"})
        if extra:
            raise TrafficError(f"{cpath}: unknown key(s) {', '.join(extra)}")
        changes.append(
            Change(
                at=_number(item["at"], f"{cpath}.at"),
                rps=None if item.get("rps") is None else _number(item["rps"], f"{cpath}.rps", 0, 1e6),
                stable=_version(item.get("stable"), f"{cpath}.stable"),
                canary=_version(item.get("canary"), f"{cpath}.canary"),
            )
        )
    return TrafficProfile(
        rollout=str(rollout),
        namespace=namespaces[str(rollout)],
        rps=_number(spec.get("rps", 20), f"{path}.rps", 0, 1e6),
        stable=VersionProfile(**_version(spec.get("stable"), f"{path}.stable")),
        canary=VersionProfile(**_version(spec.get("canary"), f"{path}.canary")),
        changes=changes,
    )


def latency_cdf(le: float, median: float) -> float:
    """P(latency <= le) for a log-normal with the given median."""
    z = (math.log(le) - math.log(median)) / LATENCY_SIGMA
    return 0.5 * math.erfc(-z / math.sqrt(2))


@dataclass
class _PodCounters:
    labels: dict[str, str]
    last: float
    requests: dict[str, float] = field(
        default_factory=lambda: {"200": 0.0, "404": 0.0, "500": 0.0, "503": 0.0}
    )
    buckets: list[float] = field(default_factory=lambda: [0.0] * len(BUCKETS))
    total: float = 0.0
    seconds: float = 0.0


def _ready(pod: Obj) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def _owner(obj: Obj, kind: str) -> str | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") == kind:
            return str(ref.get("name"))
    return None


class TrafficModel:
    """Per-pod counters for the rollouts a scenario gives traffic to; reads the simulation's cache."""

    def __init__(
        self,
        cache: Cache,
        profiles: list[TrafficProfile],
        *,
        sim_elapsed: Callable[[], float],
        wall: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cache = cache
        self.profiles = {(p.namespace, p.rollout): p for p in profiles}
        self.sim_elapsed = sim_elapsed
        self.wall = wall
        self.overrides: dict[tuple[str, str], dict[str, Any]] = {}
        self._pods: dict[tuple[str, str], _PodCounters] = {}

    def set_knobs(self, namespace: str, rollout: str, **knobs: float) -> None:
        """Override a rollout's traffic from now on: ``rps``, ``canary_error_rate``, ``stable_…``."""
        if (namespace, rollout) not in self.profiles:
            raise TrafficError(f"no traffic is defined for rollout {namespace}/{rollout}")
        for key, value in knobs.items():
            version, _, name = key.partition("_")
            if key == "rps":
                _number(value, key, 0, 1e6)
            elif version not in ("stable", "canary") or name not in _VERSION_KEYS:
                raise TrafficError(
                    f"unknown knob {key!r}: use rps or "
                    "(stable|canary)_(error_rate|latency_median|not_found_rate)"
                )
            else:
                _version({name: value}, key)
        self.overrides.setdefault((namespace, rollout), {}).update(knobs)

    def _current(self, key: tuple[str, str]) -> tuple[float, VersionProfile, VersionProfile]:
        rps, stable, canary = self.profiles[key].at(self.sim_elapsed())
        knobs = self.overrides.get(key, {})
        rps = float(knobs.get("rps", rps))
        stable = replace(stable, **{k[7:]: float(v) for k, v in knobs.items() if k.startswith("stable_")})
        canary = replace(canary, **{k[7:]: float(v) for k, v in knobs.items() if k.startswith("canary_")})
        return rps, stable, canary

    def _ready_pods(self) -> dict[tuple[str, str], list[tuple[Obj, str]]]:
        """Ready pods per traffic rollout, each with its pod-template hash."""
        out: dict[tuple[str, str], list[tuple[Obj, str]]] = {key: [] for key in self.profiles}
        for pod in self.cache.all(PODS):
            if not _ready(pod):
                continue
            meta = pod["metadata"]
            rs_name = _owner(pod, "ReplicaSet")
            rs = self.cache.get(REPLICA_SETS, meta.get("namespace", ""), rs_name) if rs_name else None
            rollout = _owner(rs, "Rollout") if rs else None
            key = (meta.get("namespace", ""), rollout or "")
            if key in out:
                out[key].append((pod, str((meta.get("labels") or {}).get(HASH_LABEL, ""))))
        return out

    def advance(self) -> None:
        """Bring every ready pod's counters up to now (called on each scrape)."""
        now = self.wall()
        seen: set[tuple[str, str]] = set()
        for key, pods in self._ready_pods().items():
            rollout = self.cache.get(ROLLOUTS, *key) or {}
            status = rollout.get("status") or {}
            stable_hash = status.get("stableRS") or ""
            versions = {h: ("stable" if not stable_hash or h == stable_hash else "canary") for _, h in pods}
            counts = {"stable": 0, "canary": 0}
            for _, h in pods:
                counts[versions[h]] += 1
            share = self._canary_share(rollout, counts)
            rps, stable, canary = self._current(key)
            profiles = {"stable": stable, "canary": canary}
            version_rps = {"stable": rps * (1 - share), "canary": rps * share}
            for pod, h in pods:
                meta = pod["metadata"]
                pod_key = (key[0], meta["name"])
                seen.add(pod_key)
                version = versions[h]
                counters = self._pods.get(pod_key)
                if counters is None or counters.labels["version"] != version:
                    labels = {
                        "namespace": key[0],
                        "rollout": key[1],
                        "pod": meta["name"],
                        "version": version,
                        "rollouts_pod_template_hash": h,
                    }
                    if counters is None:
                        counters = self._pods[pod_key] = _PodCounters(labels, now)
                    else:  # promoted: the same pod now serves as stable; counters continue
                        counters.labels = labels
                per_pod = version_rps[version] / counts[version] if counts[version] else 0.0
                self._add(counters, per_pod * max(0.0, now - counters.last), profiles[version])
                counters.last = now
        for gone in set(self._pods) - seen:
            del self._pods[gone]  # the series go stale on the next scrape, like a deleted pod's

    @staticmethod
    def _canary_share(rollout: Obj, counts: dict[str, int]) -> float:
        if not counts["canary"]:
            return 0.0
        routing = ((rollout.get("spec") or {}).get("strategy") or {}).get("canary", {}).get("trafficRouting")
        if routing:
            weights = ((rollout.get("status") or {}).get("canary") or {}).get("weights") or {}
            weight = (weights.get("canary") or {}).get("weight")
            return float(weight) / 100.0 if isinstance(weight, int | float) else 0.0
        total = counts["stable"] + counts["canary"]
        return counts["canary"] / total if total else 0.0

    @staticmethod
    def _add(counters: _PodCounters, n: float, profile: VersionProfile) -> None:
        if n <= 0:
            return
        errors = n * profile.error_rate
        ok = n - errors
        counters.requests["404"] += ok * profile.not_found_rate
        counters.requests["200"] += ok * (1 - profile.not_found_rate)
        for status, fraction in SERVER_ERROR_SPLIT:
            counters.requests[status] += errors * fraction
        for i, le in enumerate(BUCKETS):
            counters.buckets[i] += n * latency_cdf(le, profile.latency_median)
        counters.total += n
        counters.seconds += n * profile.latency_median * math.exp(LATENCY_SIGMA**2 / 2)

    def exposition(self) -> str:
        """The Prometheus text format (0.0.4) for every ready pod, after advancing the counters."""
        self.advance()
        lines = [
            "# HELP http_requests_total Requests served, by pod, version and status.",
            "# TYPE http_requests_total counter",
        ]
        pods = [self._pods[k] for k in sorted(self._pods)]
        for c in pods:
            for status, value in c.requests.items():
                lines.append(f"http_requests_total{{{_labels(c.labels, status=status)}}} {value!r}")
        lines += [
            "# HELP http_request_duration_seconds Request latency, by pod and version.",
            "# TYPE http_request_duration_seconds histogram",
        ]
        for c in pods:
            for le, value in zip(BUCKETS, c.buckets, strict=True):
                lines.append(
                    f"http_request_duration_seconds_bucket{{{_labels(c.labels, le=repr(le))}}} {value!r}"
                )
            lines.append(
                f"http_request_duration_seconds_bucket{{{_labels(c.labels, le='+Inf')}}} {c.total!r}"
            )
            lines.append(f"http_request_duration_seconds_sum{{{_labels(c.labels)}}} {c.seconds!r}")
            lines.append(f"http_request_duration_seconds_count{{{_labels(c.labels)}}} {c.total!r}")
        return "\n".join(lines) + "\n"


def _labels(labels: dict[str, str], **extra: str) -> str:
    merged = {**labels, **extra}
    return ",".join(f'{k}="{_escape(v)}"' for k, v in merged.items())


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


# --- the HTTP endpoint -------------------------------------------------------------------------------------


@dataclass
class TrafficServer:
    url: str
    port: int
    runner: web.AppRunner

    @property
    def target(self) -> str:
        """host:port, as a Prometheus static target."""
        return f"127.0.0.1:{self.port}"

    async def close(self) -> None:
        await self.runner.cleanup()


async def start_traffic_server(model: TrafficModel, port: int = 0) -> TrafficServer:
    """Serve ``GET /metrics`` (and ``POST /control``) on 127.0.0.1; runs on the simulation's loop."""

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(
            text=model.exposition(),
            content_type="text/plain",
            charset="utf-8",
            headers={"X-Content-Type-Options": "nosniff"},
        )

    async def control(request: web.Request) -> web.Response:
        params = dict(request.query)
        namespace, rollout = params.pop("namespace", ""), params.pop("rollout", "")
        try:
            knobs = {k: float(v) for k, v in params.items()}
        except ValueError:
            return web.json_response({"error": "knob values must be numbers"}, status=400)
        try:
            model.set_knobs(namespace, rollout, **knobs)
        except TrafficError as error:
            return web.json_response({"error": str(error)}, status=400)
        return web.json_response(
            {"rollout": f"{namespace}/{rollout}", "knobs": model.overrides[(namespace, rollout)]}
        )

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_post("/control", control)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    bound = runner.addresses[0][1] if runner.addresses else port
    return TrafficServer(f"http://127.0.0.1:{bound}", int(bound), runner)
