"""Guard-rail rules from the policy file, and the decision for one action."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dashboard.access.policy import PolicyError, parse_policy, role, user
from dashboard.guardrails.rules import guard_for, may_approve, parse_rules

POLICY = """
p, role:release, rollouts, *, */*/*, allow
approval, promote promote-full, */billing/*, count=1, approvers=role:admin role:release, expires=4h
approval, promote, prod/billing/*, count=2, approvers=group:payments-leads, expires=2h
"freeze", *, prod/*/*, name=Weekend freeze, weekly=Fri 16:00 - Mon 08:00, tz=Europe/Berlin
freeze, promote, */*/*, name=Critical tier, "selector=tier=critical,!canary-ok", \
from=2026-12-01 00:00, until=2026-12-02 00:00, tz=UTC
reason, promote, prod/*/*, pattern=CHG-[0-9]+, hint=a change id such as CHG-1234
"""
SATURDAY = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
TUESDAY = datetime(2026, 12, 8, 12, 0, tzinfo=UTC)


def test_the_rbac_parser_leaves_guard_lines_to_the_guard_rails() -> None:
    assert len(parse_policy(POLICY).rules) == 1
    rules = parse_rules(POLICY)
    assert (len(rules.approvals), len(rules.freezes), len(rules.reasons)) == (2, 2, 1)


def test_promote_is_frozen_on_saturday_with_the_window_name_and_end() -> None:
    guard = guard_for(parse_rules(POLICY), "promote", "prod/shop/checkout", {}, SATURDAY)
    assert guard.freeze is not None and guard.freeze.name == "Weekend freeze"
    assert guard.freeze.until_text(SATURDAY) == "Mon 08:00 Europe/Berlin"


@pytest.mark.parametrize("action", ["abort", "pause"])
def test_abort_and_pause_are_never_frozen_even_by_a_star(action: str) -> None:
    assert guard_for(parse_rules(POLICY), action, "prod/shop/checkout", {}, SATURDAY).freeze is None


def test_a_freeze_naming_abort_is_refused() -> None:
    with pytest.raises(PolicyError, match="line 1: abort is never frozen"):
        parse_rules("freeze, promote abort, */*/*, name=X, weekly=Fri 16:00 - Mon 08:00, tz=UTC")


def test_nothing_is_frozen_on_a_tuesday() -> None:
    assert guard_for(parse_rules(POLICY), "promote", "prod/shop/checkout", {}, TUESDAY).freeze is None


def test_a_label_selector_scopes_a_freeze() -> None:
    rules, at = parse_rules(POLICY), datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    assert guard_for(rules, "promote", "dev/a/b", {"tier": "critical"}, at).freeze is not None
    assert guard_for(rules, "promote", "dev/a/b", {"tier": "critical", "canary-ok": "yes"}, at).freeze is None
    assert guard_for(rules, "promote", "dev/a/b", {"tier": "web"}, at).freeze is None


def test_the_strictest_approval_rule_wins() -> None:
    rules = parse_rules(POLICY)
    staging = guard_for(rules, "promote", "staging/billing/pay", {}, TUESDAY).approval
    assert staging is not None and (staging.count, staging.approvers) == (1, ("role:admin", "role:release"))
    prod = guard_for(rules, "promote", "prod/billing/pay", {}, TUESDAY).approval
    assert prod is not None and (prod.count, prod.approvers, prod.expires) == (
        2,
        ("group:payments-leads",),
        timedelta(hours=2),
    )
    assert guard_for(rules, "restart", "prod/billing/pay", {}, TUESDAY).approval is None


def test_approvers_are_matched_by_role_or_group_never_by_a_lookalike_name() -> None:
    terms = guard_for(parse_rules(POLICY), "promote", "staging/billing/pay", {}, TUESDAY).approval
    assert terms is not None
    assert may_approve(terms, {user("bob"), role("release")})
    assert not may_approve(terms, {user("role:release")})


def test_a_reason_must_match_the_ticket_pattern_whole() -> None:
    guard = guard_for(parse_rules(POLICY), "promote", "prod/shop/checkout", {}, TUESDAY)
    assert "needs a reason" in guard.reason_problem("  ")
    assert "CHG-1234" in guard.reason_problem("fixing things CHG-1")
    assert guard.reason_problem("CHG-42") == ""


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("approval, promote, */*/*, count=0, approvers=alice", "count='0'"),
        ("approval, promote, */*/*", "approvers="),
        ("approval, launch, */*/*, approvers=alice", "unknown action 'launch'"),
        ("freeze, promote, */*/*, name=X, weekly=Fri 16:00 - Mon 08:00, tz=Mars/Olympus", "IANA"),
        ("freeze, promote, */*/*, weekly=Fri 16:00 - Mon 08:00, tz=UTC", "name="),
        (
            "freeze, promote, */*/*, name=X, from=2026-12-02 00:00, until=2026-12-01 00:00, tz=UTC",
            "not after",
        ),
        ("reason, promote, */*/*, pattern=([", "not a regular expression"),
        ("approval, promote, */*/*, approvers=alice, colour=red", "unknown option 'colour'"),
    ],
)
def test_a_malformed_rule_names_its_line_and_problem(line: str, words: str) -> None:
    with pytest.raises(PolicyError) as raised:
        parse_rules("# rules\n" + line)
    assert "line 2" in str(raised.value) and words in str(raised.value)


def test_rules_are_reloaded_when_the_file_changes_and_a_broken_edit_keeps_the_last_good(
    tmp_path: Path, settings: Any
) -> None:
    from dashboard.guardrails.loader import current_rules

    path = tmp_path / "policy.csv"
    path.write_text("approval, promote, */*/*, count=1, approvers=alice\n")
    settings.RBAC_POLICY_FILE = str(path)
    assert current_rules().approvals[0].count == 1
    path.write_text("approval, promote, */*/*, count=3, approvers=alice\n")
    os.utime(path, (1, 1))  # a different mtime, however fast the edit
    assert current_rules().approvals[0].count == 3
    path.write_text("approval, promote, */*/*, count=nope, approvers=alice\n")
    os.utime(path, (2, 2))
    assert current_rules().approvals[0].count == 3
