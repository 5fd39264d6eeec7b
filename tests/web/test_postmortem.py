"""A release's post-mortem, exported from the recorded history of the rerender-race scenario.

kubesim runs the scenario on a manual clock; each moment's view (built as the watcher builds it) is
recorded the way the watcher's recorder records it, so the export reads real history: both renders, the
step index going back to 0 and the pod hash changing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from dashboard.domain.postmortem import time_zone, to_markdown
from dashboard.domain.timeline import timeline_events
from dashboard.history.models import Release
from dashboard.history.recorder import record_batch
from dashboard.web.data import postmortem_sync
from tests.domain.findings.kubesim_runs import CLUSTER, run
from tests.web.scenario_views import scenario_view

pytestmark = pytest.mark.django_db

KEY = f"{CLUSTER}/web/frontend"


def record_scenario(name: str, namespace: str, rollout: str, seconds: int, every: int = 2) -> None:
    """Run ``name`` for ``seconds`` and record the rollout's history every ``every`` simulated seconds."""
    result = run(name)
    previous: dict[str, Any] | None = None
    for _ in range(seconds // every):
        result.sim.advance(every)
        view = scenario_view(result, namespace, rollout)
        at = result.now()
        record_batch([(view, timeline_events(previous, view, at=at), at)])
        previous = view


@pytest.fixture(scope="module")
def race(django_db_setup: Any, django_db_blocker: Any) -> Iterator[list[Release]]:
    """Recorded once for the module (the tests only read it), and removed afterwards."""
    with django_db_blocker.unblock():
        record_scenario("rerender-race", "web", "frontend", 90)
        yield list(Release.objects.filter(cluster=CLUSTER, rollout="frontend").order_by("started_at"))
        Release.objects.filter(cluster=CLUSTER, rollout="frontend").delete()


def test_the_rerender_race_post_mortem_shows_both_renders_the_step_reset_and_the_hash_change(
    race: list[Release],
) -> None:
    first, second = (r.pod_hash for r in race[-2:])
    document = postmortem_sync(
        KEY, second, zone=time_zone("Europe/Berlin"), base_url="https://rollouts.example.com"
    )
    assert document is not None
    markdown = to_markdown(document)
    renders = markdown.split("## Renders", 1)[1].split("## ", 1)[0]
    assert first in renders and second in renders and "revision 2" in renders and "revision 3" in renders
    resets = markdown.split("## Step resets", 1)[1].split("## ", 1)[0]
    assert "Step index went back from" in resets and "to 0" in resets
    changes = markdown.split("## Hash changes", 1)[1].split("## ", 1)[0]
    assert f"Pod hash changed from {first} to {second}" in changes and "re-render race" in changes
    assert "Rendered 2 times" in markdown
    # Times in UTC and in the reader's zone, and a link back to the page.
    assert "| UTC | Europe/Berlin |" in markdown and " CET |" in markdown
    assert f"https://rollouts.example.com/rollouts/{CLUSTER}/web/frontend/releases/{second}/" in markdown
    assert markdown.index("## Renders") < markdown.index("## Timeline")


def test_the_command_prints_the_newest_release_as_json_and_names_bad_arguments(
    race: list[Release], capsys: pytest.CaptureFixture[str]
) -> None:
    call_command("postmortem", KEY, "--format", "json", "--tz", "America/New_York")
    document = json.loads(capsys.readouterr().out)
    assert document["release"]["podHash"] == race[-1].pod_hash
    assert document["timeZone"] == "America/New_York"
    assert [r["podHash"] for r in document["renders"]] == [r.pod_hash for r in race[-2:]]
    assert document["timeline"][0]["at"].endswith("Z") and document["timeline"][0]["atLocal"].endswith(
        ("EST", "EDT")
    )
    call_command("postmortem", KEY, "--release", race[-2].pod_hash)
    assert capsys.readouterr().out.startswith(
        f"# Post-mortem: {CLUSTER}/web/frontend release {race[-2].pod_hash}"
    )
    with pytest.raises(CommandError, match="--tz: unknown time zone 'Mars/Olympus'"):
        call_command("postmortem", KEY, "--tz", "Mars/Olympus")
    with pytest.raises(CommandError, match=r"release nope of .* is not recorded"):
        call_command("postmortem", KEY, "--release", "nope")


def test_the_release_page_links_its_post_mortem_which_is_served_as_markdown_and_json(
    race: list[Release], reader: Any, live_bus: Any
) -> None:
    client = Client()
    client.force_login(reader)
    base = f"/rollouts/{CLUSTER}/web/frontend/releases/{race[-1].pod_hash}/"
    assert f'href="{base}postmortem.md"' in client.get(base).content.decode()
    md = client.get(base + "postmortem.md?tz=Asia/Tokyo")
    assert md.status_code == 200 and md["Content-Type"].startswith("text/markdown")
    assert "| UTC | Asia/Tokyo |" in md.content.decode()
    assert client.get(base + "postmortem.json").json()["release"]["podHash"] == race[-1].pod_hash
    bad = client.get(base + "postmortem.md?tz=Nowhere/At_All")
    assert bad.status_code == 400 and bad.json()["field"] == "tz"
    assert client.get(f"/rollouts/{CLUSTER}/web/frontend/releases/nope/postmortem.md").status_code == 404


def test_cluster_text_cannot_become_markup_in_the_markdown() -> None:
    detail = {
        "release": {"podHash": "abc", "startedAt": "2026-11-29T10:00:00Z", "outcome": "aborted"},
        "events": [
            {"kind": "kube.event", "at": "2026-11-29T10:01:00Z", "podHash": "abc",
             "title": "Evil: <img src=x onerror=alert(1)> | [click](javascript:x)",
             "data": {"type": "Warning"}},
        ],
    }  # fmt: skip
    from dashboard.domain.postmortem import postmortem

    document = postmortem(
        "prod/shop/x", detail, None, generated_at=datetime(2026, 11, 29, tzinfo=UTC), zone=time_zone(None)
    )
    markdown = to_markdown(document)
    assert "<img" not in markdown and "&lt;img" in markdown
    assert "\\| \\[click\\](javascript:x)" in markdown
