"""Views of kubesim scenarios built the way the watcher builds them (not a test module).

``scenario_view(run, namespace, name)`` → the view document the watcher would publish at the run's time:
``RolloutInputs.view`` (the domain view plus ``availableActions``), the Argo CD reading and the findings
with the run's history.
"""

from __future__ import annotations

from typing import Any

from dashboard.domain.applications import gitops_for_rollout
from dashboard.kube.cache import RolloutInputs
from tests.domain.findings.kubesim_runs import CLUSTER, Run


def scenario_view(result: Run, namespace: str, name: str) -> dict[str, Any]:
    objects = result.objects(namespace, name)
    uid = objects.rollout["metadata"]["uid"]
    owned = [
        rs
        for rs in objects.replicasets
        if uid in [r.get("uid") for r in rs["metadata"].get("ownerReferences") or []]
    ]
    inputs = RolloutInputs(
        rollout=objects.rollout,
        replicasets=owned,
        pods=list(objects.pods),
        analysisruns=list(objects.analysisruns),
        applications=list(objects.applications),
    )
    view = inputs.view(now=result.now(), cluster=CLUSTER)
    gitops = gitops_for_rollout(inputs.applications, namespace, name)
    if gitops is not None:
        view["gitops"] = gitops
    view["findings"] = [f.to_dict() for f in result.findings(namespace, name)]
    return view
