"""Argo CD's health for a Canary: every case of its own test table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dashboard.domain.flagger import canary_health
from tests.conftest import SHARED_FIXTURES

CANARY = SHARED_FIXTURES / "flagger/third_party/argoproj/argo-cd/resource_customizations/flagger.app/Canary"


def _cases() -> list[Any]:
    table = yaml.safe_load((CANARY / "health_test.yaml").read_text())["tests"]
    return [pytest.param(case, id=Path(case["inputPath"]).stem) for case in table]


@pytest.mark.parametrize("case", _cases())
def test_every_argocd_canary_health_case_matches(case: dict[str, Any]) -> None:
    obj = yaml.safe_load((CANARY / case["inputPath"]).read_text())

    assert canary_health(obj) == (case["healthStatus"]["status"], case["healthStatus"]["message"])


def test_no_status_is_unknown() -> None:
    assert canary_health({"metadata": {}}) == ("Unknown", "No status")


def test_a_status_without_weight_is_a_script_error_reported_unknown() -> None:
    status, message = canary_health({"status": {"phase": "Progressing", "conditions": []}})

    assert status == "Unknown" and "Canary health check" in message
