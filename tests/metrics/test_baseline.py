"""The stable baseline for stale-analysis-threshold, asked of a real Prometheus scraping kubesim's pods."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from dashboard.domain.findings import RolloutObjects, detect_findings
from dashboard.metrics.baseline import BaselineCache, baseline_queries, baseline_value, stable_baselines
from dashboard.metrics.client import PrometheusClient
from dashboard.metrics.config import MetricsConfig
from kubesim.prometheus import AttachedPrometheus, PrometheusUnavailable, attached_prometheus
from kubesim.scenarios.builtin import CANARY_ERROR_RATE_QUERY, CANARY_P95_QUERY
from kubesim.testing import free_port, running_kubesim
from tests.domain.findings.builders import T0, analysis_run, rollout

CANARY = "0000canary"


def _resolved(query: str, canary: str) -> str:
    return (
        query.replace("{{args.namespace}}", "prom-healthy")
        .replace("{{args.rollout}}", "storefront")
        .replace("{{args.canary-hash}}", canary)
    )


def view(stable: str, canary: str = CANARY, error_condition: str = "result[0] <= 0.5") -> dict[str, Any]:
    """A RolloutView whose newest analysis run measured ``canary`` with the scenario's two queries."""
    metrics = [
        {
            "name": "error-rate",
            "provider": "prometheus",
            "query": _resolved(CANARY_ERROR_RATE_QUERY, canary),
            "successCondition": error_condition,
        },
        {
            "name": "p95-latency",
            "provider": "prometheus",
            "query": _resolved(CANARY_P95_QUERY, canary),
            "successCondition": "isNaN(result[0]) || result[0] <= 0.25",  # no plain bound: no baseline
        },
        {"name": "by-version", "provider": "prometheus", "query": "up", "successCondition": "result[0] < 1"},
    ]
    runs = [
        {"name": "old", "createdAt": "2026-01-01T00:00:00Z", "podTemplateHash": "x", "metrics": []},
        {"name": "new", "createdAt": "2026-11-29T10:00:00Z", "podTemplateHash": canary, "metrics": metrics},
    ]
    return {
        "cluster": "sim",
        "namespace": "prom-healthy",
        "name": "storefront",
        "stableRS": stable,
        "revisions": [{"revision": 2, "analysisRuns": runs}],
    }


@pytest.fixture(scope="module")
def stable_traffic() -> Iterator[tuple[AttachedPrometheus, str]]:
    """kubesim's prometheus-healthy scenario scraped by Prometheus, once the stable pods have a rate."""
    with running_kubesim(["prometheus-healthy"]) as sim:
        try:
            with attached_prometheus(sim) as prom:
                deadline = time.monotonic() + 30
                stable = ""
                while not stable and time.monotonic() < deadline:
                    ro = sim.call(lambda: sim.store.get("argoproj.io/rollouts", "prom-healthy", "storefront"))
                    stable = str((ro.get("status") or {}).get("stableRS") or "")
                    time.sleep(0.2)
                assert stable, "the scenario never got a stable ReplicaSet"
                prom.process.wait_for_data(
                    f'sum(rate(http_requests_total{{rollouts_pod_template_hash="{stable}"}}[10s]))'
                )
                yield prom, stable
        except PrometheusUnavailable as error:
            pytest.fail(f"these tests need a real Prometheus: {error}", pytrace=False)


def test_only_queries_that_select_the_canary_hash_are_pointed_at_stable() -> None:
    queries = baseline_queries(view("1111stable"))
    assert [(q.metric, q.side) for q in queries] == [("error-rate", "upper")]
    assert 'rollouts_pod_template_hash="1111stable"' in queries[0].query and CANARY not in queries[0].query
    promoted = baseline_queries(view("1111stable", canary="1111stable"))  # the run measured today's stable
    assert [q.metric for q in promoted] == ["error-rate", "by-version"]
    assert baseline_queries({**view("1111stable"), "stableRS": None}) == []


def test_the_baseline_is_the_p95_for_an_upper_bound_and_the_p5_for_a_lower_one() -> None:
    series = [{"v": [float(i) for i in range(1, 101)]}, {"v": [None, float("nan")]}]
    assert baseline_value(series, "upper") == 95.0
    assert baseline_value(series, "lower") == 5.0
    assert baseline_value([{"v": [None]}], "upper") is None


@pytest.mark.prometheus
@pytest.mark.slow
async def test_the_baseline_is_the_stable_versions_error_rate_from_prometheus(
    stable_traffic: tuple[AttachedPrometheus, str],
) -> None:
    prom, stable = stable_traffic
    baselines = await stable_baselines(PrometheusClient(prom.url), view(stable), now=time.time())
    assert list(baselines) == ["error-rate"]
    assert abs(baselines["error-rate"] - 0.01) < 1e-9  # the scenario's exact stable error ratio
    # Fed to the detector, it flags the 0.5 threshold at once (no five past runs needed).
    run = analysis_run("new", "Successful", [], condition="result[0] <= 0.5")
    objects = RolloutObjects(rollout(), analysisruns=[run])
    (finding,) = detect_findings(None, objects=objects, now=T0, baselines=baselines)
    assert finding.code == "stale-analysis-threshold" and "50.0x worse than normal" in finding.explanation


@pytest.mark.prometheus
@pytest.mark.slow
async def test_the_cache_refreshes_once_per_ttl_and_keeps_values_through_an_outage(
    stable_traffic: tuple[AttachedPrometheus, str],
) -> None:
    prom, stable = stable_traffic
    cache = BaselineCache(MetricsConfig(urls={"sim": prom.url}), ttl=300)
    key = "sim/prom-healthy/storefront"
    assert cache.get(key) == {}
    now = time.time()
    assert await cache.refresh(view(stable), now) is True
    assert set(cache.get(key)) == {"error-rate"}
    assert await cache.refresh(view(stable), now + 10) is False  # not due yet
    cache.config = MetricsConfig(urls={"sim": f"http://127.0.0.1:{free_port()}"})  # Prometheus gone
    assert await cache.refresh(view(stable), now + 301) is False
    assert set(cache.get(key)) == {"error-rate"}  # the last good baseline stays
    unconfigured = BaselineCache(MetricsConfig())
    assert await unconfigured.refresh(view(stable)) is False and unconfigured.get(key) == {}
