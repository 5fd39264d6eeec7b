"""The router and autoscaler scenarios in a real browser (issue 19): the users node of the flow diagram
shows the weights the routing object itself carries, the object they come from and who last wrote it; the
weight fight is on the page with both writers; the HPA's card shows its bounds, counts and metrics."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.pages import check_rollout_page
from tests.browser.world import SCENARIO_KEYS, World, assert_clean, page_path, shot, world

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db]

SCENARIOS = ["istio-weight-fight", "nginx-canary", "gateway-api-canary", "hpa-sync-conflict"]


@pytest.fixture(scope="module")
def sims(django_db_setup: Any, django_db_blocker: Any, browser: Any) -> Iterator[World]:
    with world(
        SCENARIOS,
        django_db_blocker=django_db_blocker,
        browser=browser,
        redis_url=os.environ["REDIS_URL"],
        speed=6.0,
    ) as w:
        yield w


def _codes(view: dict[str, Any]) -> set[str]:
    return {f["code"] for f in view.get("findings") or ()}


def test_istio_weight_fight_users_node_shows_the_virtual_service_and_its_weights(sims: World) -> None:
    key = SCENARIO_KEYS["istio-weight-fight"]
    sims.wait_for_view(key, lambda v: bool(v.get("router")) and "weight-fight" in _codes(v))
    page = sims.open("viewer", page_path(key))
    users = page.locator("#flow [data-node=users]")
    users.wait_for()
    users_text = "(document.querySelector('#flow [data-node=users]')?.textContent || '')"
    page.wait_for_function(f"() => {users_text}.includes('VirtualService')")
    label = users.get_attribute("aria-label") or ""
    assert "weights from VirtualService reviews" in label
    assert "router: canary 20 / stable 80" in label or "router: canary 0 / stable 100" in label
    assert "written by argocd-controller" in label or "written by rollouts-controller" in label
    fight = page.locator(".finding", has_text="Weight fight")
    fight.first.wait_for()
    text = fight.first.inner_text()
    assert "argocd-controller" in text and "rollouts-controller" in text
    check_rollout_page(sims, page, key)
    assert_clean(page)
    shot(page, "istio-weight-fight", docs=True)


@pytest.mark.parametrize(
    ("scenario", "source", "weights"),
    [
        ("nginx-canary", "Ingress storefront-storefront-canary", "router: canary 50 / stable 50"),
        ("gateway-api-canary", "HTTPRoute payments", "router: canary "),
    ],
)
def test_the_users_node_names_the_routing_object_and_its_weights(
    sims: World, scenario: str, source: str, weights: str
) -> None:
    key = SCENARIO_KEYS[scenario]
    sims.wait_for_view(key, lambda v: bool(v.get("router")))
    page = sims.open("viewer", page_path(key))
    users = page.locator("#flow [data-node=users]")
    users.wait_for()
    label_of = "document.querySelector('#flow [data-node=users]')?.getAttribute('aria-label')"
    page.wait_for_function(f"s => ({label_of} || '').includes(s)", arg=f"weights from {source}")
    label = users.get_attribute("aria-label") or ""
    assert weights in label
    if scenario == "nginx-canary":
        assert "header route: X-Canary: always" in label
    assert_clean(page)


def test_the_hpa_card_shows_bounds_counts_and_metrics_and_the_conflict_is_found(sims: World) -> None:
    key = SCENARIO_KEYS["hpa-sync-conflict"]
    view = sims.wait_for_view(
        key, lambda v: bool(v.get("autoscaler")) and "autoscaler-sync-conflict" in _codes(v)
    )
    page = sims.open("viewer", page_path(key))
    card = page.locator("#autoscaler")
    card.wait_for()
    assert card.locator("h3").inner_text() == f"Autoscaler {view['autoscaler']['name']}"
    assert card.locator("[data-field=hpa-max]").inner_text() == str(view["autoscaler"]["maxReplicas"])
    assert "cpu" in card.locator(".hpa-metrics").inner_text()
    page.locator(".finding", has_text="spec.replicas").first.wait_for()
    assert_clean(page)
    shot(page, "hpa-sync-conflict")
