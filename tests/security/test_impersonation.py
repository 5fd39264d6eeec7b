"""In impersonation mode no name an identity provider sends can become one of Kubernetes' own identities
(``system:masters``, ``system:serviceaccount:…``): those hold the cluster's rights, not the person's."""

from __future__ import annotations

from typing import Any

import pytest

from dashboard.actions.models import Outcome
from dashboard.actions.service import rollout_act
from dashboard.kube.actions import KubeError, impersonation_for
from tests.actions.conftest import make_user
from tests.actions.objects import canary, get, load, seen_of


@pytest.fixture(autouse=True)
def impersonating(settings: Any) -> None:
    settings.KUBE_IMPERSONATE = True


def test_kubernetes_system_groups_from_the_identity_provider_are_not_impersonated() -> None:
    groups = ["team", "system:masters", "system:nodes", "role:admin", "System:x"]
    assert impersonation_for("alice", groups) == ("alice", ["team", "role:admin", "System:x"])


@pytest.mark.parametrize(
    "name", ["system:admin", "system:serviceaccount:kube-system:default", "system:kube-proxy"]
)
def test_a_user_named_like_a_kubernetes_identity_is_not_impersonated(name: str) -> None:
    with pytest.raises(KubeError, match="Kubernetes' own"):
        impersonation_for(name, [])


@pytest.mark.django_db(transaction=True)
def test_such_a_users_action_fails_without_sending_and_is_audited(sim: Any, eager: None) -> None:
    load(sim, canary(pauseConditions=None, controllerPause=False, phase="Progressing"))
    user = make_user("system:admin", "operator")
    entry, _ = rollout_act(user, "promote", "sim/shop/checkout", seen=seen_of(get(sim, "shop", "checkout")))
    final = entry.final()
    assert final is not None and final.outcome == Outcome.FAILED and "Kubernetes' own" in final.detail
    assert get(sim, "shop", "checkout")["status"]["currentStepIndex"] == 1
