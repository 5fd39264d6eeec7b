from __future__ import annotations

import pytest

from dashboard.access.policy import PolicyError, parse_policy

POLICY = """
# payments release managers
p, role:payments-release, rollouts, promote, prod/payments/*, allow
p, role:payments-release, rollouts, get,     prod/payments/*, allow
p, role:payments-release, rollouts, *,       prod/payments/ledger, deny
g, payments-team, role:payments-release
g, alice, role:viewer
g, role:leads, role:payments-release
g, bob, role:leads
"""


def test_it_binds_groups_to_roles_and_matches_object_globs() -> None:
    policy = parse_policy(POLICY)
    assert policy.allows({"carol", "payments-team"}, "promote", "prod/payments/checkout")
    assert not policy.allows({"carol", "payments-team"}, "abort", "prod/payments/checkout")
    assert not policy.allows({"carol", "payments-team"}, "promote", "prod/shop/checkout")


def test_a_deny_always_wins() -> None:
    assert not parse_policy(POLICY).allows({"payments-team"}, "promote", "prod/payments/ledger")


def test_builtin_roles_and_role_inheritance() -> None:
    policy = parse_policy(POLICY)
    assert policy.allows({"alice"}, "get", "any/where/at-all")
    assert not policy.allows({"alice"}, "promote", "any/where/at-all")
    assert policy.allows({"bob"}, "promote", "prod/payments/x")


def test_nothing_matching_means_no() -> None:
    assert not parse_policy("").allows({"anyone"}, "get", "a/b/c")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("p, role:x, rollouts, launch, */*/*, allow", "unknown action 'launch'"),
        ("p, role:x, applications, get, */*, allow", "unknown resource 'applications'"),
        ("p, role:x, rollouts, get, */*/*, maybe", "'allow' or 'deny'"),
        ("g, team, admins", "is not a role"),
        ("x, y", "starts with 'p' or 'g'"),
    ],
)
def test_bad_lines_are_reported_with_their_line_number(line: str, message: str) -> None:
    with pytest.raises(PolicyError, match="policy line 2: ") as caught:
        parse_policy("# first\n" + line)
    assert message in str(caught.value)
