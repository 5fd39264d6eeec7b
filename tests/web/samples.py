"""Realistic RolloutView documents (DESIGN §3) and fleet summary rows for the web tests.

They mirror what the domain produces for the seeds' scenarios: a canary caught in the re-render race,
a healthy canary, a blue-green waiting for promotion and an aborted canary. ``summary(view)`` builds the
live bus's fleet row from a view the way the bus contract describes it.
"""

from __future__ import annotations

import copy
from typing import Any

NOW = "2026-11-29T10:14:00Z"


def _rs(
    name: str,
    hash_: str,
    revision: int,
    tags: list[str],
    replicas: int,
    available: int,
    image: str,
    status: str = "Healthy",
) -> dict[str, Any]:
    return {
        "name": name,
        "hash": hash_,
        "revision": revision,
        "tags": tags,
        "status": status,
        "replicas": replicas,
        "available": available,
        "scaleDownDelay": "",
        "images": [image],
        "pods": [
            {"name": f"{name}-{i:05d}", "status": "Running", "ready": "1/1", "restarts": 0}
            for i in range(replicas)
        ],
    }


def rerender_race() -> dict[str, Any]:
    """checkout: the second render changed the pod hash and reset the canary to step 0."""
    return {
        "cluster": "prod-eu",
        "namespace": "shop",
        "name": "checkout",
        "uid": "5c1c3f5e-0000-4000-8000-000000000001",
        "strategy": "Canary",
        "status": "Progressing",
        "message": "more replicas need to be updated",
        "step": "0/5",
        "setWeight": 10,
        "actualWeight": 0,
        "weightSource": "trafficRouting",
        "currentStepIndex": 0,
        "currentPodHash": "86d4b7c5f9",
        "stableRS": "7c9d5f8b6d",
        "trafficRouter": "nginx",
        "labels": {"app": "checkout", "team": "payments"},
        "releaseStartedAt": "2026-11-29T10:00:00Z",
        "updatedAt": "2026-11-29T10:13:58Z",
        "images": [
            {"image": "registry.local/checkout:1.41.0", "tags": ["stable"]},
            {"image": "registry.local/checkout:1.42.0", "tags": ["canary"]},
        ],
        "steps": [
            {"setWeight": 10},
            {"pause": {}},
            {"setWeight": 50},
            {"pause": {"duration": "5m"}},
            {"analysis": {"templates": [{"templateName": "success-rate"}]}},
        ],
        "pauseConditions": [],
        "argocd": {
            "app": "checkout-prod",
            "health": "Progressing",
            "sync": "Synced",
            "revision": "9a2c7e5",
            "renders": 2,
        },
        "revisions": [
            {
                "revision": 13,
                "replicaSets": [
                    _rs(
                        "checkout-86d4b7c5f9",
                        "86d4b7c5f9",
                        13,
                        ["canary"],
                        0,
                        0,
                        "registry.local/checkout:1.42.0",
                        "Progressing",
                    )
                ],
                "analysisRuns": [],
                "experiments": [],
            },
            {
                "revision": 12,
                "replicaSets": [
                    _rs("checkout-5f6b8c9d74", "5f6b8c9d74", 12, [], 1, 1, "registry.local/checkout:1.42.0")
                ],
                "analysisRuns": [],
                "experiments": [],
            },
            {
                "revision": 11,
                "replicaSets": [
                    _rs(
                        "checkout-7c9d5f8b6d",
                        "7c9d5f8b6d",
                        11,
                        ["stable"],
                        10,
                        10,
                        "registry.local/checkout:1.41.0",
                    )
                ],
                "analysisRuns": [
                    {
                        "name": "checkout-7c9d5f8b6d-11-4",
                        "status": "Successful",
                        "successful": 10,
                        "failed": 0,
                        "inconclusive": 0,
                        "error": 0,
                        "metrics": [
                            {
                                "name": "success-rate",
                                "successCondition": "result[0] >= 0.99",
                                "phase": "Successful",
                                "measurements": [
                                    {
                                        "phase": "Successful",
                                        "value": "[0.996]",
                                        "startedAt": f"2026-11-28T09:{m:02d}:00Z",
                                    }
                                    for m in range(10)
                                ],
                            }
                        ],
                    }
                ],
                "experiments": [],
            },
        ],
        "findings": [
            {
                "code": "rerender-race",
                "severity": "critical",
                "cluster": "prod-eu",
                "namespace": "shop",
                "rollout": "checkout",
                "title": "Re-render race",
                "explanation": "Argo CD rendered commit 9a2c7e5 twice and the second render changed the pod "
                "template hash. The canary restarted at step 0 and left an orphan.",
                "evidence": {
                    "previousHash": "5f6b8c9d74",
                    "currentHash": "86d4b7c5f9",
                    "stepBefore": 1,
                    "stepAfter": 0,
                },
                "runbook": ["kubectl -n shop scale rs checkout-5f6b8c9d74 --replicas=0"],
                "action": "unwedge",
                "since": "2026-11-29T10:02:40Z",
            },
            {
                "code": "stuck-at-step-zero",
                "severity": "warning",
                "cluster": "prod-eu",
                "namespace": "shop",
                "rollout": "checkout",
                "title": "Stuck at step 0 for 11 min",
                "explanation": "setWeight 10 is not reached: the canary has 0 of 1 pods ready.",
                "evidence": {"minutes": 11},
                "runbook": [],
                "action": None,
                "since": "2026-11-29T10:03:40Z",
            },
        ],
        "hashChange": {
            "from": "5f6b8c9d74",
            "to": "86d4b7c5f9",
            "stepFrom": 1,
            "stepTo": 0,
            "at": "2026-11-29T10:02:40Z",
        },
    }


