"""The metric gate with a real Prometheus: kubesim's pods expose traffic, Prometheus scrapes it every second,
and the AnalysisRuns query it the way Argo Rollouts' prometheus provider does.

One kubesim runs the four Prometheus scenarios side by side (each in its own namespace) and one Prometheus
serves them all, so the module pays Prometheus' ≈6 s start-up once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubesim.clock import ManualClock
from kubesim.controller.analysis import AnalysisController
from kubesim.controller.common import Cache
from kubesim.metrics import PrometheusProvider
from kubesim.prometheus import AttachedPrometheus, PrometheusUnavailable, attached_prometheus
from kubesim.testing import KubesimHandle, running_kubesim

pytestmark = [pytest.mark.prometheus, pytest.mark.slow]

SCENARIOS = (
    "prometheus-healthy",
    "prometheus-error-spike",
    "prometheus-latency-regression",
    "prometheus-no-traffic",
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[KubesimHandle, AttachedPrometheus]]:
    with running_kubesim(SCENARIOS) as handle:
        try:
            with attached_prometheus(handle) as prom:
                yield handle, prom
        except PrometheusUnavailable as error:
            pytest.fail(f"these tests need a real Prometheus: {error}", pytrace=False)


def _wait_for_run(handle: KubesimHandle, namespace: str, timeout: float = 60.0) -> dict[str, Any]:
    """The namespace's AnalysisRun once it has completed."""
    deadline = time.monotonic() + timeout
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        runs = handle.call(lambda: handle.store.list("argoproj.io/analysisruns", namespace)[0])
        done = [r for r in runs if (r.get("status") or {}).get("phase") in ("Successful", "Failed", "Error")]
        if done:
            return done[0]
        time.sleep(0.5)
    raise AssertionError(f"no AnalysisRun in {namespace} completed within {timeout:g} s: {runs}")


def _rollout(handle: KubesimHandle, namespace: str, name: str, want: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    ro: Any = None
    while time.monotonic() < deadline:
        ro = handle.call(lambda: handle.store.get("argoproj.io/rollouts", namespace, name))
        if (ro.get("status") or {}).get("phase") == want:
            return ro
        time.sleep(0.5)
    raise AssertionError(f"{namespace}/{name} is not {want}: {(ro or {}).get('status')}")


def _metric(run: dict[str, Any], name: str) -> dict[str, Any]:
    return next(m for m in run["status"]["metricResults"] if m["name"] == name)


def test_the_healthy_canary_passes_its_analysis_and_completes(cluster: Any) -> None:
    handle, _ = cluster
    run = _wait_for_run(handle, "prom-healthy")
    assert run["status"]["phase"] == "Successful", run["status"]
    errors = _metric(run, "error-rate")
    assert errors["count"] == 3 and errors["successful"] == 3
    values = [float(m["value"].strip("[]")) for m in errors["measurements"]]
    assert all(abs(v - 0.01) < 1e-9 for v in values), values  # the exact scenario ratio
    latency = [float(m["value"].strip("[]")) for m in _metric(run, "p95-latency")["measurements"]]
    assert all(0.05 < v < 0.25 for v in latency), latency
    ro = _rollout(handle, "prom-healthy", "storefront", "Healthy")
    assert ro["status"]["stableRS"] == ro["status"]["currentPodHash"]


def test_an_error_spike_fails_the_analysis_and_aborts_the_rollout(cluster: Any) -> None:
    handle, _ = cluster
    run = _wait_for_run(handle, "prom-errors")
    assert run["status"]["phase"] == "Failed", run["status"]
    assert run["status"]["message"].startswith(
        'Metric "error-rate" assessed Failed due to failed (1) > failureLimit (0)'
    )
    last = _metric(run, "error-rate")["measurements"][-1]
    assert last["phase"] == "Failed" and float(last["value"].strip("[]")) > 0.05
    ro = _rollout(handle, "prom-errors", "cart", "Degraded")
    assert ro["status"]["abort"] is True


def test_a_latency_regression_fails_on_p95(cluster: Any) -> None:
    handle, _ = cluster
    run = _wait_for_run(handle, "prom-latency")
    assert run["status"]["phase"] == "Failed"
    p95 = _metric(run, "p95-latency")
    assert p95["phase"] == "Failed" and float(p95["measurements"][-1]["value"].strip("[]")) > 0.25
    _rollout(handle, "prom-latency", "search-api", "Degraded")


def test_no_traffic_gives_nan_and_a_failed_measurement_like_upstream(cluster: Any) -> None:
    handle, _ = cluster
    run = _wait_for_run(handle, "prom-idle")
    errors = _metric(run, "error-rate")
    assert run["status"]["phase"] == "Failed"
    assert errors["measurements"][-1] == {**errors["measurements"][-1], "value": "[NaN]", "phase": "Failed"}


class _Store:
    def patch(self, *args: object, **kwargs: object) -> None:
        pass


def test_a_query_that_matches_nothing_is_an_error_measurement(cluster: Any) -> None:
    _, prom = cluster
    ctl = AnalysisController(
        _Store(), Cache([]), ManualClock(), PrometheusProvider(prom.url), lambda *a: None
    )
    run = {
        "metadata": {"name": "typo", "namespace": "n", "uid": "u"},
        "spec": {
            "metrics": [
                {
                    "name": "error-rate",
                    "consecutiveErrorLimit": 0,
                    "successCondition": "result[0] <= 0.05",
                    "provider": {
                        "prometheus": {"query": 'sum(rate(http_requests_total{rollout="nope"}[10s]))'}
                    },
                }
            ]
        },
    }
    status, _ = ctl.compute(run)
    measurement = status["metricResults"][0]["measurements"][0]
    assert measurement["phase"] == "Error" and measurement["value"] == "[]"
    assert measurement["message"] == (
        'could not evaluate successCondition "result[0] <= 0.05": metric result is nil or empty: '
        "no data returned from the metric provider"
    )
    assert status["phase"] == "Error"
    assert status["message"].startswith(
        'Metric "error-rate" assessed Error due to consecutiveErrors (1) > consecutiveErrorLimit (0)'
    )


def test_a_promql_syntax_error_is_reported_like_the_go_client(cluster: Any) -> None:
    _, prom = cluster
    measured = PrometheusProvider(prom.url).measure(
        {}, {"name": "m", "provider": {"prometheus": {"query": "sum(rate(x[5s]"}}}, 0
    )
    assert measured.error is not None and measured.error.startswith("bad_data: ")


def test_a_scalar_answer_is_a_float_result(cluster: Any) -> None:
    _, prom = cluster
    measured = PrometheusProvider(prom.url).measure(
        {}, {"name": "m", "provider": {"prometheus": {"query": "scalar(vector(0.25))"}}}, 0
    )
    assert measured.result == 0.25 and measured.value == "0.25"
