"""``manage.py inspect`` prints Canaries found in dumps: the constructed and Argo CD's third-party objects."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

NOW = "2026-07-22T00:00:00Z"


def _inspect(*args: str) -> str:
    out = io.StringIO()
    call_command("inspect", *args, "--now", NOW, stdout=out)
    return out.getvalue()


def test_every_constructed_canary_renders_with_its_phase_and_notes(shared_fixtures: Path) -> None:
    folder = shared_fixtures / "flagger" / "constructed"
    for path in sorted(folder.glob("canary-*.yaml")):
        text = _inspect(str(path), str(folder / "events-podinfo-failed-threshold.yaml"))
        phase = path.read_text().split("phase: ")[1].split()[0]
        assert "Controller:      flagger (Canary flagger.app/v1beta1)" in text, path.name
        assert f"Phase:           {phase}" in text, path.name
        assert "Gates:" in text


def test_the_threshold_failure_shows_its_events_and_the_real_failed_checks(shared_fixtures: Path) -> None:
    folder = shared_fixtures / "flagger" / "constructed"

    text = _inspect(
        str(folder / "canary-failed-threshold.yaml"), str(folder / "events-podinfo-failed-threshold.yaml")
    )

    assert "⚠ status.failedChecks: 0 → 5" in text
    assert "Rolling back podinfo.test failed checks threshold reached 5" in text


def test_argo_cds_canaries_render_and_json_is_the_view(shared_fixtures: Path) -> None:
    folder = (
        shared_fixtures / "flagger/third_party/argoproj/argo-cd/resource_customizations/flagger.app/Canary"
    )

    documents = json.loads(_inspect(str(folder / "testdata"), "--format", "json"))

    by_phase = {d["phase"]: d for d in documents}
    assert set(by_phase) >= {"Initialized", "Progressing", "Promoting", "Finalising", "Succeeded", "Failed"}
    assert by_phase["Progressing"]["setWeight"] == 10
    assert by_phase["Failed"]["status"] == "Degraded"
    assert all(d["controller"] == "flagger" for d in documents)
    text = _inspect(str(folder / "testdata" / "promoting.yaml"))
    assert (
        "Argo CD health:  Progressing (Promoting --- Canary analysis completed, starting primary rolling "
        "update.)" in text
    )


def test_a_name_selects_canaries_too(shared_fixtures: Path) -> None:
    folder = shared_fixtures / "flagger" / "constructed"

    document = json.loads(_inspect(str(folder), "--rollout", "podinfo", "--format", "json"))

    assert len(document) == 7  # the six constructed canaries and _spec-common.yaml (no status)


@pytest.mark.parametrize("example", ["istio-canary.yaml", "linkerd-canary-steps.yaml"])
def test_upstream_examples_without_status_still_render(shared_fixtures: Path, example: str) -> None:
    text = _inspect(str(shared_fixtures / "flagger" / "artifacts" / "examples" / example))

    assert "Phase:           (none)" in text
