"""The watcher's cold start as ``bench_watch --cold-start`` measures it: a small fleet end to end."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from dashboard.bench.cold import run_cold_start


def test_a_small_fleets_cold_start_is_timed_and_the_watchers_memory_read() -> None:
    cold = run_cold_start(rollouts=3, redis_url=settings.REDIS_URL, settle=0.5, log=lambda _: None)
    figures = cold.as_dict()
    assert figures["rollouts"] == 3
    assert 0 < figures["initial_list_seconds"] <= figures["cold_start_seconds"]
    assert figures["cold_start_cpu_seconds"] > 0
    assert 0 < figures["watcher_settled_rss_mb"] <= figures["watcher_peak_rss_mb"]
    # Then restarted on the same bus with nothing changed: every view kept, the bus still the truth.
    assert figures["restart_views_kept"] == 3 and figures["restart_views_built"] == 0
    assert figures["restart_rows_differing_from_the_simulator"] == 0
    assert figures["restart_seconds"] > 0
    # The watcher's own lines about its handoff were read: it handed off every watch and resumed them all.
    assert figures["restart_handoff_watches"] == figures["restart_handoff_resumed_watches"] > 0


def test_a_kubeconfig_is_only_for_the_cold_start() -> None:
    with pytest.raises(CommandError, match="--kubeconfig is only for --cold-start"):
        call_command("bench_watch", "--kubeconfig", "/nonexistent")
