"""Each insights figure's definition, pinned on small hand-made histories (docs/user-guide.md, "Insights")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from dashboard.access.models import Grant, Role
from dashboard.actions.models import AuditEntry
from dashboard.actions.models import Outcome as AuditOutcome
from dashboard.domain import timeline as tl
from dashboard.gitops.models import Commit, Repository
from dashboard.history.insights import Filters, InsightsError, insights, parse_filters
from dashboard.history.models import Outcome, Release, TimelineEvent

pytestmark = pytest.mark.django_db

DAY0 = datetime(2026, 11, 2, tzinfo=UTC)
PERIOD = Filters(start=DAY0, end=DAY0 + timedelta(days=7), bucket="day")


def at(hours: float, day: int = 0) -> datetime:
    return DAY0 + timedelta(days=day, hours=hours)


def release(
    pod_hash: str,
    start: datetime,
    end: datetime | None,
    outcome: str = Outcome.PROMOTED,
    *,
    rollout: str = "web",
    namespace: str = "shop",
    cluster: str = "prod",
    **fields: Any,
) -> Release:
    return Release.objects.create(
        cluster=cluster,
        namespace=namespace,
        rollout=rollout,
        pod_hash=pod_hash,
        started_at=start,
        ended_at=end,
        outcome=outcome,
        **fields,
    )


def event(rel: Release, kind: str, when: datetime, dedupe: str = "", **data: Any) -> TimelineEvent:
    return TimelineEvent.objects.create(
        release=rel, kind=kind, at=when, dedupe=dedupe or f"{kind}:{when}", data=data
    )


def figures(filters: Filters = PERIOD, user: Any = None) -> dict[str, Any]:
    return insights(filters, user if user is not None else superuser())


def superuser() -> User:
    return User.objects.get_or_create(username="root", defaults={"is_superuser": True})[0]


def test_a_deployment_is_a_release_seen_to_end_fully_promoted_in_the_period() -> None:
    release("a", at(1), at(2))  # counted
    release("b", at(3), at(3))  # already promoted when first seen: not a deployment the dashboard saw
    release("c", at(1, day=-1), at(-1))  # ended before the period
    release("d", at(4), None, Outcome.IN_PROGRESS)
    release("e", at(5), at(6), Outcome.SUPERSEDED)
    release("f", at(1, day=2), at(2, day=2))
    result = figures()["releases"]
    assert result["summary"]["deployments"] == 2
    assert result["summary"]["perDay"] == round(2 / 7, 3)
    assert [(p["bucket"], p["deployments"]) for p in result["series"]] == [
        ("2026-11-02", 1),
        ("2026-11-04", 1),
    ]


def test_the_change_failure_rate_counts_aborted_rolled_back_and_failed_analysis_releases() -> None:
    release("ok", at(1), at(2))
    release("aborted", at(3), at(4), Outcome.ABORTED)
    release("back", at(5), at(6), Outcome.SUPERSEDED, rolled_back_at=at(6))
    analysed = release("retried", at(7), at(9))  # promoted in the end, but its analysis failed once
    event(analysed, tl.ANALYSIS_FINISHED, at(8), status="Failed")
    passed = release("passed", at(10), at(11))
    event(passed, tl.ANALYSIS_FINISHED, at(10.5), status="Successful")
    release("gone", at(12), at(13), Outcome.SUPERSEDED)  # superseded mid-flight: neither outcome
    summary = figures()["releases"]["summary"]
    assert (summary["finished"], summary["failed"], summary["aborted"], summary["rolledBack"]) == (5, 3, 1, 1)
    assert summary["changeFailureRate"] == 0.6


def test_lead_time_runs_from_the_merge_of_the_released_commit_to_full_promotion() -> None:
    repo = Repository.objects.create(
        key="git.example.com/shop/web", url="https://git.example.com/shop/web", provider="github"
    )
    Commit.objects.create(repository=repo, sha="a" * 40, received_at=at(0), merged_at=at(0))
    Commit.objects.create(repository=repo, sha="b" * 40, received_at=at(0), merged_at=None)  # a push
    release("r1", at(1), at(2), git_revision="A" * 40)  # 2 h after its merge (the sha's case is ignored)
    release("r2", at(1), at(4), git_revision="a" * 40, rollout="api")  # 4 h
    release("r3", at(1), at(5), git_revision="b" * 40)  # no merge known: left out
    release("r4", at(1), at(6))  # no git revision: left out
    lead = figures()["leadTime"]["summary"]
    assert lead == {"releases": 2, "medianSeconds": 3 * 3600.0, "p90Seconds": 3.8 * 3600}


def test_time_to_restore_runs_from_entering_degraded_to_the_next_healthy() -> None:
    first = release("a", at(0), at(1), Outcome.ABORTED)
    event(first, tl.PHASE_CHANGED, at(1), toStatus="Degraded")
    event(first, tl.PHASE_CHANGED, at(1.5), toStatus="Degraded")  # still the same incident
    second = release("b", at(2), at(3))
    event(second, tl.PHASE_CHANGED, at(2), toStatus="Progressing")
    event(second, tl.PHASE_CHANGED, at(3), toStatus="Healthy")  # restored after 2 h
    other = release("c", at(4), None, Outcome.ABORTED, rollout="api")
    event(other, tl.PHASE_CHANGED, at(4), toStatus="Degraded")  # never restored: open
    restore = figures()["restore"]["summary"]
    assert (restore["incidents"], restore["open"], restore["medianSeconds"]) == (2, 1, 7200.0)


def test_time_at_a_step_runs_to_the_next_step_or_the_release_end_and_skips_inferred_steps() -> None:
    rel = release("a", at(0), at(3))
    event(rel, tl.STEP_CHANGED, at(0), "step:1", toIndex=1, inferred=False)
    event(rel, tl.STEP_CHANGED, at(1), "step:2", toIndex=2, inferred=True)  # passed unseen: no timing
    event(rel, tl.STEP_CHANGED, at(1), "step:3", toIndex=3, inferred=False)
    other = release("b", at(0), at(4), rollout="api")
    event(other, tl.STEP_CHANGED, at(0), "step:1", toIndex=1, inferred=False)
    event(other, tl.STEP_CHANGED, at(3), "step:2", toIndex=2, inferred=False)
    running = release("c", at(0), None, Outcome.IN_PROGRESS, rollout="cart")
    event(running, tl.STEP_CHANGED, at(0), "step:2", toIndex=2, inferred=False)  # not over yet: left out
    steps = {s["step"]: s for s in figures()["steps"]}
    assert steps[1]["count"] == 2 and steps[1]["medianSeconds"] == 2 * 3600.0  # 1 h and 3 h
    assert steps[2] == {"step": 2, "count": 1, "medianSeconds": 3600.0, "p90Seconds": 3600.0}
    assert steps[3]["medianSeconds"] == 2 * 3600.0  # the last step lasts until the release ended


def test_a_pause_lasts_until_the_release_next_ends_a_pause_and_open_ones_are_counted_apart() -> None:
    rel = release("a", at(0), at(5))
    event(rel, tl.PAUSE_STARTED, at(0), "p1", reason="CanaryPauseStep")
    event(rel, tl.PAUSE_ENDED, at(0.5), "u1")
    event(rel, tl.PAUSE_STARTED, at(1), "p2", reason="CanaryPauseStep")
    event(rel, tl.PAUSE_ENDED, at(2.5), "u2")
    event(rel, tl.PAUSE_STARTED, at(3), "p3", reason="BlueGreenPause")
    pauses = {p["reason"]: p for p in figures()["pauses"]}
    assert pauses["CanaryPauseStep"]["count"] == 2 and pauses["CanaryPauseStep"]["medianSeconds"] == 3600.0
    assert (pauses["BlueGreenPause"]["open"], pauses["BlueGreenPause"]["medianSeconds"]) == (1, None)


def test_a_finding_is_open_until_its_clear_on_the_same_rollout_even_in_a_later_release() -> None:
    first = release("a", at(0), at(2), Outcome.SUPERSEDED)
    later = release("b", at(2), at(5))
    event(
        first, tl.FINDING_RAISED, at(1), "finding:weight-fight:t1", code="weight-fight", severity="critical"
    )
    event(later, tl.FINDING_CLEARED, at(4), "finding:weight-fight:t1:cleared", code="weight-fight")
    event(
        later, tl.FINDING_RAISED, at(4.5), "finding:weight-fight:t2", code="weight-fight", severity="critical"
    )
    elsewhere = release("c", at(0), at(1), rollout="api")
    event(elsewhere, tl.FINDING_CLEARED, at(1), "finding:weight-fight:t2:cleared", code="weight-fight")
    found = figures()["findings"]
    assert found == [
        {
            "code": "weight-fight",
            "severity": "critical",
            "raised": 2,
            "open": 1,
            "medianOpenSeconds": 3 * 3600.0,
            "p90OpenSeconds": 3 * 3600.0,
        }
    ]


def test_actors_count_done_actions_by_person() -> None:
    for who, action, outcome in [
        ("ana", "promote", AuditOutcome.DONE),
        ("ana", "promote", AuditOutcome.DONE),
        ("bo", "abort", AuditOutcome.DONE),
        ("bo", "promote", AuditOutcome.CONFLICT),
    ]:
        attempt = AuditEntry.objects.create(
            at=at(1),
            actor=who,
            action=action,
            cluster="prod",
            namespace="shop",
            rollout="web",
            outcome=AuditOutcome.ACCEPTED,
        )
        AuditEntry.objects.create(
            at=at(1),
            actor=who,
            action=action,
            cluster="prod",
            namespace="shop",
            rollout="web",
            outcome=outcome,
            attempt=attempt,
        )
    assert figures()["actors"] == [
        {"actor": "ana", "action": "promote", "count": 2},
        {"actor": "bo", "action": "abort", "count": 1},
    ]


def test_filters_narrow_every_figure_by_cluster_namespace_rollout_and_label() -> None:
    release("a", at(1), at(2), labels={"team": "payments"})
    release("b", at(1), at(2), rollout="api", labels={"team": "search"})
    release("c", at(1), at(2), cluster="staging")
    count = lambda **f: figures(Filters(start=PERIOD.start, end=PERIOD.end, **f))["releases"]["summary"][  # noqa: E731
        "deployments"
    ]
    assert count() == 3
    assert count(cluster="staging") == 1
    assert count(rollout="api") == 1
    assert count(label=("team", "payments")) == 1
    assert count(namespace="nowhere") == 0


def test_a_namespace_scoped_user_counts_only_the_rollouts_they_may_see() -> None:
    for ns in ("shop", "billing"):
        rel = release(f"h-{ns}", at(1), at(2), Outcome.ABORTED, namespace=ns)
        event(rel, tl.FINDING_RAISED, at(1.5), f"finding:x:{ns}", code="stuck", severity="warning")
        attempt = AuditEntry.objects.create(
            at=at(1),
            actor="ana",
            action="abort",
            cluster="prod",
            namespace=ns,
            rollout="web",
            outcome=AuditOutcome.ACCEPTED,
        )
        AuditEntry.objects.create(
            at=at(1),
            actor="ana",
            action="abort",
            cluster="prod",
            namespace=ns,
            rollout="web",
            outcome=AuditOutcome.DONE,
            attempt=attempt,
        )
    shopper = User.objects.create_user("shopper", password="x")
    viewer = Role.objects.get_or_create(name="viewer-ish", defaults={"actions": "get"})[0]
    Grant.objects.create(user=shopper, role=viewer, cluster="prod", namespace="shop")
    scoped = insights(PERIOD, shopper)
    assert scoped["releases"]["summary"]["finished"] == 1
    assert scoped["findings"][0]["raised"] == 1
    assert scoped["actors"] == [{"actor": "ana", "action": "abort", "count": 1}]
    assert figures()["releases"]["summary"]["finished"] == 2
    nobody = User.objects.create_user("nobody", password="x")
    assert insights(PERIOD, nobody)["releases"]["summary"]["finished"] == 0


NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def test_filters_come_from_the_query_string_and_bad_ones_name_their_field() -> None:
    f = parse_filters(
        {"from": "2026-11-01", "to": "2026-11-07", "label": "team=payments", "cluster": "prod"}, now=NOW
    )
    assert (f.start, f.end, f.bucket, f.label) == (
        datetime(2026, 11, 1, tzinfo=UTC),
        datetime(2026, 11, 8, tzinfo=UTC),
        "day",
        ("team", "payments"),
    )
    assert parse_filters({"days": "90"}, now=NOW).bucket == "week"
    for query, field in [
        ({"days": "x"}, "days"),
        ({"from": "yesterday"}, "from"),
        ({"label": "team"}, "label"),
        ({"bucket": "hour"}, "bucket"),
        ({"from": "2026-11-05", "to": "2026-11-01"}, "from"),
    ]:
        with pytest.raises(InsightsError) as error:
            parse_filters(query, now=NOW)
        assert error.value.field == field


def test_labels_and_rollbacks_survive_an_export_and_an_import() -> None:
    from dashboard.history.jsonl import export_lines, import_lines

    release("a", at(1), at(2), labels={"team": "payments"}, rolled_back_at=at(3))
    lines = list(export_lines())
    Release.objects.all().delete()
    import_lines(lines)
    copy = Release.objects.get(pod_hash="a")
    assert (copy.labels, copy.rolled_back_at) == ({"team": "payments"}, at(3))


@pytest.mark.django_db(transaction=True)
def test_figures_read_on_several_connections_at_once_equal_those_read_in_turn_in_a_transaction() -> None:
    first = release("a", at(0), at(1), Outcome.ABORTED)
    event(first, tl.PHASE_CHANGED, at(1), toStatus="Degraded")
    event(first, tl.STEP_CHANGED, at(0.5), "step:1", toIndex=1)
    event(first, tl.PAUSE_STARTED, at(0.6), "pause:1", reason="CanaryPauseStep")
    event(first, tl.FINDING_RAISED, at(0.7), "finding:x", code="stuck-paused", severity="warning")
    second = release("b", at(2), at(3))
    event(second, tl.PHASE_CHANGED, at(3), toStatus="Healthy")
    event(second, tl.FINDING_CLEARED, at(2.5), "finding:x:cleared", code="stuck-paused")
    assert not connection.in_atomic_block  # so insights() reads its figures on several connections

    together = figures()
    with transaction.atomic():  # only this connection sees a transaction's rows: read in turn on it
        in_turn = figures()

    assert together == in_turn
    assert together["releases"]["summary"]["finished"] == 2
    assert together["findings"][0]["open"] == 0
