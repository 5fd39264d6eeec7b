"""A gated Flagger Canary's confirm-promotion opens only when its approval rule is met."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from dashboard.flagger_gates import services as gates
from dashboard.guardrails import service
from dashboard.guardrails.models import State
from tests.guardrails.conftest import make_user

pytestmark = pytest.mark.django_db
CANARY = {"controller": "flagger"}


def _flagger(token: str, checksum: str) -> int:
    body = {
        "name": "podinfo",
        "namespace": "test",
        "phase": "Progressing",
        "checksum": checksum,
        "metadata": {"token": token},
    }
    response = Client().post(
        "/api/v1/flagger/gates/prod/confirm-promotion/",
        data=json.dumps(body),
        content_type="application/json",
    )
    return response.status_code


def test_the_confirm_promotion_gate_opens_only_after_the_approval(tmp_path: Path, settings: Any) -> None:
    policy = tmp_path / "policy.csv"
    policy.write_text("approval, promote, prod/test/*, count=1, approvers=role:admin, expires=1h\n")
    settings.RBAC_POLICY_FILE = str(policy)
    token = gates.issue_token("prod", namespace="test")[1]
    assert _flagger(token, "rev-one") == 403
    olga, ada = make_user("olga", "operator"), make_user("ada", "admin")

    direct = gates.canary_act(olga, "promote", "prod", "test", "podinfo")
    assert (direct.status, direct.detail[:15]) == (409, "needs approval:")
    assert _flagger(token, "rev-one") == 403

    # The Canary page sends no seen: the request binds to the revision the gate waits for.
    request = service.request_create(
        olga, "promote", "prod/test/podinfo", view=CANARY, seen=None, params={}, reason="go"
    )
    assert request.seen == {"checksum": "rev-one"}
    done = service.request_vote(ada, request.pk, "approve", seen={"checksum": "rev-one"}, view=CANARY)
    assert done.state == State.APPROVED and "promote done" in done.detail
    assert _flagger(token, "rev-one") == 200
    assert _flagger(token, "rev-two") == 403  # the approval was for that revision only
