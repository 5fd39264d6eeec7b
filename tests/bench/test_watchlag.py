"""The watcher's share of write → bus, read from a real watcher's /metrics endpoint."""

from __future__ import annotations

import pytest

from dashboard.bench import watchlag
from dashboard.observability.metrics import WATCH_LAG, start_metrics_server
from kubesim.testing import free_port


def test_it_reads_the_rollout_lag_from_the_metrics_endpoint_and_sums_the_change() -> None:
    port = free_port()
    server = start_metrics_server(port, "127.0.0.1")
    try:
        cluster = f"lag-{port}"
        before = watchlag.scrape([port])
        for seconds in (0.02, 0.03, 0.2, 0.4, 2.0):
            WATCH_LAG.labels(cluster=cluster, kind="Rollout").observe(seconds)
        WATCH_LAG.labels(cluster=cluster, kind="ReplicaSet").observe(5.0)  # not a Rollout change
        figures = watchlag.summary(before, watchlag.scrape([port]))
    finally:
        server.shutdown()
    assert figures["publishes"] == 5
    assert figures["share_over"] == {"100ms": 0.6, "250ms": 0.4, "500ms": 0.2, "1000ms": 0.2}


def test_an_unreachable_watcher_is_an_error_not_a_zero() -> None:
    with pytest.raises(OSError):
        watchlag.scrape([free_port()], timeout=1.0)


def test_write_to_bus_delays_are_shared_out_over_the_same_thresholds() -> None:
    shares = watchlag.delay_shares([50.0, 150.0, 300.0, 600.0])
    assert shares == {"100ms": 0.75, "250ms": 0.5, "500ms": 0.25, "1000ms": 0.0}
    assert watchlag.delay_shares([]) == dict.fromkeys(shares)
