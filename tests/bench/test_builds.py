"""The view-build benchmark: a fleet mid-release, every part of a view present, a figure printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from dashboard.bench.builds import PARTS, mid_release_watcher


def test_every_rollout_of_the_fleet_is_mid_release_with_its_replicasets_pods_and_events() -> None:
    watcher, events = mid_release_watcher(4, namespaces=2)
    assert len(watcher.cache.rollouts()) == 4 and events > 0
    for uid in watcher.cache.rollouts():
        inputs = watcher.cache.inputs(uid)
        assert inputs is not None
        assert len(inputs.replicasets) == 2  # the stable one and the new release's
        assert inputs.pods and inputs.events


def test_the_command_prints_the_cpu_per_build_and_writes_it_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "builds.json"
    call_command("bench_builds", "--rollouts", "3", "--rounds", "2", "--json", str(out))
    printed = capsys.readouterr().out
    assert "cpu_ms_per_build" in printed and "action bar" in printed
    figures = json.loads(out.read_text())
    assert figures["rollouts"] == 3 and figures["cpu_ms_per_build"] > 0 and figures["cpu_ms_per_rebuild"] > 0
    # Where a build's time goes: every part was timed over the fleet.
    assert set(figures["parts_us"]) == {name for name, _ in PARTS}
    assert all(value > 0 for value in figures["parts_us"].values())


def test_a_fleet_out_of_range_is_refused_naming_the_option() -> None:
    with pytest.raises(CommandError, match="--rollouts"):
        call_command("bench_builds", "--rollouts", "0")
