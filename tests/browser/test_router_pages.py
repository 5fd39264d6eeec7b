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

SCENARIOS = [
    "istio-weight-fight",
    "istio-header-route",
    "nginx-canary",
    "gateway-api-canary",
    "alb-canary",
    "smi-canary",
    "traffic-ahead-of-capacity",
    "hpa-sync-conflict",
    "hpa-workload-ref-conflict",
    "hpa-at-max-during-analysis",
]
# The text each line of the users node draws (without the tooltip of an elided one).
USERS_LINES = (
    "Array.from(document.querySelectorAll('#flow [data-node=users] text'))"
    ".map(t => t.firstChild ? t.firstChild.nodeValue : '')"
)


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
    ("scenario", "kind", "name", "weights"),
    [
        ("nginx-canary", "Ingress", "storefront-storefront-canary", (50, 50)),
        ("gateway-api-canary", "HTTPRoute", "payments", None),
        ("alb-canary", "Ingress", "catalog-api-ingress", (50, 50)),
        ("smi-canary", "TrafficSplit", "ledger", (0, 100)),
        ("istio-header-route", "VirtualService", "ratings", (10, 90)),
    ],
)
def test_the_users_node_names_the_routing_object_and_its_weights(
    sims: World, scenario: str, kind: str, name: str, weights: tuple[int, int] | None
) -> None:
    key = SCENARIO_KEYS[scenario]

    def settled(view: dict[str, Any]) -> bool:
        router = view.get("router") or {}
        routes_done = scenario != "istio-header-route" or bool(router.get("mirrorRoutes"))
        return (
            bool(router)
            and routes_done
            and (weights is None or (router["canaryWeight"], router["stableWeight"]) == weights)
        )

    sims.wait_for_view(key, settled)
    page = sims.open("viewer", page_path(key))
    users = page.locator("#flow [data-node=users]")
    users.wait_for()
    label_of = "document.querySelector('#flow [data-node=users]')?.getAttribute('aria-label')"
    wanted = f"router: canary {weights[0]} / stable {weights[1]}" if weights else "router: canary "
    page.wait_for_function(f"s => ({label_of} || '').includes(s)", arg=wanted)
    label = users.get_attribute("aria-label") or ""
    assert f"weights from {kind} {name}" in label and "written by " in label
    lines = page.evaluate(USERS_LINES)
    # The kind whole on its own line, never "VirtualServ" / "ice"; an Ingress says whose it is.
    assert {"nginx-canary": "NGINX Ingress", "alb-canary": "ALB Ingress"}.get(scenario, kind) in lines
    assert name in lines or any(line.endswith("…") and name.startswith(line[:-1]) for line in lines)
    if scenario == "nginx-canary":
        assert "header route: X-Canary: always" in label
    if scenario == "istio-header-route":
        assert "header route: canary-header" in label and "mirror route: mirror-gets" in label
    assert_clean(page)
    if scenario == "alb-canary":
        shot(page, "alb-canary")


def test_traffic_ahead_of_capacity_is_a_critical_finding_with_the_weight_of_the_canary_ingress(
    sims: World,
) -> None:
    key = SCENARIO_KEYS["traffic-ahead-of-capacity"]
    sims.wait_for_view(key, lambda v: "traffic-ahead-of-capacity" in _codes(v))
    page = sims.open("viewer", page_path(key))
    finding = page.locator("#findings [data-code='traffic-ahead-of-capacity']")
    finding.wait_for()
    assert "60 % of traffic goes to a canary with 1 of" in finding.inner_text()
    label = page.locator("#flow [data-node=users]").get_attribute("aria-label") or ""
    assert "weights from Ingress quotes-quotes-canary" in label and "router: canary 60 / stable 40" in label
    assert page.locator("#autoscaler").is_hidden()  # no HPA scales it
    assert_clean(page)


def test_an_hpa_on_the_workload_ref_deployment_is_on_the_card_and_found(sims: World) -> None:
    key = SCENARIO_KEYS["hpa-workload-ref-conflict"]
    sims.wait_for_view(key, lambda v: "autoscaler-targets-workload-ref" in _codes(v))
    page = sims.open("viewer", page_path(key))
    card = page.locator("#autoscaler")
    card.wait_for()
    assert card.locator("h3").inner_text() == "Autoscaler api"
    assert "scales Deployment api (not the Rollout)" in card.inner_text()
    finding = page.locator("#findings [data-code='autoscaler-targets-workload-ref']")
    assert "HPA api scales the Deployment api, not the Rollout" in finding.inner_text()
    assert_clean(page)


def test_an_hpa_pinned_at_its_maximum_while_the_analysis_runs_is_found(sims: World) -> None:
    key = SCENARIO_KEYS["hpa-at-max-during-analysis"]
    sims.wait_for_view(key, lambda v: "autoscaler-at-max-during-analysis" in _codes(v))
    page = sims.open("viewer", page_path(key))
    card = page.locator("#autoscaler")
    card.wait_for()
    assert card.locator("[data-field=hpa-max]").inner_text() == "4"
    assert card.locator(".note.warning").inner_text() == "at its maximum"
    finding = page.locator("#findings [data-code='autoscaler-at-max-during-analysis']")
    text = finding.inner_text()
    assert "pinned at its maximum (4) during analysis" in text and "AnalysisRun orders-" in text
    assert "Running" in (page.locator("#flow [data-node=analysis]").get_attribute("aria-label") or "")
    assert_clean(page)
    shot(page, "hpa-at-max-during-analysis")


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
