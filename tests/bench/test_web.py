"""``manage.py bench_web`` is a thin command over ``dashboard.bench.web``: bad arguments get a clear error."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import CommandError, call_command

from dashboard.bench.web import _view


@pytest.mark.parametrize(
    ("rollouts", "message"),
    [("ten", "--rollouts takes comma-separated counts, got 'ten'"), ("0", "--rollouts needs at least one")],
)
def test_bad_fleet_sizes_get_a_clear_error(settings: Any, rollouts: str, message: str) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:6379/0"
    with pytest.raises(CommandError, match=message):
        call_command("bench_web", "--rollouts", rollouts)


def test_the_generated_views_spread_over_clusters_namespaces_and_phases() -> None:
    views = [_view(i) for i in range(12)]
    assert {v["cluster"] for v in views} == {"prod-eu", "prod-us", "prod-ap"}
    assert {v["status"] for v in views} == {"Healthy", "Progressing", "Paused", "Degraded"}
    assert len({v["name"] for v in views}) == 12
