from __future__ import annotations

from datetime import UTC, datetime

from dashboard.domain.attention import attention
from dashboard.live.bus import fleet_row as bus_row
from dashboard.web.fleet import attention_group, fleet_row, fleet_rows, group_counts
from tests.web import samples

NOW = datetime(2026, 11, 29, 10, 14, tzinfo=UTC)


def test_a_critical_finding_puts_a_progressing_rollout_under_critical() -> None:
    assert attention_group(samples.summary(samples.rerender_race())) == "critical"


def test_a_warning_finding_needs_attention() -> None:
    view = samples.healthy_canary()
    view["findings"] = [{"code": "weight-fight", "severity": "warning", "title": "Weight fight"}]
    row = fleet_row(bus_row(view), NOW)
    assert (row["group"], row["reason"], row["reasonCode"]) == ("attention", "Weight fight", "weight-fight")


def test_degraded_is_critical_even_without_findings() -> None:
    view = {**samples.aborted_canary(), "findings": []}
    assert attention_group(samples.summary(view)) == "critical"


def test_a_row_names_its_most_severe_open_finding() -> None:
    row = fleet_row(bus_row(samples.aborted_canary()), NOW)
    assert (row["attention"], row["reason"], row["reasonCode"]) == (
        "critical",
        "Analysis failed",
        "analysis-failed",
    )


def test_a_flagger_canary_waiting_for_approval_is_waiting_for_promotion() -> None:
    view = {
        "controller": "flagger",
        "phase": "WaitingPromotion",
        "status": "Paused",
        "message": "x",
        "findings": [],
    }
    judged = attention(view)
    assert judged["attention"] == "waiting"
    assert judged["reasonCode"] == "WaitingPromotion"


def test_a_promoted_healthy_rollout_whose_findings_cleared_is_healthy() -> None:
    view = {**samples.healthy_canary(), "findings": []}
    assert fleet_row(bus_row(view), NOW)["group"] == "healthy"


def test_a_pause_step_is_waiting_for_promotion_but_a_manual_pause_needs_attention() -> None:
    row = samples.summary(samples.paused_canary())
    assert attention_group(row) == "waiting"
    assert attention_group({**row, "message": "manually paused"}) == "attention"
    assert attention_group(samples.summary(samples.blue_green_preview())) == "waiting"


def test_healthy_and_unknown_statuses() -> None:
    assert attention_group(samples.summary(samples.healthy_canary())) == "healthy"
    assert attention_group({"status": None}) == "attention"


def test_a_row_says_why_in_words_and_hides_the_canary_hash_once_promoted() -> None:
    aborted = fleet_row(samples.summary({**samples.aborted_canary(), "findings": []}), NOW)
    assert aborted["reason"] == "aborted · stable serving"
    assert aborted["canaryHash"] == "a1c3e5f7b9"
    healthy = fleet_row(samples.summary(samples.healthy_canary()), NOW)
    assert healthy["canaryHash"] == ""
    assert healthy["stableHash"] == "9e3c7a1f5b"
    assert healthy["url"] == "/rollouts/prod-eu/shop/orders/"


def test_a_row_carries_step_segments_age_and_labels() -> None:
    row = fleet_row(samples.summary(samples.rerender_race()), NOW)
    assert (row["stepIndex"], row["stepCount"]) == (0, 5)
    assert row["age"] == "14 m"
    assert row["labels"] == {"app": "checkout", "team": "payments"}
    assert row["findings"] == {"critical": 1, "warning": 1, "info": 0}


def test_rows_are_sorted_attention_first_then_oldest_release() -> None:
    views = [
        samples.healthy_canary(),
        samples.paused_canary(),
        samples.aborted_canary(),
        samples.rerender_race(),
    ]
    rows = fleet_rows([samples.summary(v) for v in views], NOW)
    assert [r["group"] for r in rows] == ["critical", "critical", "waiting", "healthy"]
    assert group_counts(rows) == {"critical": 2, "attention": 0, "waiting": 1, "progressing": 0, "healthy": 1}


def test_names_are_quoted_in_urls() -> None:
    row = fleet_row({"cluster": "c", "namespace": "n", "name": "a/b?x", "status": "Healthy"}, NOW)
    assert row["url"] == "/rollouts/c/n/a%2Fb%3Fx/"
