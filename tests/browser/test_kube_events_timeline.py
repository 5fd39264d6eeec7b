"""The release timeline lists the Kubernetes Events the controller recorded, a Warning marked as one."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from dashboard.domain.timeline import timeline_events
from dashboard.history.recorder import record_batch
from tests.browser.conftest import Server, screenshot
from tests.web.test_replay import T0, _view

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _event(name: str, kind: str, reason: str, message: str, at: str) -> dict[str, Any]:
    return {"name": name, "type": kind, "reason": reason, "message": message, "count": 1, "at": at}


UPDATED = _event("e1", "Normal", "RolloutUpdated", "Rollout updated to revision 2", "2026-11-29T10:01:00Z")
STEP = _event(
    "e2",
    "Normal",
    "RolloutStepCompleted",
    "Rollout step 1/5 completed (setWeight: 20)",
    "2026-11-29T10:02:00Z",
)
ABORTED = _event(
    "e3",
    "Warning",
    "RolloutAborted",
    "Rollout aborted update to revision 2: Step-based analysis phase error/failed",
    "2026-11-29T10:03:00Z",
)


def test_the_release_page_lists_the_controllers_events(page: Any, server: Server) -> None:
    canary = {"currentPodHash": "bbb", "revision": 2, "images": []}
    views = [
        _view(),
        _view(**canary, currentStepIndex=0, status="Progressing", events=[UPDATED]),
        _view(**canary, currentStepIndex=1, status="Progressing", events=[UPDATED, STEP]),
        _view(**canary, currentStepIndex=0, status="Degraded", aborted=True, events=[UPDATED, STEP, ABORTED]),
    ]
    for i in range(1, len(views)):
        at = T0 + timedelta(minutes=i)
        record_batch([(views[i], timeline_events(views[i - 1], views[i], at=at), at)])
    page.goto(server.url + "/rollouts/prod/shop/checkout/releases/bbb/")
    page.wait_for_selector("#release-events li[data-kind='kube.event']")
    items = page.locator("#release-events li[data-kind='kube.event']")
    texts = [items.nth(i).text_content() or "" for i in range(items.count())]
    assert any("RolloutStepCompleted: Rollout step 1/5 completed (setWeight: 20)" in t for t in texts)
    assert any("RolloutAborted: Rollout aborted update to revision 2" in t for t in texts)
    screenshot(page, "release-kube-events")
    # The list filters by what each event is: progress only hides them, Events · Rollout keeps only them.
    page.select_option("select[data-filters='release-events']", "progress")
    assert page.locator("#release-events li[data-kind='kube.event']:visible").count() == 0
    assert page.locator("#release-events li[data-kind='step.changed']:visible").count() > 0
    page.select_option("select[data-filters='release-events']", "kube:Rollout")
    visible = page.locator("#release-events li:visible")
    assert visible.count() == items.count() and visible.first.get_attribute("data-kind") == "kube.event"
