"""pipeline-red-rollout-healthy and the commit of a revision from the Application's history."""

from __future__ import annotations

from dashboard.domain.findings import RolloutObjects, detect_findings
from tests.domain.findings.builders import T0, UID, at, rollout

SHA = "9a2c7e5f00112233445566778899aabbccddeeff"


def objects() -> RolloutObjects:
    rs = {
        "kind": "ReplicaSet",
        "metadata": {
            "name": "checkout-aaa",
            "namespace": "shop",
            "uid": "rs",
            "labels": {"rollouts-pod-template-hash": "aaa"},
            "annotations": {"rollout.argoproj.io/revision": "2"},
            "ownerReferences": [{"uid": UID}],
            "creationTimestamp": at(31),
        },
        "spec": {"replicas": 4, "template": {"spec": {"containers": [{"name": "c", "image": "x:2"}]}}},
    }
    app = {
        "kind": "Application",
        "metadata": {"name": "checkout", "namespace": "argocd"},
        "status": {
            "resources": [{"kind": "Rollout", "namespace": "shop", "name": "checkout"}],
            "history": [
                {"id": 1, "revision": "1111111aaaa", "deployedAt": at(-600)},
                {"id": 2, "revision": SHA, "deployedAt": at(30)},
            ],
            "sync": {"revision": SHA},
        },
    }
    return RolloutObjects(rollout(), replicasets=[rs], applications=[app])


def test_a_healthy_rollout_under_a_red_pipeline_warns_not_to_rerun() -> None:
    (finding,) = detect_findings(None, objects=objects(), now=T0, pipelines={SHA[:7]: "failed"})
    assert (finding.code, finding.severity) == ("pipeline-red-rollout-healthy", "warning")
    assert finding.evidence["commit"] == SHA and finding.evidence["revision"] == 2
    assert "Do not re-run" in finding.explanation


def test_a_green_or_unknown_pipeline_is_no_finding() -> None:
    assert detect_findings(None, objects=objects(), now=T0, pipelines={SHA: "success"}) == []
    assert detect_findings(None, objects=objects(), now=T0) == []