def healthy_canary(name: str = "orders", namespace: str = "shop", cluster: str = "prod-eu") -> dict[str, Any]:
    return {
        "cluster": cluster,
        "namespace": namespace,
        "name": name,
        "uid": f"uid-{cluster}-{namespace}-{name}",
        "strategy": "Canary",
        "status": "Healthy",
        "message": "",
        "step": "5/5",
        "setWeight": 100,
        "actualWeight": 100,
        "weightSource": "replicas",
        "currentStepIndex": 5,
        "currentPodHash": "9e3c7a1f5b",
        "stableRS": "9e3c7a1f5b",
        "labels": {"app": name},
        "releaseStartedAt": "2026-11-28T08:00:00Z",
        "updatedAt": "2026-11-28T08:20:00Z",
        "images": [{"image": f"registry.local/{name}:2.0.1", "tags": ["stable"]}],
        "steps": [
            {"setWeight": 20},
            {"pause": {"duration": "30s"}},
            {"setWeight": 60},
            {"pause": {"duration": "30s"}},
            {"setWeight": 100},
        ],
        "pauseConditions": [],
        "revisions": [
            {
                "revision": 4,
                "replicaSets": [
                    _rs(
                        f"{name}-9e3c7a1f5b",
                        "9e3c7a1f5b",
                        4,
                        ["stable"],
                        3,
                        3,
                        f"registry.local/{name}:2.0.1",
                    )
                ],
                "analysisRuns": [],
                "experiments": [],
            },
        ],
        "findings": [],
    }


def paused_canary() -> dict[str, Any]:
    """payments-api: paused for 5 minutes at step 3/6 with traffic routing, 50/50."""
    view = healthy_canary("payments-api", "payments")
    view.update(
        {
            "status": "Paused",
            "message": "CanaryPauseStep",
            "step": "3/6",
            "currentStepIndex": 3,
            "setWeight": 50,
            "actualWeight": 50,
            "weightSource": "trafficRouting",
            "currentPodHash": "c4e2a9f1d7",
            "stableRS": "8b1d3f5a2c",
            "steps": [
                {"setWeight": 10},
                {"pause": {"duration": "1m"}},
                {"setWeight": 50},
                {"pause": {"duration": "5m"}},
                {"analysis": {"templates": [{"templateName": "success-rate"}]}},
                {"setWeight": 100},
            ],
            "pauseConditions": [{"reason": "CanaryPauseStep", "startTime": "2026-11-29T10:12:00Z"}],
            "argocd": {"app": "payments", "health": "Suspended", "sync": "Synced", "revision": "1f2e3d4"},
        }
    )
    return view


def blue_green_preview() -> dict[str, Any]:
    return {
        "cluster": "prod-us",
        "namespace": "web",
        "name": "storefront-web",
        "uid": "uid-storefront",
        "strategy": "BlueGreen",
        "status": "Paused",
        "message": "BlueGreenPause",
        "step": None,
        "setWeight": None,
        "actualWeight": None,
        "currentStepIndex": None,
        "currentPodHash": "5e9c2b8d41",
        "stableRS": "1a7f3e9b6c",
        "labels": {"app": "storefront"},
        "releaseStartedAt": "2026-11-29T10:05:00Z",
        "updatedAt": "2026-11-29T10:06:00Z",
        "images": [
            {"image": "registry.local/storefront:3.1.0", "tags": ["preview"]},
            {"image": "registry.local/storefront:3.0.9", "tags": ["stable", "active"]},
        ],
        "pauseConditions": [{"reason": "BlueGreenPause", "startTime": "2026-11-29T10:06:00Z"}],
        "revisions": [
            {
                "revision": 2,
                "replicaSets": [
                    _rs(
                        "storefront-web-5e9c2b8d41",
                        "5e9c2b8d41",
                        2,
                        ["preview"],
                        2,
                        2,
                        "registry.local/storefront:3.1.0",
                    )
                ],
                "analysisRuns": [],
                "experiments": [],
            },
            {
                "revision": 1,
                "replicaSets": [
                    _rs(
                        "storefront-web-1a7f3e9b6c",
                        "1a7f3e9b6c",
                        1,
                        ["stable", "active"],
                        2,
                        2,
                        "registry.local/storefront:3.0.9",
                    )
                ],
                "analysisRuns": [],
                "experiments": [],
            },
        ],
        "findings": [],
    }


