"""What ``dashboard.kube.actions`` puts on the wire: method, path, Content-Type and body, as the CLI
sends them (``types.MergePatchType`` → ``application/merge-patch+json``, undo's ``types.JSONPatchType`` →
``application/json-patch+json``, ``kubectl scale`` → a merge patch of ``/scale``), recorded between the
official client and a running kubesim; and the v0.9 fallback when ``/status`` answers 404.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3

from dashboard.actions import plans
from dashboard.actions.models import Outcome
from dashboard.actions.service import rollout_act
from dashboard.kube.actions import ActionClient
from tests.actions.objects import canary, get, load, seen_of

Wire = tuple[str, str, str, Any]  # method, path, content type, body
NOT_FOUND = b'{"kind":"Status","status":"Failure","reason":"NotFound","code":404,"message":"not found"}'


class _State:
    status_404 = False  # the v0.9 fixture: /status answers 404 as on a CRD without the subresource


wire_state = _State()
RS_DEFAULT = [("old", 1, "shop/checkout:v1", 4), ("new", 2, "shop/checkout:v2", 1)]


@pytest.fixture
def wire(sim: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Wire]]:
    """Every PATCH the client sends, recorded on its way to kubesim; ``wire.status_404`` fakes a v0.9 CRD."""
    recorded: list[Wire] = []
    original = urllib3.PoolManager.request

    def request(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        path = "/" + url.split("://", 1)[1].split("/", 1)[1].split("?")[0]
        if method == "PATCH":
            headers = urllib3.HTTPHeaderDict(kwargs.get("headers") or {})
            body = kwargs.get("body")
            recorded.append((method, path, str(headers.get("Content-Type")), json.loads(body or "null")))
            if getattr(wire_state, "status_404", False) and path.endswith("/status"):
                return urllib3.HTTPResponse(
                    body=NOT_FOUND,
                    status=404,
                    headers={"Content-Type": "application/json"},
                    preload_content=True,
                )
        return original(self, method, url, *args, **kwargs)

    monkeypatch.setattr(urllib3.PoolManager, "request", request)
    yield recorded


ROLLOUT_PATH = "/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts/checkout"


def test_each_target_goes_out_with_the_content_type_the_cli_uses(sim: Any, wire: list[Wire]) -> None:
    load(sim, canary(), RS_DEFAULT)
    client = ActionClient("sim")
    template = get(sim, "shop", "checkout")["spec"]["template"]
    requests = [
        plans.Request("status", "checkout", {"status": {"pauseConditions": None}}),
        plans.Request("rollout", "checkout", {"spec": {"paused": True}}),
        plans.Request(
            "rollout", "checkout", [{"op": "replace", "path": "/spec/template", "value": template}], "json"
        ),
        plans.Request("scale", "checkout-old", {"spec": {"replicas": 0}}),
    ]
    for request in requests:
        client.send("shop", request)
    assert wire == [
        (
            "PATCH",
            f"{ROLLOUT_PATH}/status",
            "application/merge-patch+json",
            {"status": {"pauseConditions": None}},
        ),
        ("PATCH", ROLLOUT_PATH, "application/merge-patch+json", {"spec": {"paused": True}}),
        (
            "PATCH",
            ROLLOUT_PATH,
            "application/json-patch+json",
            [{"op": "replace", "path": "/spec/template", "value": template}],
        ),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/shop/replicasets/checkout-old/scale",
            "application/merge-patch+json",
            {"spec": {"replicas": 0}},
        ),
    ]
    assert [w[2] for w in wire] == [r.describe()["contentType"] for r in requests]


@pytest.fixture
def v09(wire: list[Wire]) -> Iterator[list[Wire]]:
    wire_state.status_404 = True
    yield wire
    wire_state.status_404 = False


def test_without_a_status_subresource_promote_sends_the_unified_patch_with_the_next_step(
    sim: Any, eager: None, operator: Any, v09: list[Wire]
) -> None:
    """promote.go: the /status patch answers NotFound, so specPatch = unifiedPatch (index + 1)."""
    obj = canary(pauseConditions=None, controllerPause=False, phase="Progressing")
    obj["spec"]["paused"] = True
    load(sim, obj, RS_DEFAULT)
    before = get(sim, "shop", "checkout")
    entry, _ = rollout_act(operator, "promote", "sim/shop/checkout", seen=seen_of(before), params={})
    result = entry.final()
    assert result is not None and result.outcome == Outcome.DONE, result and result.detail
    assert v09 == [
        (
            "PATCH",
            f"{ROLLOUT_PATH}/status",
            "application/merge-patch+json",
            {"status": {"pauseConditions": None, "currentStepIndex": 2}},
        ),
        (
            "PATCH",
            ROLLOUT_PATH,
            "application/merge-patch+json",
            {"spec": {"paused": False}, "status": {"pauseConditions": None, "currentStepIndex": 2}},
        ),
    ]


def test_skip_current_step_sends_only_the_step_index(
    sim: Any, eager: None, operator: Any, wire: list[Wire]
) -> None:
    obj = canary()
    obj["spec"]["paused"] = True
    load(sim, obj, RS_DEFAULT)
    before = get(sim, "shop", "checkout")
    entry, _ = rollout_act(
        operator, "skip-current-step", "sim/shop/checkout", seen=seen_of(before), params={}
    )
    result = entry.final()
    assert result is not None and result.outcome == Outcome.DONE, result and result.detail
    assert wire == [
        (
            "PATCH",
            f"{ROLLOUT_PATH}/status",
            "application/merge-patch+json",
            {"status": {"currentStepIndex": 2}},
        )
    ]
    assert get(sim, "shop", "checkout")["spec"]["paused"] is True
