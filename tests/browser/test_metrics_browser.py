"""The rollout page's metrics panel in Chromium, against a real kubesim, a real Prometheus and the watcher.

The prometheus-healthy scenario runs its step analysis (error rate and p95 latency, three measurements
each) against the Prometheus scraping kubesim's pods; the page must chart each query over time with its
threshold, every measurement as a point coloured by verdict, the step's window shaded, and the
canary-vs-stable panel. Then Prometheus is stopped: the panel says so and the rest of the page goes on.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubesim.prometheus import AttachedPrometheus, PrometheusUnavailable, attached_prometheus
from kubesim.testing import running_kubesim
from tests.browser.conftest import SHOTS, Server, WatcherThread, screenshot, snapshot

pytestmark = [pytest.mark.browser, pytest.mark.prometheus, pytest.mark.slow]

KEY = "sim/prom-healthy/storefront"
SPEED = 2.0

# What plotly drew, read from the chart elements (their .data and .layout are plotly's own state).
CHARTS_JS = """() => Array.from(document.querySelectorAll('#metrics-panel [data-chart]')).map(el => ({
  id: el.getAttribute('data-chart'),
  traces: (el.data || []).map(t => ({name: t.name, mode: t.mode, n: (t.x || []).length,
                                     colour: t.marker ? t.marker.color : null})),
  shapes: ((el.layout || {}).shapes || []).map(s => ({type: s.type, y0: s.y0, x0: s.x0, x1: s.x1})),
  notes: ((el.layout || {}).annotations || []).map(a => a.text),
  svg: el.querySelectorAll('svg .scatterlayer .trace').length
}))"""


@pytest.fixture
def cluster(request: Any, monkeypatch: Any) -> Iterator[tuple[Any, AttachedPrometheus, Server]]:
    with running_kubesim(["prometheus-healthy"], speed=SPEED, seed=1) as sim:
        try:
            context = attached_prometheus(sim)
            prom = context.__enter__()
        except PrometheusUnavailable as error:
            pytest.fail(f"this test needs a real Prometheus: {error}", pytrace=False)
        try:
            # The server subprocess takes its environment from os.environ, so set the URL before it starts.
            monkeypatch.setenv("PROMETHEUS_URLS", f"sim={prom.url}")
            server: Server = request.getfixturevalue("server")
            watcher = WatcherThread(str(sim.kubeconfig), "sim")
            watcher.start()
            try:
                yield sim, prom, server
            finally:
                watcher.stop()
        finally:
            context.__exit__(None, None, None)


def _completed_run(timeout: float = 60.0) -> dict[str, Any]:
    """The step analysis run, once the watcher has published it Successful."""
    deadline = time.monotonic() + timeout
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        view = snapshot(KEY) or {}
        runs = [run for rev in view.get("revisions") or [] for run in rev.get("analysisRuns") or []]
        if any(run.get("status") in ("Successful", "Failed", "Error") for run in runs):
            return runs[0]
        time.sleep(0.3)
    raise AssertionError(f"the analysis of {KEY} did not complete within {timeout:g} s: {runs}")


def test_the_rollout_page_charts_the_analysis_and_survives_a_prometheus_outage(
    cluster: tuple[Any, AttachedPrometheus, Server], page: Any
) -> None:
    _, prom, server = cluster
    run = _completed_run()
    assert run["status"] == "Successful", run
    page.goto(f"{server.url}/rollouts/sim/prom-healthy/storefront/")
    page.wait_for_selector("#metrics-panel[data-state=ok]")
    page.wait_for_function(
        "() => document.querySelectorAll('#metrics-panel [data-chart] svg .scatterlayer .trace').length >= 8"
    )
    charts = {c["id"]: c for c in page.evaluate(CHARTS_JS)}
    run_name = run["name"]
    assert set(charts) == {
        f"analysis:{run_name}/error-rate",
        f"analysis:{run_name}/p95-latency",
        "panel:errorRate",
        "panel:latency",
    }
    for metric, threshold in (("error-rate", 0.05), ("p95-latency", 0.25)):
        chart = charts[f"analysis:{run_name}/{metric}"]
        traces = {t["name"]: t for t in chart["traces"]}
        assert traces["query"]["mode"] == "lines" and traces["query"]["n"] >= 3  # the query over time
        assert traces["measurement: Successful"]["n"] == 3  # every measurement, coloured by verdict
        assert traces["measurement: Successful"]["colour"] == "#12B76A"
        assert {"type": "line", "y0": threshold} in [
            {"type": s["type"], "y0": s["y0"]} for s in chart["shapes"]
        ]
        assert f"threshold <= {threshold}" in chart["notes"]
        window = next(s for s in chart["shapes"] if s["type"] == "rect")
        assert window["x0"] < window["x1"] and "step 1 analysis" in chart["notes"]
    for name in ("panel:errorRate", "panel:latency"):
        versions = {t["name"] for t in charts[name]["traces"] if t["n"]}
        assert versions == {"stable", "canary"}, charts[name]
    assert "Prometheus http://127.0.0.1" in (page.text_content("#metrics-state") or "")
    screenshot(page, "metrics")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#metrics-panel").screenshot(path=str(SHOTS / "metrics-panel.png"))

    prom.process.stop()
    page.wait_for_selector("#metrics-panel[data-state=unreachable]", timeout=15_000)
    banner = page.text_content("#metrics-unavailable") or ""
    assert f"Prometheus at {prom.url} is unreachable: connection refused" in banner
    assert "automated rollback cannot protect this release" in banner
    assert page.text_content("#metrics-state") == "Prometheus unreachable"
    assert not page.is_visible("#metrics-analyses") and not page.is_visible("#metrics-standard")
    # The rest of the page is untouched: live updates, the flow diagram and the other cards still work.
    assert page.locator("#live-status[data-state=live]").count() == 1
    assert page.locator("#flow [data-node=rollout]").count() == 1
    page.reload()
    page.wait_for_selector("#flow [data-node=rollout]")
    page.wait_for_selector("#metrics-panel[data-state=unreachable]")
    page.evaluate("window.scrollTo(0, 0)")  # a reload keeps the scroll; the sticky header would sit mid-shot
    screenshot(page, "metrics-unreachable")