def aborted_canary() -> dict[str, Any]:
    view = healthy_canary("cart", "shop", "prod-us")
    view.update(
        {
            "status": "Degraded",
            "aborted": True,
            "message": "RolloutAborted: Rollout aborted update to revision 5",
            "step": "0/5",
            "currentStepIndex": 0,
            "setWeight": 0,
            "actualWeight": 0,
            "currentPodHash": "a1c3e5f7b9",
            "stableRS": "3e8d1f6c2a",
            "argocd": {"app": "cart", "health": "Degraded", "sync": "Synced"},
            "findings": [
                {
                    "code": "analysis-failed",
                    "severity": "critical",
                    "cluster": "prod-us",
                    "namespace": "shop",
                    "rollout": "cart",
                    "title": "Analysis failed",
                    "explanation": "error-rate crossed its threshold 3 times.",
                    "evidence": {},
                    "runbook": [],
                    "action": None,
                    "since": "2026-11-29T09:40:00Z",
                }
            ],
        }
    )
    view["revisions"][0]["analysisRuns"] = [
        {
            "name": "cart-a1c3e5f7b9-5-1",
            "status": "Failed",
            "successful": 1,
            "failed": 3,
            "inconclusive": 0,
            "error": 0,
            "metrics": [
                {
                    "name": "error-rate",
                    "successCondition": "result[0] < 0.05",
                    "failureLimit": 2,
                    "phase": "Failed",
                    "measurements": [
                        {"phase": p, "value": f"[{v}]", "startedAt": f"2026-11-29T09:3{i}:00Z"}
                        for i, (p, v) in enumerate(
                            [("Successful", 0.01), ("Failed", 0.09), ("Failed", 0.12), ("Failed", 0.2)]
                        )
                    ],
                }
            ],
        }
    ]
    return view


def hostile() -> dict[str, Any]:
    """A rollout whose every string tries to inject markup; pages must show it as text."""
    view = rerender_race()
    view["name"] = "evil-<script>alert(1)</script>"
    view["message"] = '<img src=x onerror="alert(2)">'
    view["labels"] = {"team": "<b>x</b>"}
    view["findings"][0]["title"] = "<svg onload=alert(3)>"
    return view


def summary(view: dict[str, Any]) -> dict[str, Any]:
    """The live bus's fleet row for a view (the fields the bus contract lists)."""
    counts = {"critical": 0, "warning": 0, "info": 0}
    for finding in view.get("findings") or []:
        counts[finding["severity"]] = counts.get(finding["severity"], 0) + 1
    return {
        "key": f"{view['cluster']}/{view['namespace']}/{view['name']}",
        **{
            k: view.get(k)
            for k in (
                "cluster",
                "namespace",
                "name",
                "status",
                "message",
                "step",
                "setWeight",
                "actualWeight",
                "currentPodHash",
                "stableRS",
                "strategy",
                "labels",
                "releaseStartedAt",
                "updatedAt",
                "weightSource",
            )
        },
        "findings": counts,
    }


def fleet(count: int) -> list[dict[str, Any]]:
    """``count`` views spread over 3 clusters and 8 namespaces with a realistic status mix."""
    makers = [healthy_canary] * 6
    views = []
    for i in range(count):
        cluster = ("prod-eu", "prod-us", "prod-ap")[i % 3]
        namespace = f"team-{i % 8}"
        kind = i % 10
        if kind < 6:
            view = makers[kind](f"svc-{i:05d}", namespace, cluster)
        elif kind == 6:
            view = paused_canary()
        elif kind == 7:
            view = rerender_race()
        elif kind == 8:
            view = blue_green_preview()
        else:
            view = aborted_canary()
        view = copy.deepcopy(view)
        view.update({"cluster": cluster, "namespace": namespace, "name": f"svc-{i:05d}"})
        views.append(view)
    return views
