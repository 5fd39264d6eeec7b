"""The demo's live metrics: a Prometheus-backed scenario in the default mix, a real Prometheus when the
binary exists (wired to the demo cluster's PROMETHEUS_URLS), and a plain message when it does not."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from dashboard.demo import CLUSTER, DEFAULT_SCENARIOS, demo_prometheus, plan_scenarios, scrape_interval
from kubesim.testing import running_kubesim


def test_the_default_mix_has_a_prometheus_backed_scenario() -> None:
    assert "prometheus-healthy" in DEFAULT_SCENARIOS


def test_without_prometheus_the_default_mix_leaves_those_scenarios_out_and_says_why() -> None:
    scenarios, note = plan_scenarios(DEFAULT_SCENARIOS, explicit=False, have_prometheus=False)
    assert "prometheus-healthy" not in scenarios and "healthy-canary" in scenarios
    assert note.startswith(
        "prometheus is not installed (make demo installs it only as root; install it: sudo "
    )
    assert (
        "apt-get install -y --no-install-recommends prometheus), so there are no live analysis charts" in note
    )
    assert note.endswith(
        "leaving out prometheus-healthy, prometheus-error-spike, prometheus-latency-regression, "
        "prometheus-no-traffic."
    )
    assert "\n" not in note


def test_scenarios_asked_for_by_name_are_kept_with_a_warning() -> None:
    scenarios, note = plan_scenarios(["prometheus-healthy"], explicit=True, have_prometheus=False)
    assert scenarios == ["prometheus-healthy"]
    assert note.endswith("the analyses of prometheus-healthy will Error.")
    unaffected = plan_scenarios(["healthy-canary"], explicit=True, have_prometheus=False)
    assert unaffected == (["healthy-canary"], "")
    assert plan_scenarios(DEFAULT_SCENARIOS, explicit=False, have_prometheus=True)[1] == ""


def test_faster_demos_scrape_more_often() -> None:
    assert [scrape_interval(s) for s in (0.5, 1, 2, 10)] == [1.0, 1.0, 0.5, 0.25]


@pytest.mark.prometheus
def test_the_demo_prometheus_scrapes_kubesim_and_is_the_demo_clusters_url(settings: Any) -> None:
    settings.PROMETHEUS_URLS = "prod=http://prometheus.prod:9090"
    said: list[str] = []
    with (
        running_kubesim(["prometheus-healthy"]) as sim,
        demo_prometheus(sim, ["prometheus-healthy"], 1.0, said.append) as url,
    ):
        assert url is not None and url.startswith("http://127.0.0.1:")
        urls = settings.PROMETHEUS_URLS
        assert urls == f"prod=http://prometheus.prod:9090,{CLUSTER}={url}"
        (message,) = said
        assert message.startswith(f"Prometheus {url} is scraping the simulated pods")
        with urllib.request.urlopen(f"{url}/api/v1/status/config", timeout=5) as response:
            config = json.loads(response.read())["data"]["yaml"]  # targets appear on the next 5 s SD tick
        assert "job_name: kubesim" in config and "scrape_interval: 1s" in config
    assert settings.PROMETHEUS_URLS == "prod=http://prometheus.prod:9090"
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/-/ready", timeout=2)


def test_no_prometheus_is_started_for_a_mix_without_traffic_scenarios() -> None:
    said: list[str] = []
    with (
        running_kubesim(["healthy-canary"]) as sim,
        demo_prometheus(sim, ["healthy-canary"], 1.0, said.append) as url,
    ):
        assert url is None
    assert said == []
