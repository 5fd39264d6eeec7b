from __future__ import annotations

import pytest

from dashboard.access.policy import PolicyError, Subject, group, parse_policy, parse_subject, role, user

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
    assert policy.allows({user("carol"), group("payments-team")}, "promote", "prod/payments/checkout")
    assert not policy.allows({user("carol"), group("payments-team")}, "abort", "prod/payments/checkout")
    assert not policy.allows({user("carol"), group("payments-team")}, "promote", "prod/shop/checkout")


def test_a_deny_always_wins() -> None:
    assert not parse_policy(POLICY).allows({group("payments-team")}, "promote", "prod/payments/ledger")


def test_builtin_roles_and_role_inheritance() -> None:
    policy = parse_policy(POLICY)
    assert policy.allows({user("alice")}, "get", "any/where/at-all")
    assert not policy.allows({user("alice")}, "promote", "any/where/at-all")
    assert policy.allows({user("bob")}, "promote", "prod/payments/x")


def test_nothing_matching_means_no() -> None:
    assert not parse_policy("").allows({user("anyone")}, "get", "a/b/c")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("p, role:x, rollouts, launch, */*/*, allow", "unknown action 'launch'"),
        ("p, role:x, applications, get, */*, allow", "unknown resource 'applications'"),
        ("p, role:x, rollouts, get, */*/*, maybe", "'allow' or 'deny'"),
        ("g, team, admins", "is not a role"),
        ("x, y", "starts with 'p' or 'g'"),
        ("p, user:, rollouts, get, */*/*, allow", "names no user"),
        ("g, group:, role:x", "names no group"),
        ("p, , rollouts, get, */*/*, allow", "the subject is empty"),
    ],
)
def test_bad_lines_are_reported_with_their_line_number(line: str, message: str) -> None:
    with pytest.raises(PolicyError, match="policy line 2: ") as caught:
        parse_policy("# first\n" + line)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("text", "subjects"),
    [
        ("role:admin", (role("admin"),)),
        ("user:alice", (user("alice"),)),
        ("group:org:team", (group("org:team"),)),
        ("user:role:admin", (user("role:admin"),)),
        ("alice", (user("alice"), group("alice"))),
        ("*", (user("*"), group("*"))),
    ],
)
def test_a_subject_field_names_typed_subjects(text: str, subjects: tuple[Subject, ...]) -> None:
    assert parse_subject(text) == subjects


def test_a_user_named_like_a_role_is_not_that_role() -> None:
    policy = parse_policy("g, user:role:admin, role:viewer")
    assert not policy.allows({user("role:admin")}, "promote", "a/b/c")
    assert policy.allows({user("role:admin")}, "get", "a/b/c")
    assert policy.allows({role("admin")}, "unwedge", "a/b/c")


def test_a_quoted_name_with_a_comma_is_one_subject() -> None:
    policy = parse_policy('g, "ops, eu", role:operator')
    assert policy.allows({group("ops, eu")}, "promote", "a/b/c")
    assert not policy.allows({group("ops")}, "get", "a/b/c")


def test_logs_is_its_own_permission_written_as_argo_cd_writes_it() -> None:
    policy = parse_policy(
        "p, role:readers, rollouts, get, */*/*, allow\n"
        "p, role:tailers, rollouts, get, */*/*, allow\n"
        "p, role:tailers, logs, get, prod/shop/*, allow\n"
        "p, role:everything, *, get, */*/*, allow\n"
        "p, role:tailers, rollouts, logs, prod/shop/secret, deny\n"
    )
    assert policy.allows({role("readers")}, "get", "prod/shop/checkout")
    assert not policy.allows({role("readers")}, "logs", "prod/shop/checkout")  # get alone is not logs
    assert policy.allows({role("tailers")}, "logs", "prod/shop/checkout")
    assert not policy.allows({role("tailers")}, "logs", "prod/payments/ledger")
    assert not policy.allows({role("tailers")}, "logs", "prod/shop/secret")  # a deny wins
    assert policy.allows({role("everything")}, "logs", "staging/a/b")  # Argo CD's "*, get" covers logs
    assert not policy.allows({role("tailers")}, "promote", "prod/shop/checkout")


def test_the_builtin_roles_read_logs_as_argo_cds_readonly_does() -> None:
    policy = parse_policy("g, alice, role:viewer\ng, bob, role:operator")
    assert policy.allows({user("alice")}, "logs", "a/b/c") and policy.allows({user("bob")}, "logs", "a/b/c")
    assert not parse_policy("").allows({user("carol")}, "logs", "a/b/c")


def test_the_logs_resource_has_only_the_get_action() -> None:
    with pytest.raises(PolicyError, match="the logs resource has one action, get"):
        parse_policy("p, role:x, logs, promote, */*/*, allow")


@pytest.mark.parametrize(
    "pattern",
    [
        "*",
        "prod/*",
        "prod/shop/*",
        "*/shop/web",
        "prod/sh?p/*",
        "prod/[ab]*/x",
        "prod/[!a]*/*",
        "a.b/c+d/(e)",
        "prod/[/x",
        "*-canary",
        "prod/[]]/*",
    ],
)
def test_a_glob_reads_the_same_as_a_database_regex_as_it_does_with_fnmatch(pattern: str) -> None:
    import re
    from fnmatch import fnmatchcase

    from dashboard.access.visibility import glob_regex

    keys = [
        "prod/shop/web",
        "prod/shop/web-canary",
        "staging/shop/web",
        "prod/ab/x",
        "prod/b/x",
        "prod/shop/x",
        "a.b/c+d/(e)",
        "aXb/cd/(e)",
        "prod/[/x",
        "prod/]/y",
        "prod/shap/z",
    ]
    for key in keys:
        assert bool(re.search(glob_regex(pattern), key)) == fnmatchcase(key, pattern), (pattern, key)
