from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import Server, off_loop, screenshot
from tests.web import samples

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _publish(views: list[dict[str, Any]]) -> None:
    from dashboard.live.bus import get_bus

    async def write() -> None:
        bus = get_bus()
        await bus.publish_many([(v, []) for v in views])
        await bus.close()  # type: ignore[attr-defined]

    off_loop(write)


def test_the_fleet_lists_500_rollouts_and_its_filters_work(page: Any, server: Server) -> None:
    views = samples.fleet(500)
    _publish(views)
    page.goto(server.url + "/")
    page.wait_for_selector("#fleet-body tr.row")
    assert page.text_content("#fleet-summary", timeout=5000).startswith("500 rollouts")
    assert page.text_content("[data-count='']") == "500"
    # Every row names its controller (these sample rows carry none: Argo Rollouts is the default).
    assert page.text_content("#fleet-body tr.row [data-field=controller]") == "Argo Rollouts"
    screenshot(page, "fleet")

    # The critical group is the server's attention level: every Degraded rollout is in it.
    page.click(".chip[data-group=critical]")
    shown = int(page.text_content("[data-count=critical]") or "0")
    assert shown >= 50
    page.wait_for_function(
        "() => { const r = [...document.querySelectorAll('#fleet-body tr.row')];"
        " return r.length && r.every(x => x.dataset.attention === 'critical'); }"
    )
    rows = page.eval_on_selector_all(
        "#fleet-body tr.row", "rows => rows.map(r => [r.dataset.status, r.dataset.attention])"
    )
    assert {attention for _, attention in rows} == {"critical"} and "Degraded" in {
        status for status, _ in rows
    }

    page.click(".chip[data-group='']")
    page.fill("#fleet-search", "svc-00042")
    page.wait_for_function("() => document.querySelectorAll('#fleet-body tr.row').length === 1")
    page.fill("#fleet-search", "")
    page.select_option("#fleet-cluster", "prod-ap")
    page.click(".chip[data-group=waiting]")
    clusters = page.eval_on_selector_all(
        "#fleet-body tr.row", "rows => rows.map(r => r.children[2].textContent.split(' / ')[0])"
    )
    assert clusters and set(clusters) == {"prod-ap"}

    # Healthy rows are collapsed until asked for; favourites persist.
    page.select_option("#fleet-cluster", "")
    page.click(".chip[data-group=healthy]")
    page.wait_for_selector("#fleet-body tr.row")
    page.click("#fleet-body tr.row .fav")
    page.click("#fleet-favourites")
    page.wait_for_function("() => document.querySelectorAll('#fleet-body tr.row').length === 1")


def test_rows_update_in_place_without_reload(page: Any, server: Server) -> None:
    _publish([samples.paused_canary()])
    page.goto(server.url + "/")
    page.wait_for_selector("tr.row[data-key='prod-eu/payments/payments-api']")
    page.evaluate("window.__marker = 1")
    _publish([samples.paused_canary() | {"status": "Degraded", "message": "RolloutAborted: aborted"}])
    page.wait_for_selector(
        "tr.row[data-key='prod-eu/payments/payments-api'][data-status=Degraded]", timeout=10_000
    )
    assert page.evaluate("window.__marker") == 1


def test_an_open_page_recovers_by_itself_after_the_server_restarts(page: Any, server: Server) -> None:
    _publish([samples.paused_canary()])
    page.goto(server.url + "/rollouts/prod-eu/payments/payments-api/")
    page.wait_for_selector("#live-status[data-state=live]")
    page.evaluate("window.__marker = 1")
    server.stop()
    page.wait_for_selector("#live-status[data-state=reconnecting]", timeout=5000)
    _publish([samples.paused_canary() | {"step": "4/6", "currentStepIndex": 4}])  # changed while down
    server.start()
    page.wait_for_function(
        "() => document.querySelector('[data-field=step]').textContent === '4/6'", timeout=15_000
    )
    page.wait_for_selector("#live-status[data-state=live]")
    assert page.evaluate("window.__marker") == 1  # no reload
    screenshot(page, "rollout-after-restart")


def test_a_long_fleet_draws_only_the_rows_near_the_view_and_scrolls_through_every_one(
    page: Any, server: Server
) -> None:
    _publish(samples.fleet(1500))
    page.goto(server.url + "/?healthy=1")  # every group open: 1,500 rows in the list
    page.wait_for_selector("body[data-fleet=loaded] #fleet-body tr.row")
    first = page.eval_on_selector("#fleet-body tr.row", "row => row.dataset.key")
    seen: set[str] = set()
    while True:
        keys = page.eval_on_selector_all("#fleet-body tr.row", "rows => rows.map(r => r.dataset.key)")
        assert 0 < len(keys) < 120 and len(set(keys)) == len(keys)  # a window, each row once
        seen |= set(keys)
        at_end = page.evaluate(
            "() => new Promise(done => { const before = window.scrollY;"
            " window.scrollBy(0, Math.round(window.innerHeight * 0.8));"
            " requestAnimationFrame(() => requestAnimationFrame(() => done(window.scrollY === before))); })"
        )
        if at_end:
            break
    assert len(seen) == 1500  # scrolling drew every row on the way down
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_function(f"() => document.querySelector('#fleet-body tr.row').dataset.key === {first!r}")
    # Typed a key at a time (each narrows the last list), then deleted (each finds its list kept).
    page.type("#fleet-search", "svc-0004")
    page.wait_for_function("() => document.querySelectorAll('#fleet-body tr.row').length === 10")
    for shown in ("100", "1000", "1500", "1500"):
        page.press("#fleet-search", "Backspace")
        page.wait_for_function(
            f"() => document.getElementById('fleet-shown').textContent === 'Showing {shown} of 1500'"
        )
    page.type("#fleet-search", "00042")
    page.wait_for_function("() => document.querySelectorAll('#fleet-body tr.row').length === 1")
