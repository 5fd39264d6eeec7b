"""Users, groups and roles are typed: no name an identity provider sends can become another kind of subject.

Each hostile name is tried as a local user name, as a Django group, as an SSO group claim and as an SSO
user name, against the built-in roles, the policy file and the stored grants.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from dashboard.access import oidc
from dashboard.access.models import Grant, Role
from dashboard.access.rbac import access_for, can, forget

pytestmark = pytest.mark.django_db

HOSTILE = [
    "role:admin",
    "role:operator",
    "role:viewer",
    "role:rel",
    "group:ops",
    "user:alice",
    "*",
    "alice, role:admin",
    "ops:role:admin",
    "role: admin",
    " role:admin",
    "Role:Admin",
]
KEY = "prod/payments/api"
CLAIMS = {"iss": "https://idp.example", "aud": "rollouts-ui", "exp": 2_000_000_000, "nonce": "n1"}


@pytest.fixture(autouse=True)
def oidc_configured(settings: Any, tmp_path: Path) -> None:
    settings.OIDC_ISSUER = "https://idp.example"
    settings.OIDC_CLIENT_ID = "rollouts-ui"
    policy = tmp_path / "policy.csv"
    policy.write_text(
        "p, role:rel, rollouts, promote, */*/*, allow\n"
        "p, user:alice, rollouts, abort, */*/*, allow\n"
        "g, group:ops, role:rel\n"
        "g, carol, role:admin\n"
    )
    settings.RBAC_POLICY_FILE = str(policy)


def _powerless(user: Any) -> bool:
    forget(user)
    return not any(can(user, action, KEY) for action in ("get", "promote", "abort", "unwedge"))


@pytest.mark.parametrize("name", HOSTILE)
def test_a_local_user_named_like_a_role_or_group_holds_nothing(name: str) -> None:
    user = User.objects.create_user(name, password="a-long-test-password")
    assert _powerless(user)


@pytest.mark.parametrize("name", HOSTILE)
def test_a_django_group_named_like_a_role_or_user_grants_nothing(name: str) -> None:
    user = User.objects.create_user("dana", password="a-long-test-password")
    user.groups.add(Group.objects.create(name=name))
    assert _powerless(user)


@pytest.mark.parametrize("name", HOSTILE)
def test_an_sso_group_named_like_a_role_or_user_grants_nothing(name: str) -> None:
    user = oidc.user_for({**CLAIMS, "sub": "s-1", "preferred_username": "dana", "groups": [name]})
    assert _powerless(user)


@pytest.mark.parametrize("name", HOSTILE)
def test_an_sso_user_named_like_a_role_or_group_holds_nothing(name: str) -> None:
    user = oidc.user_for({**CLAIMS, "sub": "s-2", "preferred_username": name, "groups": []})
    assert user.username == name
    assert _powerless(user)


def test_a_group_named_like_a_user_does_not_get_that_users_grants() -> None:
    alice = User.objects.create_user("alice", password="a-long-test-password")
    Grant.objects.create(user=alice, role=Role.objects.get(name="admin"))
    impostor = oidc.user_for({**CLAIMS, "sub": "s-3", "preferred_username": "eve", "groups": ["alice"]})
    assert can(alice, "unwedge", KEY) and can(alice, "abort", KEY)
    assert not can(impostor, "unwedge", KEY) and not can(impostor, "abort", KEY)


def test_a_user_named_like_a_group_does_not_get_that_groups_grants() -> None:
    Grant.objects.create(group="ops", role=Role.objects.get(name="admin"))
    member = User.objects.create_user("dana", password="a-long-test-password")
    member.groups.add(Group.objects.create(name="ops"))
    named_ops = oidc.user_for({**CLAIMS, "sub": "s-4", "preferred_username": "ops", "groups": []})
    assert named_ops.username == "ops"
    assert can(member, "unwedge", KEY) and can(member, "promote", KEY)
    assert not can(named_ops, "unwedge", KEY) and not can(named_ops, "promote", KEY)


def test_a_group_grant_for_a_role_like_name_binds_only_that_group() -> None:
    Grant.objects.create(group="role:admin", role=Role.objects.get(name="viewer"))
    member = oidc.user_for({**CLAIMS, "sub": "s-5", "preferred_username": "dana", "groups": ["role:admin"]})
    assert can(member, "get", KEY)
    assert not can(member, "promote", KEY)


def test_a_bare_policy_name_is_a_user_or_a_group_as_in_argo_cd() -> None:
    carol = User.objects.create_user("carol", password="a-long-test-password")
    in_carol = oidc.user_for({**CLAIMS, "sub": "s-6", "preferred_username": "dana", "groups": ["carol"]})
    assert can(carol, "unwedge", KEY) and can(in_carol, "unwedge", KEY)  # g, carol, role:admin


def test_the_access_lists_the_groups_by_kind() -> None:
    user = oidc.user_for(
        {**CLAIMS, "sub": "s-7", "preferred_username": "dana", "groups": ["role:admin", "dana", "*"]}
    )
    access = access_for(user)
    assert access.groups == ("*", "dana", "role:admin")
