"""The Insights and Environments pages and API: filters, errors, CSV export, visibility, commit search."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from dashboard.history.models import Outcome, Release
from dashboard.web.insights import buckets, trend
from tests.web import samples

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_in(reader: Any) -> Client:
    client = Client()
    client.force_login(reader)
    return client


def _released(namespace: str, hours_ago: float) -> None:
    end = datetime.now(UTC) - timedelta(hours=hours_ago)
    Release.objects.create(
        cluster="prod",
        namespace=namespace,
        rollout="web",
        pod_hash=f"h{namespace}{hours_ago}",
        started_at=end - timedelta(hours=1),
        ended_at=end,
        outcome=Outcome.PROMOTED,
    )


def test_the_insights_api_answers_every_figure_with_trend_lines(client_in: Client) -> None:
    _released("shop", 30)
    _released("shop", 5)
    body = client_in.get("/api/v1/insights?days=7").json()
    assert body["releases"]["summary"]["deployments"] == 2
    assert set(body) >= {
        "releases",
        "leadTime",
        "restore",
        "steps",
        "pauses",
        "findings",
        "actors",
        "filters",
    }
    assert len(body["releases"]["trend"]["deployments"]) == len(body["releases"]["series"])


def test_a_bad_filter_is_a_400_naming_its_field(client_in: Client) -> None:
    response = client_in.get("/api/v1/insights?label=team")
    assert response.status_code == 400 and response.json()["field"] == "label"
    assert client_in.get("/api/v1/insights?format=xml").json()["field"] == "format"
    assert client_in.get("/api/v1/insights?format=csv&table=x").json()["field"] == "table"
    page = client_in.get("/insights/?days=0")
    assert page.status_code == 400 and b"days: expected a whole number" in page.content


def test_insights_export_as_csv(client_in: Client) -> None:
    _released("shop", 5)
    response = client_in.get("/api/v1/insights?days=7&format=csv")
    assert response["Content-Type"].startswith("text/csv")
    lines = response.content.decode().splitlines()
    assert lines[0].startswith("bucket,deployments,finished,failed,change_failure_rate")
    assert sum(int(line.split(",")[1]) for line in lines[1:]) == 1
    assert client_in.get("/api/v1/insights?format=csv&table=actors").content.decode().strip() == "actor"


def test_insights_through_the_api_count_only_what_the_user_may_see(settings: Any) -> None:
    from django.contrib.auth.models import User

    from dashboard.access.models import Grant, Role

    settings.RBAC_DEFAULT_ROLE = ""
    _released("shop", 5)
    _released("billing", 5)
    user = User.objects.create_user("shopper", password="x")
    Grant.objects.create(
        user=user,
        role=Role.objects.get_or_create(name="looker", defaults={"actions": "get"})[0],
        cluster="prod",
        namespace="shop",
    )
    client = Client()
    client.force_login(user)
    assert client.get("/api/v1/insights?days=7").json()["releases"]["summary"]["deployments"] == 1


def test_every_bucket_of_the_period_is_in_the_series_even_when_nothing_happened(client_in: Client) -> None:
    _released("shop", 5)
    series = client_in.get("/api/v1/insights?days=7").json()["releases"]["series"]
    assert len(series) == 8 and sum(p["deployments"] for p in series) == 1  # 7 days reach into an 8th date
    weeks = buckets(date(2026, 11, 4), date(2026, 11, 20), "week")
    assert weeks == ["2026-11-02", "2026-11-09", "2026-11-16"]


def test_the_trend_is_the_least_squares_line_through_known_points() -> None:
    assert trend([1, None, 3]) == [1.0, 2.0, 3.0]
    assert trend([5]) == [None]


def test_the_environments_api_lines_up_one_app_and_finds_where_an_image_runs(
    client_in: Client, live_bus: Any
) -> None:
    views = []
    for env, image in (("prod", "web:1"), ("dev", "web:3"), ("staging", "web:2")):
        view = samples.healthy_canary()
        view.update(
            namespace=f"shop-{env}",
            labels={"app.kubernetes.io/name": "web"},
            images=[{"image": image, "tags": ["stable"]}],
        )
        views.append(view)
    async_to_sync(live_bus.publish_many)([(v, []) for v in views])
    body = client_in.get("/api/v1/environments?commit=web:2").json()
    [app] = body["apps"]
    assert [p["environment"] for p in app["environments"]] == ["dev", "staging", "prod"]
    assert [p["stableImages"] for p in app["environments"]] == [["web:3"], ["web:2"], ["web:1"]]
    assert body["found"] == [
        {
            "app": "web",
            "environment": "staging",
            "key": views[2]["cluster"] + "/shop-staging/" + views[2]["name"],
        }
    ]
    assert client_in.get("/environments/").status_code == 200
