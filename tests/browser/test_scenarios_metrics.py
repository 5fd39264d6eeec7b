"""The built-in scenarios that need a metrics provider (the four Prometheus ones against a real
Prometheus, and metrics-provider-down) and the generated `fleet`, walked like test_scenarios_pages.py:
each page agrees with itself and the simulator, no page or console error, no sideways scroll at
1280 px, axe-core finds nothing serious or critical in the light and the dark theme.

A separate module (so a separate simulator): metrics-provider-down and healthy-canary both create
shop/error-rate, and the fleet's hundred rollouts would slow every other page down.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.pages import check_rollout_page
from tests.browser.world import (
    SCENARIO_KEYS,
    World,
    assert_clean,
    axe_sweep,
    page_path,
    shot,
    world,
)

# django_db: so pytest-django creates the test database (the module fixture writes the users once).
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.prometheus, pytest.mark.django_db]

ENDS: dict[str, Any] = {
    "metrics-provider-down": lambda v: v["status"] == "Degraded",
    "prometheus-healthy": lambda v: v["status"] == "Healthy" and len(v.get("revisions") or []) >= 2,
    "prometheus-error-spike": lambda v: v["status"] == "Degraded",
    "prometheus-latency-regression": lambda v: v["status"] == "Degraded",
    "prometheus-no-traffic": lambda v: v["status"] == "Degraded",
}
SCENARIOS = [*ENDS, "fleet"]


@pytest.fixture(scope="module")
def sims(django_db_setup: Any, django_db_blocker: Any, browser: Any) -> Iterator[World]:
    with world(
        SCENARIOS,
        django_db_blocker=django_db_blocker,
        browser=browser,
        redis_url=os.environ["REDIS_URL"],
        # Half the other worlds' speed: Prometheus scrapes in real time (1 s), so a faster simulation
        # leaves the analysis fewer scrapes of a young canary than the template's window assumes.
        speed=3.0,
        prometheus=True,
    ) as w:
        yield w


def _fleet_rollout(sims: World) -> str:
    """One of the generated fleet's rollouts (their names are not fixed)."""
    rollouts = sims.objects("argoproj.io/rollouts", "fleet-00")
    assert rollouts, "the fleet scenario created no rollouts in fleet-00"
    key = f"sim/fleet-00/{rollouts[0]['metadata']['name']}"
    sims.wait_for_view(key, lambda v: bool(v.get("status")))
    return key


@pytest.mark.parametrize("scenario", [*ENDS, "fleet"])
def test_each_metrics_scenario_page_agrees_with_itself_and_the_cluster(sims: World, scenario: str) -> None:
    key = _fleet_rollout(sims) if scenario == "fleet" else SCENARIO_KEYS[scenario]
    if scenario != "fleet":
        sims.wait_for_view(key, ENDS[scenario], timeout=150)
    page = sims.open("operator", page_path(key))
    try:
        check_rollout_page(sims, page, key)
        shot(page, f"scenario-{scenario}")
    finally:
        page.context.close()


def test_a_fleet_of_a_hundred_fits_1280_px_and_counts_agree(sims: World) -> None:
    _fleet_rollout(sims)
    page = sims.open("viewer", "/")
    try:
        page.wait_for_selector("body[data-fleet=loaded]")
        total = page.text_content(".chips .chip[data-group=''] .count")
        rows = page.evaluate("async () => (await (await fetch('/api/v1/fleet/rows')).json()).rows.length")
        assert total == str(rows) and rows >= 100
        assert_clean(page)
        shot(page, "scenario-fleet-100")
    finally:
        page.context.close()


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_axe_finds_nothing_serious_on_the_metrics_pages(sims: World, dark: bool) -> None:
    paths = [page_path(SCENARIO_KEYS[s]) for s in ENDS] + [page_path(_fleet_rollout(sims))]
    axe_sweep(sims, paths, dark=dark)
