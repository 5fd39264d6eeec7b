"""``bench_ab``: two watchers through one churn, their CPU side by side (here the tree against itself)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from dashboard.bench.ab import run_ab
from dashboard.bench.processes import ROOT


def test_both_watchers_watch_one_churn_and_their_cpu_is_compared() -> None:
    (done,) = run_ab(
        ROOT,
        rollouts=12,
        namespaces=2,
        churn_rate=2.0,
        seconds=3.0,
        rounds=1,
        warmup=0.5,
        database_url=os.environ["DATABASE_URL"],
        redis_url=settings.REDIS_URL,
        log=lambda _: None,
    )
    assert done.writes == 6
    assert all(cpu > 0 for cpu in done.cpu_seconds)
    assert all(cores >= 0 for cores in done.idle_cores)  # read over the warmup, before the churn
    assert math.isfinite(done.ratio) and done.ratio > 0
    assert set(done.as_dict()) == {
        "writes",
        "seconds",
        "reference_cores",
        "this_tree_cores",
        "reference_idle_cores",
        "this_tree_idle_cores",
        "ratio",
    }


def test_a_reference_that_is_not_a_checkout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="is not a checkout of rollouts-ui"):
        call_command("bench_ab", "--reference", str(tmp_path), "--rounds", "1")


def test_bounds_are_checked_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="--rounds must be between 1 and 20, not 0"):
        call_command("bench_ab", "--reference", str(tmp_path), "--rounds", "0")
