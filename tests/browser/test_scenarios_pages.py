"""Every built-in scenario that needs no Prometheus, walked in a real browser at 1280 px: each rollout
page, the fleet, a history and a release page and the audit log agree with themselves and with the
simulator's objects, show no page or console error, never scroll sideways, and pass axe-core (no
serious or critical violation) in the light and the dark theme.

One kubesim (the scenarios sped up), one watcher, one server and one Chromium serve the whole module.
The Prometheus scenarios (and metrics-provider-down, which shares their namespace's template name)
are walked by test_scenarios_metrics.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.pages import check_canary_page, check_rollout_page
from tests.browser.world import (
    CLUSTER,
    SCENARIO_KEYS,
    World,
    assert_clean,
    axe_sweep,
    page_path,
    shot,
    world,
)

# django_db: so pytest-django creates the test database (the module fixture writes the users once).
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db]

# The state each scenario settles in (the bus's view of its rollout), checked before its page is read.
ENDS: dict[str, Any] = {
    "healthy-canary": lambda v: (
        v["status"] == "Healthy"
        and v.get("currentPodHash") == v.get("stableRS")
        and len(v.get("revisions") or []) >= 2
    ),
    "failed-analysis-abort": lambda v: v["status"] == "Degraded",
    "rerender-race": lambda v: v["status"] == "Paused" and len(v.get("revisions") or []) >= 3,
    "paused-reads-degraded": lambda v: v["status"] == "Paused" and v.get("step") == "1/2",
    "orphaned-canary": lambda v: v["status"] == "Degraded",
    "weight-fight": lambda v: v["status"] == "Paused",
    "blue-green": lambda v: v["status"] == "Healthy" and len(v.get("revisions") or []) >= 2,
    "progress-deadline": lambda v: v["status"] == "Degraded",
    "flagger-canary": lambda v: v.get("phase") == "Succeeded" or v.get("status") == "Healthy",
    "flagger-failed": lambda v: v.get("phase") == "Failed" or v.get("status") == "Degraded",
    "flagger-waiting-approval": lambda v: v.get("phase") == "WaitingPromotion",
}
SCENARIOS = list(ENDS)
# One app in three namespaces, for the environments page (its rollouts' own pages are those of a canary).
ENVIRONMENTS = {env: f"{CLUSTER}/bookstore-{env}/bookstore" for env in ("dev", "staging", "prod")}


@pytest.fixture(scope="module")
def sims(django_db_setup: Any, django_db_blocker: Any, browser: Any) -> Iterator[World]:
    with world(
        [*SCENARIOS, "environments"],
        django_db_blocker=django_db_blocker,
        browser=browser,
        redis_url=os.environ["REDIS_URL"],
        speed=6.0,
    ) as w:
        yield w


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_each_scenario_page_agrees_with_itself_and_the_cluster(sims: World, scenario: str) -> None:
    key = SCENARIO_KEYS[scenario]
    sims.wait_for_view(key, ENDS[scenario], timeout=120)
    page = sims.open("operator", page_path(key))
    try:
        if scenario.startswith("flagger-"):
            check_canary_page(sims, page, key)
        else:
            check_rollout_page(sims, page, key)
        shot(page, f"scenario-{scenario}", docs=scenario in ("orphaned-canary", "flagger-waiting-approval"))
    finally:
        page.context.close()


def test_the_fleet_groups_and_counts_come_from_the_attention_field(sims: World) -> None:
    for scenario in SCENARIOS:
        sims.wait_for_view(SCENARIO_KEYS[scenario], lambda v: bool(v), timeout=60)
    page = sims.open("viewer", "/")
    try:
        page.wait_for_selector("body[data-fleet=loaded]")
        rows = page.evaluate(
            """async () => { const d = await (await fetch('/api/v1/fleet/rows')).json();
                 return d.rows.map(r => Object.fromEntries(d.fields.map((f, i) => [f, r[i]]))); }"""
        )
        by_key = {r["key"]: r for r in rows}
        counts: dict[str, int] = {}
        for row in rows:
            group = row.get("attention") or row.get("group")
            counts[group] = counts.get(group, 0) + 1
        for chip in page.locator(".chips .chip[data-group]").all():
            group = chip.get_attribute("data-group") or ""
            shown = chip.locator(".count").text_content()
            expected = len(rows) if not group else counts.get(group, 0)
            assert shown == str(expected), f"chip {group or 'All'} says {shown}, the rows say {expected}"
        for scenario in SCENARIOS:  # each row's status is the one its own page shows (checked above)
            row = by_key[SCENARIO_KEYS[scenario]]
            if row.get("reasonCode") is not None and row.get("attention") in ("critical", "attention"):
                assert row.get("reason"), f"{row['key']} needs attention without a reason"
        assert_clean(page)
        shot(page, "scenario-fleet")
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url) if "/api/v1/fleet/rows" in r.url else None)
        page.reload()
        page.wait_for_selector("body[data-fleet=loaded]")
        page.wait_for_timeout(300)
        assert len(requests) == 1, f"the fleet rows were fetched {len(requests)} times"
    finally:
        page.context.close()


def test_a_rollout_page_opens_one_live_websocket(sims: World) -> None:
    page = sims.open("operator", page_path(SCENARIO_KEYS["paused-reads-degraded"]), viewport=None)
    try:
        sockets: list[str] = []
        page.on("websocket", lambda ws: sockets.append(ws.url))
        page.reload()
        page.wait_for_selector("#live-status[data-state=live]")
        page.wait_for_timeout(500)
        rollout_sockets = [u for u in sockets if "/ws/rollouts/" in u]
        assert len(rollout_sockets) == 1, sockets
    finally:
        page.context.close()


def _pages_for_axe(sims: World) -> list[str]:
    race = sims.wait_for_view(SCENARIO_KEYS["rerender-race"], ENDS["rerender-race"], timeout=120)
    history = page_path(SCENARIO_KEYS["rerender-race"]) + "history/"
    release = page_path(SCENARIO_KEYS["rerender-race"]) + f"releases/{race['currentPodHash']}/"
    return ["/", history, release, "/audit/", "/environments/", "/insights/"] + [
        page_path(SCENARIO_KEYS[s]) for s in SCENARIOS
    ]


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_axe_finds_nothing_serious_on_any_page(sims: World, dark: bool) -> None:
    axe_sweep(sims, _pages_for_axe(sims), dark=dark)


def test_the_release_page_names_the_rerender_race_and_its_legend_shows_the_hash_change(sims: World) -> None:
    race = sims.wait_for_view(SCENARIO_KEYS["rerender-race"], ENDS["rerender-race"], timeout=120)
    page = sims.open(
        "viewer", page_path(SCENARIO_KEYS["rerender-race"]) + f"releases/{race['currentPodHash']}/"
    )
    try:
        page.wait_for_load_state("load")
        page.wait_for_function(
            "() => { const c = document.getElementById('release-chart'); return c && c.data; }"
        )
        names = page.evaluate("() => document.getElementById('release-chart').data.map(t => t.name)")
        kinds = page.evaluate(
            "() => JSON.parse(document.getElementById('initial').textContent).events.map(e => e.kind)"
        )
        if "release.rerendered" in kinds:  # the server names the incident; the page shows it
            incident = page.locator("#release-incidents [data-incident=rerender-race]")
            assert incident.is_visible() and "Re-render race" in (incident.text_content() or "")
        markers = page.evaluate(
            "() => JSON.parse(document.getElementById('initial').textContent).chart.markers.map(m => m.group)"
        )
        for group in set(markers):
            assert any(n.startswith(group) for n in names), f"{group} missing from the legend {names}"
        assert page.get_attribute("#scrub", "aria-label")
        assert_clean(page)
        shot(page, "scenario-release-rerender")
    finally:
        page.context.close()


def test_the_suites_scenario_table_names_what_each_scenario_creates() -> None:
    from dashboard.demo import demo_legend
    from kubesim.scenarios import builtin_names

    for entry in demo_legend(builtin_names()):
        if entry["scenario"] == "fleet":
            continue
        labels = {obj["label"] for obj in entry["objects"]}
        assert SCENARIO_KEYS[entry["scenario"]].removeprefix(f"{CLUSTER}/") in labels, entry


def test_the_environments_page_lines_up_the_demo_app_in_three_environments(sims: World) -> None:
    sims.wait_for_view(ENVIRONMENTS["staging"], lambda v: v["status"] == "Paused", timeout=120)
    page = sims.open("viewer", "/environments/", viewport={"width": 1440, "height": 900})
    try:
        app = page.locator(".env-app[data-app=bookstore]")
        # Live: the page follows the fleet socket until dev has finished its yellow release.
        page.wait_for_function(
            """() => { const p = document.querySelector(
                   '.env-app[data-app=bookstore] .env-place[data-env=dev]');
                 return p && p.querySelector('.env-phase').textContent === 'Healthy'
                   && p.textContent.includes(':yellow'); }""",
            timeout=60_000,
        )
        assert [p.get_attribute("data-env") for p in app.locator(".env-place").all()] == [
            "dev",
            "staging",
            "prod",
        ]
        staging = app.locator(".env-place[data-env=staging]")
        assert staging.locator(".env-phase").text_content() == "Paused"
        assert ":green" in (staging.locator("[data-tag=canary]").text_content() or "")
        assert ":blue" in (app.locator(".env-place[data-env=prod] [data-tag=stable]").text_content() or "")
        assert_clean(page)
        shot(page, "environments", docs=True)
        page.fill("#env-search", ":green")
        page.click("#env-search-form button[type=submit]")
        page.wait_for_selector(".env-place.match[data-env=staging]")
        assert "bookstore staging" in (page.locator("#env-found").text_content() or "")
    finally:
        page.context.close()
