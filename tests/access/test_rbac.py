from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from dashboard.access.models import Grant, Role, SingleSignOnIdentity
from dashboard.access.rbac import can

pytestmark = pytest.mark.django_db


def _user(name: str = "dana") -> User:
    return User.objects.create_user(name, password="a-long-test-password")


def test_access_is_denied_by_default() -> None:
    assert not can(_user(), "get", "prod/shop/checkout")


def test_a_group_grant_on_a_namespace_pattern_applies_to_members() -> None:
    user = _user()
    user.groups.add(Group.objects.create(name="shop-team"))
    Grant.objects.create(group="shop-team", role=Role.objects.get(name="operator"), namespace="shop*")
    assert can(user, "promote", "prod/shop-eu/checkout")
    assert not can(user, "unwedge", "prod/shop-eu/checkout")
    assert not can(user, "get", "prod/payments/ledger")


def test_the_oidc_groups_claim_feeds_group_grants() -> None:
    user = _user()
    SingleSignOnIdentity.objects.create(user=user, issuer="https://idp", subject="s1", groups=["releasers"])
    custom = Role.objects.create(name="releaser", actions="get, promote")
    Grant.objects.create(group="releasers", role=custom, cluster="prod", rollout="check*")
    assert can(user, "promote", "prod/any/checkout")
    assert not can(user, "abort", "prod/any/checkout")
    assert not can(user, "promote", "staging/any/checkout")


def test_a_deny_grant_wins_over_an_allow() -> None:
    user = _user()
    Grant.objects.create(user=user, role=Role.objects.get(name="admin"))
    Grant.objects.create(user=user, role=Role.objects.get(name="operator"), namespace="payments", deny=True)
    assert can(user, "abort", "prod/shop/x")
    assert not can(user, "abort", "prod/payments/x")
    assert can(user, "unwedge", "prod/payments/x")  # not in the denied role


def test_superusers_may_do_everything() -> None:
    assert can(User.objects.create_superuser("root", password="a-long-test-password"), "unwedge", "a/b/c")


def test_the_policy_file_grants_by_user_and_group(tmp_path: Path, settings: Any) -> None:
    policy = tmp_path / "policy.csv"
    policy.write_text("p, role:rel, rollouts, promote, prod/payments/*, allow\ng, payments-team, role:rel\n")
    settings.RBAC_POLICY_FILE = str(policy)
    user = _user()
    user.groups.add(Group.objects.create(name="payments-team"))
    assert can(user, "promote", "prod/payments/api")
    assert not can(user, "promote", "prod/shop/api")


def test_the_default_role_applies_to_every_signed_in_user(settings: Any) -> None:
    settings.RBAC_DEFAULT_ROLE = "viewer"
    user = _user()
    assert can(user, "get", "x/y/z") and not can(user, "promote", "x/y/z")


def test_a_custom_role_without_logs_may_see_the_rollout_but_not_its_pods_logs() -> None:
    user = _user()
    Grant.objects.create(user=user, role=Role.objects.create(name="watcher", actions="get"), namespace="shop")
    assert can(user, "get", "prod/shop/checkout")
    assert not can(user, "logs", "prod/shop/checkout")
    tailer = _user("tia")
    Grant.objects.create(
        user=tailer, role=Role.objects.create(name="tailer", actions="get logs"), namespace="shop"
    )
    assert can(tailer, "logs", "prod/shop/checkout") and not can(tailer, "logs", "prod/billing/payments")
