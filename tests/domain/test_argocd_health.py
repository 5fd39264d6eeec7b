"""Argo CD's health for Rollouts, AnalysisRuns and Experiments, case by case from its own tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from dashboard.domain.argocd_health import analysis_run_health, experiment_health, rollout_health
from tests.conftest import SHARED_FIXTURES

HEALTH = {"Rollout": rollout_health, "AnalysisRun": analysis_run_health, "Experiment": experiment_health}


def _cases() -> list[Any]:
    table = json.loads((SHARED_FIXTURES / "argo-cd" / "health_cases.json").read_text())
    return [
        pytest.param(kind, case, id=f"{kind}-{Path(case['inputPath']).stem}")
        for kind, cases in table.items()
        for case in cases
    ]


@pytest.mark.parametrize(("kind", "case"), _cases())
def test_every_argocd_health_case_matches(shared_fixtures: Path, kind: str, case: dict[str, str]) -> None:
    obj = yaml.safe_load((shared_fixtures / "argo-cd" / case["inputPath"]).read_text())

    assert HEALTH[kind](obj) == (case["status"], case["message"])


def test_a_paused_phase_reads_as_suspended_with_the_rollout_message() -> None:
    rollout = {
        "metadata": {"generation": 3},
        "spec": {"strategy": {"canary": {}}},
        "status": {"observedGeneration": "3", "phase": "Paused", "message": "CanaryPauseStep"},
    }

    assert rollout_health(rollout) == ("Suspended", "CanaryPauseStep")


def test_an_unknown_phase_is_an_invalid_health_status() -> None:
    rollout = {
        "metadata": {"generation": 1},
        "spec": {},
        "status": {"observedGeneration": "1", "phase": "Weird"},
    }

    assert rollout_health(rollout) == ("Unknown", "Lua returned an invalid health status")


def test_legacy_rollout_without_conditions_is_a_script_error_reported_unknown() -> None:
    rollout = {"metadata": {"generation": 1}, "spec": {}, "status": {"observedGeneration": "1"}}

    status, message = rollout_health(rollout)

    assert status == "Unknown"
    assert "ipairs" in message


def test_a_hex_observed_generation_is_a_number_to_lua() -> None:
    rollout = {"metadata": {"generation": 17}, "status": {"observedGeneration": "0x10", "phase": "Healthy"}}

    assert rollout_health(rollout) == ("Progressing", "Waiting for rollout spec update to be observed")


def test_an_analysis_run_in_an_unknown_phase_has_no_health() -> None:
    assert analysis_run_health({"status": {"phase": "Bogus"}}) == ("", "")
