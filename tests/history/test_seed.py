"""The generated history (``manage.py seed_history``, the benchmarks' data) fits the current schema, fills
every table the insights read, and can put a long history on one named rollout (the history page's
benchmark)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User

from dashboard.actions.models import AuditEntry
from dashboard.gitops.models import Commit
from dashboard.history.insights import Filters, insights
from dashboard.history.models import Release, TimelineEvent
from dashboard.history.seed import seed_history

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def test_every_release_goes_on_the_named_rollout_with_its_timeline_and_audit() -> None:
    seeded = seed_history(200, rollout=("prod", "shop", "web"), days=30)

    releases = Release.objects.filter(cluster="prod", namespace="shop", rollout="web")
    assert releases.count() == seeded.releases == 200
    assert Release.objects.count() == 200
    assert TimelineEvent.objects.filter(release__rollout="web").count() == seeded.events > 200
    assert AuditEntry.objects.filter(rollout="web").count() == 2 * seeded.actions > 0
    assert sorted(releases.values_list("revision", flat=True)) == list(range(1, 201))


def test_without_a_rollout_the_releases_spread_over_the_fleet() -> None:
    seed_history(60, rollouts=6, days=30)

    assert Release.objects.values("rollout").distinct().count() == 6


def test_a_seeded_history_fills_releases_events_commits_and_audit_rows_that_insights_count() -> None:
    seeded = seed_history(300, rollouts=20, days=60, now=NOW)

    assert Release.objects.count() == seeded.releases == 300
    assert TimelineEvent.objects.count() == seeded.events > 300
    assert Commit.objects.count() == seeded.commits > 0
    assert AuditEntry.objects.filter(attempt__isnull=False).count() == seeded.actions > 0
    admin = User.objects.create(username="root", is_superuser=True)
    figures = insights(Filters(start=datetime(2026, 10, 1, tzinfo=UTC), end=NOW), admin)
    assert figures["releases"]["summary"]["deployments"] > 0


def test_a_second_seed_adds_to_the_history_without_colliding_with_the_first() -> None:
    seed_history(50, rollouts=5, days=30, now=NOW)
    seed_history(50, rollouts=5, days=30, now=NOW)

    assert Release.objects.count() == 100
    assert Release.objects.create(
        cluster="c", namespace="n", rollout="r", pod_hash="new", started_at=NOW
    ).pk > max(Release.objects.exclude(pod_hash="new").values_list("pk", flat=True))
