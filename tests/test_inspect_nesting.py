"""`manage.py inspect`: every nesting level of the tree as cmd/get's printer draws it (get_rollout.go
PrintRevision / PrintReplicaSetInfo / PrintAnalysisRunInfo / PrintJob and get_experiment.go
PrintExperimentInfo, each child with ``getPrefixes(isLast, subpfx)``).

Upstream has no golden file for an Experiment whose AnalysisRun has Jobs, so the expected trees here are
drawn from those functions for upstream's ``experiment-step`` fixture set (its Job comes from the run's
measurement metadata, as info/analysisrun_info.go reads it). Kept apart from test_inspect_command.py,
which compares against the golden files and checks bad input.
"""

from __future__ import annotations

import copy
from io import StringIO
from pathlib import Path
from typing import Any

import yaml
from django.core.management import call_command

from dashboard.domain.objects import rfc3339
from tests.domain.upstream_fixtures import NOW, load_set

JOB = "4e2d824d-01af-11ea-b38c-42010aa80083.stress.1"


def _tree(tmp_path: Path, objects: list[dict[str, Any]], *args: str) -> list[tuple[str, ...]]:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(objects, allow_unicode=True))
    out = StringIO()
    call_command("inspect", str(path), *args, "--now", rfc3339(NOW) or "", stdout=out)
    lines = out.getvalue().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("NAME"))
    # name (with its tree prefix), kind, status — cut at the header's columns — show the nesting
    kind_at, status_at, age_at = (lines[start].index(h) for h in ("KIND", "STATUS", "AGE"))
    return [
        tuple(
            c
            for c in (
                line[:kind_at].rstrip(),
                line[kind_at:status_at].strip(),
                line[status_at:age_at].strip(),
            )
            if c
        )
        for line in lines[start + 1 :]
        if line.strip()
    ]


def test_a_job_of_an_experiments_analysis_run_nests_under_that_run(
    tmp_path: Path, shared_fixtures: Path
) -> None:
    tree = _tree(tmp_path, load_set(shared_fixtures, "experiment-step"), "--rollout", "canary-demo")
    assert tree[:8] == [
        ("⟳ canary-demo", "Rollout", "◌ Progressing"),
        ("├──# revision:2",),
        ("│  ├──⧉ canary-demo-645d5dbc4c", "ReplicaSet", "• ScaledDown"),
        ("│  └──Σ canary-demo-645d5dbc4c-2-0", "Experiment", "◌ Running"),
        ("│     ├──⧉ canary-demo-645d5dbc4c-2-0-canary-preview", "ReplicaSet", "✔ Healthy"),
        ("│     │  └──□ canary-demo-645d5dbc4c-2-0-canary-preview-zmmvz", "Pod", "✔ Running"),
        ("│     └──α canary-demo-645d5dbc4c-2-0-stress-test", "AnalysisRun", "◌ Running"),
        (f"│        └──⊞ {JOB}", "Job", "◌ Running"),
    ]
    assert tree[8:10] == [("└──# revision:1",), ("   └──⧉ canary-demo-877894d5b", "ReplicaSet", "✔ Healthy")]


def test_get_experiment_nests_the_job_under_its_run(tmp_path: Path, shared_fixtures: Path) -> None:
    tree = _tree(
        tmp_path, load_set(shared_fixtures, "experiment-step"), "--experiment", "canary-demo-645d5dbc4c-2-0"
    )
    assert tree == [
        ("Σ canary-demo-645d5dbc4c-2-0", "Experiment", "◌ Running"),
        ("├──⧉ canary-demo-645d5dbc4c-2-0-canary-preview", "ReplicaSet", "✔ Healthy"),
        ("│  └──□ canary-demo-645d5dbc4c-2-0-canary-preview-zmmvz", "Pod", "✔ Running"),
        ("└──α canary-demo-645d5dbc4c-2-0-stress-test", "AnalysisRun", "◌ Running"),
        (f"   └──⊞ {JOB}", "Job", "◌ Running"),
    ]


def test_the_jobs_of_a_run_that_is_not_the_last_child_keep_the_vertical_line(
    tmp_path: Path, shared_fixtures: Path
) -> None:
    objects = load_set(shared_fixtures, "experiment-step")
    run = next(o for o in objects if o["kind"] == "AnalysisRun")
    second = copy.deepcopy(run)
    second["metadata"]["name"] += "-2"
    second["metadata"]["uid"] = "second-run"
    for result in second["status"].get("metricResults") or []:
        for measurement in result.get("measurements") or []:
            measurement.setdefault("metadata", {})["job-name"] = "second.stress.1"
    # The Experiment lists its runs in status.analysisRuns; both are owned by it.
    experiment = next(o for o in objects if o["kind"] == "Experiment")
    runs = experiment["status"].get("analysisRuns") or []
    if runs:
        extra = copy.deepcopy(runs[0])
        extra["analysisRun"] = second["metadata"]["name"]
        extra["name"] = str(extra.get("name", "stress-test")) + "-2"
        runs.append(extra)
    tree = _tree(tmp_path, [*objects, second], "--experiment", "canary-demo-645d5dbc4c-2-0")
    names = [row[0] for row in tree]
    # getAnalysisRunInfo's order: revision, creation time, then name descending
    assert names[3:] == [
        "├──α canary-demo-645d5dbc4c-2-0-stress-test-2",
        "│  └──⊞ second.stress.1",
        "└──α canary-demo-645d5dbc4c-2-0-stress-test",
        f"   └──⊞ {JOB}",
    ]


def test_an_experiment_step_run_in_kubesim_prints_its_jobs_under_the_experiments_run(
    shared_fixtures: Path,
) -> None:
    """The whole chain: kubesim's experiment step → Experiment → AnalysisRun → Jobs, printed as upstream."""
    from dashboard.domain.render_text import render_rollout
    from dashboard.domain.rollout_view import rollout_views
    from tests.kubesim.test_examples_progress import deployed

    sim, store, _ = deployed(shared_fixtures, "rollout-experiment-step.yaml")
    sim.advance(30)
    kinds = {
        "argoproj.io/rollouts": "Rollout",
        "apps/replicasets": "ReplicaSet",
        "pods": "Pod",
        "argoproj.io/analysisruns": "AnalysisRun",
        "argoproj.io/experiments": "Experiment",
    }
    objects = [{**o, "kind": kind} for resource, kind in kinds.items() for o in store.list(resource)[0]]
    (view,) = rollout_views(objects, now=sim.clock.now())
    lines = render_rollout(view).splitlines()
    experiment = next(i for i, line in enumerate(lines) if "Experiment" in line)
    assert lines[experiment].startswith("│  └──Σ ")
    run = next(i for i, line in enumerate(lines) if "AnalysisRun" in line)
    assert lines[run].startswith("│     └──α ") and lines[run].split()[2].endswith("-random-fail")
    job_lines = [line for line in lines[run + 1 :] if " Job " in line]
    assert job_lines and all(line.startswith(("│        ├──⊞ ", "│        └──⊞ ")) for line in job_lines)
