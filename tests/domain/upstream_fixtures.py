"""Loading the upstream Argo Rollouts fixture sets the way upstream's own tests do.

Upstream's ``testdata.discoverObjects`` decodes only Rollout, ReplicaSet, Deployment, Pod,
Experiment and AnalysisRun documents, rewrites every ``metadata.creationTimestamp`` to now−7d
(truncated to seconds) and, for AnalysisRuns, the start/finish times of the first metric result's
measurements. That rewrite is test set-up, so it lives here and never in product code.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from dashboard.domain.objects import rfc3339
from dashboard.kube.loading import load_paths

TESTDATA = "argo-rollouts/pkg/kubectl-argo-rollouts/info/testdata"
UPSTREAM_KINDS = ("Rollout", "ReplicaSet", "Deployment", "Pod", "Experiment", "AnalysisRun")
# A "now" with a fractional second, like the Go tests' clock running slightly after set-up.
NOW = datetime(2026, 11, 29, 10, 0, 0, 400_000, tzinfo=UTC)


@cache
def _raw_set(fixtures: Path, name: str) -> tuple[dict[str, Any], ...]:
    result = load_paths([fixtures / TESTDATA / name])
    assert not result.errors, result.errors
    return tuple(dict(item.object) for item in result.objects)


def load_set(fixtures: Path, name: str, now: datetime = NOW) -> list[dict[str, Any]]:
    """The objects of one fixture set after upstream's loader rewrite, in file-name order."""
    week_ago = rfc3339((now - timedelta(days=7)).replace(microsecond=0))
    objects = []
    for raw in _raw_set(fixtures, name):
        if raw.get("kind") not in UPSTREAM_KINDS:
            continue
        obj = copy.deepcopy(raw)
        obj.setdefault("metadata", {})["creationTimestamp"] = week_ago
        if obj["kind"] == "AnalysisRun":
            for measurement in obj["status"]["metricResults"][0].get("measurements", []):
                measurement["startedAt"] = week_ago
                measurement["finishedAt"] = week_ago
        objects.append(obj)
    return objects


def expected(fixtures: Path) -> dict[str, Any]:
    return json.loads((fixtures / "argo-rollouts" / "EXPECTED.json").read_text())


def golden_text(fixtures: Path, golden_file: str) -> str:
    return (fixtures / "argo-rollouts" / golden_file).read_text()


def strip_trailing(text: str) -> str:
    return "\n".join(line.rstrip(" ") for line in text.splitlines())
