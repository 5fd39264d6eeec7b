"""The guard rails' HTTP API: clear 400/401/403/409/422 answers, and per-user rights on requests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.guardrails.conftest import make_user

pytestmark = pytest.mark.django_db
KEY = "prod/shop/checkout"
SEEN = {"podHash": "new", "stepIndex": 1, "status": "Paused", "paused": False, "aborted": False}


@pytest.fixture
def policy(tmp_path: Path, settings: Any) -> Path:
    now = datetime.now(UTC)
    path = tmp_path / "policy.csv"
    path.write_text(
        "approval, promote, prod/shop/*, count=1, approvers=role:admin, expires=1h\n"
        f"freeze, resume, prod/*/*, name=Launch freeze, from={now - timedelta(hours=1):%Y-%m-%d %H:%M}, "
        f"until={now + timedelta(hours=2):%Y-%m-%d %H:%M}, tz=Europe/Berlin\n"
        "reason, restart, prod/*/*, pattern=CHG-[0-9]+, hint=a change id such as CHG-1\n"
    )
    settings.RBAC_POLICY_FILE = str(path)
    return path


def _client(username: str, role: str) -> Client:
    client = Client()
    client.force_login(make_user(username, role))
    return client


def _post(client: Client, url: str, body: Any) -> Any:
    return client.post(url, data=json.dumps(body), content_type="application/json")


def test_signed_out_callers_are_told_to_sign_in(policy: Path) -> None:
    assert Client().get(f"/api/v1/requests?rollout={KEY}").status_code == 401
    assert _post(Client(), "/api/v1/requests/1/approve", {}).status_code == 401


def test_a_request_without_a_rollout_names_the_field(policy: Path) -> None:
    answer = _post(_client("olivia", "operator"), "/api/v1/requests", {"action": "promote"})
    assert answer.status_code == 400 and answer.json()["field"] == "rollout"


def test_requesting_an_action_no_rule_guards_is_a_422(policy: Path) -> None:
    answer = _post(
        _client("olivia", "operator"), "/api/v1/requests", {"rollout": KEY, "action": "retry", "seen": SEEN}
    )
    assert answer.status_code == 422 and answer.json()["code"] == "no-approval-needed"


def test_a_frozen_action_is_a_409_naming_the_window_and_its_end(policy: Path) -> None:
    answer = _post(_client("olivia", "operator"), f"/api/v1/rollouts/{KEY}/actions/resume", {"seen": SEEN})
    body = answer.json()
    assert answer.status_code == 409 and body["code"] == "frozen"
    assert "“Launch freeze” until" in body["detail"] and "Europe/Berlin" in body["detail"]


def test_a_missing_reason_is_a_422(policy: Path) -> None:
    answer = _post(_client("olivia", "operator"), f"/api/v1/rollouts/{KEY}/actions/restart", {"seen": SEEN})
    assert answer.status_code == 422 and answer.json()["code"] == "reason-required"


def test_the_requester_sees_the_request_but_may_not_approve_it_and_an_admin_may(policy: Path) -> None:
    olivia, ada = _client("olivia", "operator"), _client("ada", "admin")
    made = _post(
        olivia, "/api/v1/requests", {"rollout": KEY, "action": "promote", "seen": SEEN, "reason": "go"}
    )
    assert made.status_code == 201, made.content
    again = _post(olivia, "/api/v1/requests", {"rollout": KEY, "action": "promote", "seen": SEEN})
    assert again.status_code == 409 and again.json()["code"] == "already-requested"
    mine = olivia.get(f"/api/v1/requests?rollout={KEY}").json()["requests"][0]
    assert (mine["mayApprove"], mine["whyNot"]) == (False, "you asked for this; someone else must approve it")
    assert ada.get(f"/api/v1/requests?rollout={KEY}").json()["requests"][0]["mayApprove"] is True
    own = _post(olivia, f"/api/v1/requests/{mine['id']}/approve", {"seen": SEEN})
    assert own.status_code == 403 and own.json()["code"] == "own-request"
    unbound = _post(ada, f"/api/v1/requests/{mine['id']}/approve", {"seen": {}})
    assert unbound.status_code == 400 and unbound.json()["field"] == "seen"
    awaiting = ada.get("/api/v1/requests/awaiting").json()["awaiting"]
    assert awaiting == {KEY: "awaiting approval to promote (0 of 1)"}


def test_the_rules_are_listed_with_each_freeze_on_or_off(policy: Path) -> None:
    rules = _client("victor", "viewer").get("/api/v1/guardrails").json()
    assert rules["freezes"][0]["active"] is True and rules["freezes"][0]["name"] == "Launch freeze"
    assert rules["approvals"][0]["approvers"] == ["role:admin"]
    assert rules["neverFrozen"] == ["abort", "pause"]
    page = _client("vera", "viewer").get("/guardrails/")
    assert page.status_code == 200 and "Launch freeze" in page.content.decode()
