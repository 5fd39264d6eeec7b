from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.test import Client

from tests.actions.objects import canary, get, load, seen_of

URL = "/api/v1/rollouts/sim/shop/checkout/actions/"


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _post(client: Client, action: str, body: dict[str, Any], **headers: Any) -> Any:
    return client.post(URL + action, json.dumps(body), content_type="application/json", headers=headers)


def test_promote_answers_200_then_a_stale_repeat_409(sim: Any, eager: None, operator: Any) -> None:
    load(sim, canary(pauseConditions=None, controllerPause=False, phase="Progressing"))
    client, seen = _client(operator), seen_of(get(sim, "shop", "checkout"))
    first = _post(client, "promote", {"seen": seen})
    assert first.status_code == 200, first.json()
    assert first.json()["requests"][0]["body"] == {"status": {"pauseConditions": None, "currentStepIndex": 2}}
    second = _post(client, "promote", {"seen": seen})
    assert second.status_code == 409
    assert second.json()["changes"]["stepIndex"] == {"seen": 1, "now": 2}


def test_a_repeated_idempotency_key_replays_the_outcome(sim: Any, eager: None, operator: Any) -> None:
    load(sim, canary(pauseConditions=None, controllerPause=False, phase="Progressing"))
    client, seen = _client(operator), seen_of(get(sim, "shop", "checkout"))
    first = _post(client, "promote", {"seen": seen}, **{"Idempotency-Key": "abc"})
    again = _post(client, "promote", {"seen": seen}, **{"Idempotency-Key": "abc"})
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.json()["replayed"] is True and again.json()["id"] == first.json()["id"]


def test_unwedge_of_a_non_orphan_is_422_with_the_reason(sim: Any, eager: None, admin_user: Any) -> None:
    load(sim, canary(), [("old", 1, "a:1", 4), ("new", 2, "a:2", 1)])
    response = _post(
        _client(admin_user),
        "unwedge",
        {"seen": seen_of(get(sim, "shop", "checkout")), "params": {"replicaSet": "checkout-old"}},
    )
    assert response.status_code == 422
    assert "is stable" in response.json()["detail"]


def test_the_audit_exports_as_csv_and_json(sim: Any, eager: None, operator: Any) -> None:
    load(sim, canary())
    client = _client(operator)
    _post(client, "abort", {"seen": seen_of(get(sim, "shop", "checkout"))})
    exported = client.get("/audit/export.json").json()
    assert exported["count"] == 1 and exported["entries"][0]["outcome"] == "done"
    rows = list(csv.DictReader(io.StringIO(client.get("/audit/export.csv").content.decode())))
    assert [(r["actor"], r["action"], r["outcome"]) for r in rows] == [("olivia", "abort", "done")]
    page = client.get("/audit/?outcome=done&rollout=checkout").content.decode()
    assert "sim/shop/checkout" in page
    assert client.get("/audit/?since=yesterday").status_code == 400


@pytest.mark.parametrize("cell", ["=cmd()", "+1", "-1", "@x"])
def test_csv_cells_cannot_become_formulas(cell: str) -> None:
    from dashboard.web.audit_views import _csv_cell

    assert _csv_cell(cell).startswith("'")
