"""`get rollout` / `get experiment` text must equal upstream's golden files (trailing spaces aside)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from dashboard.domain import rollout_views
from dashboard.domain.experiments import experiment_view
from dashboard.domain.objects import dig_str, rfc3339
from dashboard.domain.render_text import render_experiment, render_rollout, tabulate
from tests.conftest import SHARED_FIXTURES
from tests.domain.upstream_fixtures import NOW, expected, golden_text, load_set, strip_trailing


def _rollout_goldens() -> list[Any]:
    cases = []
    for entry in expected(SHARED_FIXTURES)["rollouts"]:
        for golden in entry["golden"]:
            cases.append(
                pytest.param(entry, golden, id=Path(golden["golden_file"]).stem),
            )
    return cases


def _apply_scale_down_mutation(objects: list[dict[str, Any]]) -> None:
    """TestGetBlueGreenRolloutScaleDownDelay: ReplicaSets[2] gets a deadline 4h out and loses its hash."""
    replica_sets = [obj for obj in objects if obj["kind"] == "ReplicaSet"]
    target = replica_sets[2]
    deadline = rfc3339((NOW + timedelta(hours=4)).replace(microsecond=0))
    target["metadata"].setdefault("annotations", {})["scale-down-deadline"] = deadline
    del target["metadata"]["labels"]["rollouts-pod-template-hash"]


@pytest.mark.parametrize(("entry", "golden"), _rollout_goldens())
def test_it_reproduces_every_get_rollout_golden(
    shared_fixtures: Path, entry: dict[str, Any], golden: dict[str, Any]
) -> None:
    objects = load_set(shared_fixtures, entry["fixture_set"])
    if "mutation" in golden:
        _apply_scale_down_mutation(objects)
    rollouts = [obj for obj in objects if obj["kind"] == "Rollout"]
    name = dig_str(rollouts[entry["rollouts_index"]], "metadata", "name")
    views = [view for view in rollout_views(objects, now=NOW) if view.name == name]

    text = render_rollout(views[0])

    assert strip_trailing(text) == strip_trailing(golden_text(shared_fixtures, golden["golden_file"]))


def test_it_reproduces_the_get_experiment_golden(shared_fixtures: Path) -> None:
    for entry in expected(shared_fixtures)["experiments"]:
        objects = load_set(shared_fixtures, entry["fixture_set"])
        experiment = next(
            o for o in objects if o["kind"] == "Experiment" and o["metadata"]["name"] == entry["name"]
        )
        of_kind = {
            kind: [o for o in objects if o["kind"] == kind] for kind in ("ReplicaSet", "AnalysisRun", "Pod")
        }
        view = experiment_view(experiment, of_kind["ReplicaSet"], of_kind["AnalysisRun"], of_kind["Pod"], NOW)

        for golden in entry["golden"]:
            assert strip_trailing(render_experiment(view)) == strip_trailing(
                golden_text(shared_fixtures, golden["golden_file"])
            )


def test_it_pads_columns_by_runes_like_go_tabwriter() -> None:
    rows = [("NAME", "KIND", "STATUS", "AGE", "INFO"), ("├──⧉ ab", "RS", "✔ Healthy", "7d", "stable")]

    assert tabulate(rows).splitlines() == [
        "NAME     KIND  STATUS     AGE  INFO",
        "├──⧉ ab  RS    ✔ Healthy  7d   stable",
    ]


def test_it_keeps_trailing_padding_on_rows_with_an_empty_last_cell() -> None:
    rows = [("A", "B", "C", "D", ""), ("longer", "", " ", "", "")]

    assert tabulate(rows) == "A       B  C  D  \n" + "longer" + " " * 11 + "\n"
