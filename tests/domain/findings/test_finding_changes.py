"""finding_changes: raised and cleared timeline events keyed by code and subject."""

from __future__ import annotations

from dataclasses import replace

from dashboard.domain.findings import Finding, finding_changes
from tests.domain.findings.builders import T0


def finding(code: str, subject: str = "", title: str = "t") -> Finding:
    return Finding(code, "critical", "prod", "shop", "checkout", title, "e", {}, (), None, T0, subject)


def test_new_findings_are_raised_and_gone_ones_cleared() -> None:
    a, b = finding("orphaned-canary-replicaset", "rs-1"), finding("orphaned-canary-replicaset", "rs-2")
    events = finding_changes([a], [b], at=T0)
    assert [(e["kind"], e["data"]["subject"]) for e in events] == [
        ("finding.raised", "rs-2"),
        ("finding.cleared", "rs-1"),
    ]
    assert events[0]["dedupe"] == "finding:orphaned-canary-replicaset:rs-2:2026-11-29T10:00:00.000Z"
    assert events[1]["title"] == "Cleared: t"


def test_a_finding_whose_evidence_changes_is_not_raised_again() -> None:
    a = finding("stuck-at-step-zero")
    assert finding_changes([a], [replace(a, title="Stuck at step 0 for 12 min")], at=T0) == []


def test_to_dict_is_the_finding_json_of_the_design() -> None:
    assert list(finding("weight-fight").to_dict()) == [
        "code", "severity", "cluster", "namespace", "rollout", "title", "explanation", "evidence", "runbook",
        "action", "actionParams", "since", "subject",
    ]  # fmt: skip
    assert finding("weight-fight").to_dict()["since"] == "2026-11-29T10:00:00Z"
