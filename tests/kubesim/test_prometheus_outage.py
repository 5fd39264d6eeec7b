"""Prometheus stopped in the middle of an analysis: the next measurements are Error, and past the
consecutiveErrorLimit the run ends Error and the rollout aborts (the seeds' outage of the metrics system)."""

from __future__ import annotations

import copy
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from dashboard.domain.findings import RolloutObjects, detect_findings
from kubesim.prometheus import PrometheusUnavailable, attached_prometheus
from kubesim.scenarios.builtin import PROMETHEUS_SCENARIOS
from kubesim.testing import running_kubesim

pytestmark = [pytest.mark.prometheus, pytest.mark.slow]


def _scenario(tmp_path: Path) -> str:
    data = copy.deepcopy(next(s for s in PROMETHEUS_SCENARIOS if s["name"] == "prometheus-healthy"))
    data["name"] = "prometheus-outage"
    for metric in data["analysis_templates"][0]["spec"]["metrics"]:
        metric.update(count=20, consecutiveErrorLimit=0)  # long enough to stop Prometheus mid-run
    path = tmp_path / "outage.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _run(handle: Any) -> dict[str, Any] | None:
    runs = handle.call(lambda: handle.store.list("argoproj.io/analysisruns", "prom-healthy")[0])
    return runs[0] if runs else None


def test_stopping_prometheus_mid_analysis_errors_the_run_and_aborts(tmp_path: Path) -> None:
    with running_kubesim([_scenario(tmp_path)]) as handle:
        try:
            prom_context = attached_prometheus(handle)
            prom = prom_context.__enter__()
        except PrometheusUnavailable as error:
            pytest.fail(f"this test needs a real Prometheus: {error}", pytrace=False)
        try:
            deadline = time.monotonic() + 60
            run = None
            while time.monotonic() < deadline:
                run = _run(handle)
                results = ((run or {}).get("status") or {}).get("metricResults") or []
                if any(r.get("successful", 0) >= 1 for r in results):
                    break
                time.sleep(0.3)
            else:
                raise AssertionError(f"no successful measurement before the outage: {run}")
            prom.process.stop()
            while time.monotonic() < deadline:
                run = _run(handle)
                if ((run or {}).get("status") or {}).get("phase") == "Error":
                    break
                time.sleep(0.3)
            assert run is not None and run["status"]["phase"] == "Error", run
            errored = [
                m
                for r in run["status"]["metricResults"]
                for m in r.get("measurements") or []
                if m["phase"] == "Error"
            ]
            assert errored and "connect: connection refused" in errored[-1]["message"]
            assert run["status"]["message"].endswith('connect: connection refused"') or (
                "consecutiveErrors (1) > consecutiveErrorLimit (0)" in run["status"]["message"]
            )
            _assert_the_finding_says_the_provider_is_unreachable(handle)
            deadline = time.monotonic() + 20
            ro: dict[str, Any] = {}
            while time.monotonic() < deadline:
                ro = handle.call(
                    lambda: handle.store.get("argoproj.io/rollouts", "prom-healthy", "storefront")
                )
                if ro["status"].get("abort"):
                    break
                time.sleep(0.3)
            assert ro["status"].get("abort") is True and ro["status"]["phase"] == "Degraded"
        finally:
            prom_context.__exit__(None, None, None)


def _assert_the_finding_says_the_provider_is_unreachable(handle: Any) -> None:
    """The real outage's Error measurement reads as an unreachable provider, with the manual procedure."""

    def objects() -> RolloutObjects:
        store = handle.store
        return RolloutObjects(
            store.get("argoproj.io/rollouts", "prom-healthy", "storefront"),
            store.list("apps/replicasets", "prom-healthy")[0],
            store.list("argoproj.io/analysisruns", "prom-healthy")[0],
        )

    findings = detect_findings(None, objects=handle.call(objects), now=datetime.now(UTC))
    (finding,) = [f for f in findings if f.code == "metrics-provider-error"]
    assert finding.title == "Analysis errored: the metrics provider is unreachable"
    assert finding.evidence["unreachable"] and "connection refused" in finding.evidence["unreachable"][0]
    assert "automated rollback cannot protect this release" in finding.explanation
    assert "Follow the manual procedure:" in finding.explanation
    curls = [c for c in finding.runbook if c.startswith("curl")]
    assert curls == ["curl -sf http://prometheus.monitoring:9090/-/ready"]  # both metrics, one Prometheus
