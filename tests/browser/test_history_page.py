from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from dashboard.domain.timeline import timeline_events
from dashboard.history.recorder import record_batch
from tests.browser.conftest import Server, screenshot
from tests.web.test_replay import CANARY, T0, _view

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# A canary that reached step 3, was re-rendered (new pod hash, back to step 0), then moved on again.
RACE = [
    CANARY[0],
    CANARY[1],
    CANARY[2],
    _view(currentPodHash="bbb", revision=2, currentStepIndex=3, setWeight=60, actualWeight=60,
          status="Progressing", images=[{"image": "shop/checkout:2", "tags": ["canary"]}]),
    _view(currentPodHash="ccc", revision=3, currentStepIndex=0, setWeight=20, actualWeight=0,
          status="Progressing", images=[{"image": "shop/checkout:2", "tags": ["canary"]}]),
    _view(currentPodHash="ccc", revision=3, currentStepIndex=1, setWeight=20, actualWeight=20,
          status="Paused", message="CanaryPauseStep",
          images=[{"image": "shop/checkout:2", "tags": ["canary"]}]),
]


def _record(views: list[dict[str, Any]]) -> None:
    for i in range(1, len(views)):
        at = T0 + timedelta(minutes=i)
        record_batch([(views[i], timeline_events(views[i - 1], views[i], at=at), at)])


def _rollout_node(page: Any) -> str:
    return page.text_content("#flow [data-node=rollout]") or ""


def test_scrubbing_back_through_a_release_redraws_the_flow_as_it_was(page: Any, server: Server) -> None:
    _record(RACE)
    page.goto(server.url + "/rollouts/prod/shop/checkout/history/")
    assert page.locator("#releases tr[data-release]").count() == 2  # bbb (superseded) and ccc
    assert page.locator("#releases a[href='/rollouts/prod/shop/checkout/releases/ccc/']").count() == 1
    page.goto(server.url + "/rollouts/prod/shop/checkout/releases/ccc/")
    page.wait_for_selector("#flow [data-node=rollout]")
    page.wait_for_function("() => document.querySelector('#release-chart .main-svg') !== null")
    last = _rollout_node(page)
    assert "Step 1/5" in last
    assert page.text_content("[data-marker=step-reset]") == "Hash changed · step 3 → 0"
    screenshot(page, "release-timeline")

    # Keyboard: focus the scrubber and go back to the moment before the hash changed.
    page.focus("#scrub")
    frame = int(page.get_attribute("body", "data-frame") or "0")
    while "Step 3/5" not in _rollout_node(page) and frame > 0:
        page.keyboard.press("ArrowLeft")
        frame -= 1
        page.wait_for_function("f => document.body.dataset.frame === String(f)", arg=frame)
    assert "Step 3/5" in _rollout_node(page)
    assert page.locator("[data-marker=step-reset]").count() == 0
    assert "bbb" in (page.text_content("#flow [data-node=canary]") or "")

    # Clicking an event jumps there too.
    page.click("#release-events li[data-kind='release.rerendered']")
    page.wait_for_selector("[data-marker=step-reset]")
