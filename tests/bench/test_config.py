"""The bench's layouts: how many simulated clusters each runs; clear errors for settings that misfit."""

from __future__ import annotations

import pytest

from dashboard.bench.processes import BenchError
from dashboard.bench.run import BenchConfig


def test_the_clusters_layout_runs_as_many_clusters_as_asked_and_two_clusters_is_two() -> None:
    assert BenchConfig(layout="clusters", clusters=5).cluster_count() == 5
    assert BenchConfig(layout="clusters").cluster_count() == 2
    assert BenchConfig(layout="two-clusters").cluster_count() == 2
    assert BenchConfig(layout="single").cluster_count() == BenchConfig(layout="failover").cluster_count() == 1


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"layout": "single", "clusters": 3}, "--clusters is for --layout clusters"),
        ({"layout": "two-clusters", "clusters": 3}, "--layout two-clusters has 2 clusters"),
        ({"layout": "clusters", "clusters": 27}, "--clusters must be between 1 and 26"),
        ({"layout": "clusters", "clusters": 5, "rollouts": 4, "namespaces": 1}, "5 clusters need at least 5"),
        ({"history_releases": -1}, "--history-releases must be 0 or more"),
    ],
)
def test_settings_that_do_not_fit_are_refused_with_the_reason(
    settings: dict[str, object], message: str
) -> None:
    with pytest.raises(BenchError, match=message):
        BenchConfig(**settings).validate()  # type: ignore[arg-type]
