"""Every value upstream's Go tests assert on the fixture sets (EXPECTED.json) holds for our views."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from dashboard.domain import RolloutView, rollout_views
from dashboard.domain.experiments import experiment_view
from dashboard.domain.objects import rfc3339
from tests.conftest import SHARED_FIXTURES
from tests.domain.upstream_fixtures import NOW, expected, load_set


def _view(fixtures: Path, entry: dict[str, Any], objects: list[dict[str, Any]] | None = None) -> RolloutView:
    objects = objects if objects is not None else load_set(fixtures, entry["fixture_set"])
    rollouts = [o for o in objects if o["kind"] == "Rollout"]
    name = rollouts[entry["rollouts_index"]]["metadata"]["name"]
    return next(v for v in rollout_views(objects, now=NOW) if v.name == name)


def _status_line(view: RolloutView, watch: bool) -> str:
    """`kubectl argo rollouts status`: without watch, settled states print no message."""
    if not view.message or (not watch and view.status in ("Healthy", "Degraded")):
        return view.status + "\n"
    return f"{view.status} - {view.message}\n"


def _images(view: RolloutView) -> list[dict[str, Any]]:
    return [image.to_dict() for image in view.images]


def _cases() -> list[Any]:
    cases = []
    for entry in expected(SHARED_FIXTURES)["rollouts"]:
        for index, assertion in enumerate(entry["asserted"]):
            test_name = assertion["test"].split(":")[-1]
            cases.append(pytest.param(entry, assertion, id=f"{entry['name']}-{index}-{test_name}"))
    return cases


@pytest.mark.parametrize(("entry", "assertion"), _cases())
def test_every_asserted_upstream_value_holds(
    shared_fixtures: Path, entry: dict[str, Any], assertion: dict[str, Any]
) -> None:
    what, want = assertion["what"], assertion["expected"]
    view = _view(shared_fixtures, entry)
    if what == "len(Revisions(roInfo))":
        assert len(view.revisions) == want
    elif what == "Images(roInfo)":
        assert _images(view) == want
    elif what.startswith("roInfo.ObjectMeta"):
        assert (view.name, view.annotations, view.labels, view.generation) == (
            want["name"],
            want["annotations"],
            want["labels"],
            want["generation"],
        )
    elif what.startswith("len(ReplicaSetsByRevision"):
        by_revision = {str(r.revision): len(r.replica_sets) for r in view.revisions}
        assert {rev: by_revision[rev] for rev in want} == want
    elif what == "counts by revision":
        revisions = {str(r.revision): r for r in view.revisions}
        assert {k: len(revisions[k].replica_sets) for k in want["ReplicaSetsByRevision"]} == want[
            "ReplicaSetsByRevision"
        ]
        assert {k: len(revisions[k].experiments) for k in want["ExperimentsByRevision"]} == want[
            "ExperimentsByRevision"
        ]
        assert {k: len(revisions[k].analysis_runs) for k in want["AnalysisRunsByRevision"]} == want[
            "AnalysisRunsByRevision"
        ]
    elif what.startswith("roInfo.ReplicaSets[0].ScaleDownDeadline"):
        first = view.replica_sets[0]
        assert (first.scale_down_deadline, first.scale_down_delay) == (
            want["scaleDownDeadline"],
            want["scaleDownDelay"],
        )
    elif what.startswith("after setting annotation scale-down-deadline"):
        objects = load_set(shared_fixtures, entry["fixture_set"])
        active = next(
            o
            for o in objects
            if o["kind"] == "ReplicaSet" and o["metadata"]["uid"] == want["replicaSets_1_uid"]
        )
        deadline = rfc3339((NOW + timedelta(hours=4)).replace(microsecond=0))
        active["metadata"].setdefault("annotations", {})["scale-down-deadline"] = deadline
        mutated = _view(shared_fixtures, entry, objects)
        second = mutated.replica_sets[1]
        assert (second.uid, second.name, second.scale_down_deadline, second.scale_down_delay) == (
            want["replicaSets_1_uid"],
            want["replicaSets_1_name"],
            deadline,
            want["scaleDownDelay"],
        )
    elif what.startswith("ActualWeight == status.canary.weights"):
        assert str(view.actual_weight) == want
        assert view.weight_source == "traffic-router"
    elif what.startswith("ActualWeight == SetWeight"):
        assert view.actual_weight == view.set_weight
    elif what == "roInfo.Status / roInfo.Message":
        assert (view.status, view.message) == (want["status"], want["message"])
    elif what.startswith("`kubectl argo rollouts status"):
        assert _status_line(view, watch="--watch=false" not in what) == want["stdout"]
        if want["returns"] == "error" and view.status == "Degraded":
            assert (
                want["stderr"] == f"Error: The rollout is in a degraded state with message: {view.message}\n"
            )
    elif what.startswith("`undo"):
        # The patch itself is the action service's; the model must pick the right ReplicaSet.
        if "template_from_rs" in want:
            target = want["template_from_rs"]
            rs_revisions = sorted({rs.revision for rs in view.replica_sets}, reverse=True)
            to_revision = re.search(r"--to-revision=(\d+)", what)
            if to_revision:
                wanted = int(to_revision.group(1))
                assert [rs.name for rs in view.replica_sets if rs.revision == wanted] == [target]
            else:
                assert [rs.name for rs in view.replica_sets if rs.revision == rs_revisions[1]] == [target]
        elif "unable to find" in want.get("stderr", ""):
            assert not [rs for rs in view.replica_sets if rs.revision == 1]
        elif "skipped rollback" in want.get("stdout", ""):
            assert view.revision == 31 and any(rs.revision == 31 for rs in view.replica_sets)
        elif "patched_object" in want:
            kind, name = want["patched_object"].split("/")
            objects = load_set(shared_fixtures, entry["fixture_set"])
            rollout = next(
                o for o in objects if o["metadata"]["name"] == entry["name"] and o["kind"] == "Rollout"
            )
            assert rollout["spec"]["workloadRef"]["kind"] == kind
            assert rollout["spec"]["workloadRef"]["name"] == name
    else:
        pytest.fail(f"no check written for {what!r}")


def test_the_experiment_images_have_no_tags_without_a_template_annotation(shared_fixtures: Path) -> None:
    for entry in expected(shared_fixtures)["experiments"]:
        objects = load_set(shared_fixtures, entry["fixture_set"])
        experiment = next(o for o in objects if o["kind"] == "Experiment")
        view = experiment_view(
            experiment,
            [o for o in objects if o["kind"] == "ReplicaSet"],
            [o for o in objects if o["kind"] == "AnalysisRun"],
            [o for o in objects if o["kind"] == "Pod"],
            NOW,
        )
        for assertion in entry["asserted"]:
            if assertion["what"].startswith("ExperimentImages"):
                assert [image.to_dict() for image in view.images] == assertion["expected"]


def test_the_rollout_names_match_upstream_completion(shared_fixtures: Path) -> None:
    completion = expected(shared_fixtures)["completion"]
    names = sorted(v.name for v in rollout_views(load_set(shared_fixtures, "canary"), now=NOW))

    assert names == sorted(completion["RolloutNameCompletion_canary_set"])


def test_the_experiment_step_set_shows_its_experiment_analysis_run(shared_fixtures: Path) -> None:
    view = rollout_views(load_set(shared_fixtures, "experiment-step"), now=NOW)[0]
    run_names = [ar.name for exp in view.experiments for ar in exp.analysis_runs]

    assert (
        run_names == expected(shared_fixtures)["completion"]["AnalysisRunNameCompletion_experiment_step_set"]
    )
