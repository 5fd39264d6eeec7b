"""Per-cluster Prometheus addresses and panel queries from settings, with clear errors."""

from __future__ import annotations

import pytest

from dashboard.metrics.config import MetricsConfig, MetricsConfigError, parse_panel_queries, parse_urls


def test_it_reads_one_url_per_cluster_or_one_for_all() -> None:
    assert parse_urls("prod=http://p:9090/, staging=https://s") == {
        "prod": "http://p:9090",
        "staging": "https://s",
    }
    config = MetricsConfig(urls=parse_urls("http://any:9090"))
    assert config.url_for("whatever") == "http://any:9090"


def test_bad_values_name_the_entry() -> None:
    with pytest.raises(MetricsConfigError, match=r"PROMETHEUS_URLS\[prod\]: 'ftp://x' is not an http"):
        parse_urls("prod=ftp://x")
    with pytest.raises(MetricsConfigError, match="unknown panel"):
        parse_panel_queries({"prod": {"cpu": "x"}})


def test_panel_queries_are_per_cluster_with_placeholders() -> None:
    config = MetricsConfig(panel_queries={"prod": {"latency": 'lat{ns="$namespace",ro="$rollout"}'}})
    queries = config.panel_for("prod", "shop", "cart")
    assert queries["latency"] == 'lat{ns="shop",ro="cart"}'
    assert 'namespace="shop",rollout="cart"' in queries["errorRate"]
