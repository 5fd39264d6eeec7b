"""The generated history (``manage.py seed_history``, the benchmarks' data) fits the current schema, and can
put a long history on one named rollout (the history page's benchmark)."""

from __future__ import annotations

import pytest

from dashboard.actions.models import AuditEntry
from dashboard.history.models import Release, TimelineEvent
from dashboard.history.seed import seed_history

pytestmark = pytest.mark.django_db


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
