"""Unwedge, promote, abort and skip done by clicking, as users of the built-in roles, against the
scenarios that call for them; users who may not see the button disabled with the reason.

The real path throughout: the click POSTs with the page's ``seen``, a Celery worker on this module's
own queue sends the request to kubesim, the watcher sees the change and the page follows over its
websocket. Each action is run by one role that may run it and checked enabled (its dialog opened and
cancelled, nothing sent) for the other; the simulator's objects say whether it happened.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.browser.pages import orphans_in_cluster, scaling_down_in_cluster
from tests.browser.world import SCENARIO_KEYS, World, assert_clean, page_path, shot, world

# django_db: so pytest-django creates the test database (the module fixture writes the users once).
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db]

SCENARIOS = ["orphaned-canary", "paused-reads-degraded", "weight-fight", "rerender-race", "blue-green"]
ORPHANED = SCENARIO_KEYS["orphaned-canary"]
PAUSED = SCENARIO_KEYS["paused-reads-degraded"]
FIGHT = SCENARIO_KEYS["weight-fight"]
RACE = SCENARIO_KEYS["rerender-race"]


@pytest.fixture(scope="module")
def sims(django_db_setup: Any, django_db_blocker: Any, browser: Any) -> Iterator[World]:
    with world(
        SCENARIOS,
        django_db_blocker=django_db_blocker,
        browser=browser,
        redis_url=os.environ["REDIS_URL"],
        speed=4.0,
        actions=True,
    ) as w:
        yield w


def _until(what: str, check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.25)
    raise AssertionError(f"{what} did not happen within {timeout:g} s")


def _posts(page: Any) -> list[str]:
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.method == "POST" and "/actions/" in r.url else None)
    return sent


def _wait_disabled(page: Any, selector: str, disabled: bool) -> None:
    page.wait_for_function(
        "([s, d]) => (document.querySelector(s).getAttribute('aria-disabled') === 'true') === d",
        arg=[selector, disabled],
    )


def _bar(page: Any, action: str) -> Any:
    button = page.locator(f"#rollout-actions button[data-action='{action}']")
    button.wait_for()
    return button


def _confirm_if_asked(page: Any) -> str:
    """Confirm the dialog when the action asks first; returns what it said."""
    dialog = page.locator("#action-confirm")
    try:
        dialog.wait_for(state="visible", timeout=1500)
    except Exception:
        return ""
    said = page.text_content("#action-confirm") or ""
    page.click("#action-confirm-go")
    dialog.wait_for(state="hidden")
    return said


def _opens_and_cancels(page: Any, button: Any) -> None:
    """The button is enabled for this user; if it asks first, cancelling sends nothing."""
    assert button.get_attribute("aria-disabled") != "true", button.get_attribute("title")
    if button.get_attribute("data-action") in ("abort", "unwedge", "promote-full", "undo", "restart"):
        posts = _posts(page)
        button.click()
        page.locator("#action-confirm").wait_for(state="visible")
        page.click("#action-confirm button[value=cancel]")
        page.locator("#action-confirm").wait_for(state="hidden")
        page.wait_for_timeout(200)
        assert posts == []


def test_a_viewer_sees_every_action_disabled_with_the_reason(sims: World) -> None:
    sims.wait_for_view(PAUSED, lambda v: v["status"] == "Paused" and v.get("step") == "1/2")
    page = sims.open("viewer", page_path(PAUSED))
    try:
        buttons = page.locator("#rollout-actions button[data-action]")
        buttons.first.wait_for()
        for button in buttons.all():
            assert button.get_attribute("aria-disabled") == "true"
            reason = button.get_attribute("title") or ""
            assert "may not" in reason, reason
            described = page.evaluate(
                "(id) => document.getElementById(id).textContent", button.get_attribute("aria-describedby")
            )
            assert described == reason
        posts = _posts(page)
        _bar(page, "promote").click(force=True)
        page.wait_for_timeout(300)
        assert posts == []  # a disabled button sends nothing; it says why instead
        assert "may not" in (page.text_content("#action-result") or "")
        assert_clean(page)
        shot(page, "actions-viewer")
    finally:
        page.context.close()


def test_an_admin_unwedges_the_orphan_from_the_finding_and_an_operator_sees_why_not(sims: World) -> None:
    sims.wait_for_view(ORPHANED, lambda v: v["status"] == "Degraded")
    _until("the orphan", lambda: bool(orphans_in_cluster(sims, ORPHANED)), 60)
    (orphan,) = orphans_in_cluster(sims, ORPHANED)

    operator = sims.open("operator", page_path(ORPHANED))
    try:
        fix = operator.locator("#findings [data-code=orphaned-canary-replicaset] button[data-fix=unwedge]")
        fix.wait_for()
        _wait_disabled(operator, "#findings [data-fix=unwedge]", True)
        why = (
            operator.text_content("#findings [data-code=orphaned-canary-replicaset] [data-fix-reason]") or ""
        )
        assert "may not" in why and operator.is_visible("#findings [data-fix-reason]")
        assert _bar(operator, "unwedge").get_attribute("aria-disabled") == "true"
    finally:
        operator.context.close()

    page = sims.open("admin", page_path(ORPHANED))
    try:
        posts = _posts(page)
        fix = page.locator("#findings [data-code=orphaned-canary-replicaset] button[data-fix=unwedge]")
        fix.wait_for()
        _wait_disabled(page, "#findings [data-fix=unwedge]", False)
        fix.click()
        page.locator("#action-confirm").wait_for(state="visible")
        assert orphan in (page.text_content("#action-confirm-text") or "")  # the dialog names the ReplicaSet
        shot(page, "actions-unwedge-confirm")
        page.click("#action-confirm-go")
        page.wait_for_selector("#action-result:has-text('Done')", timeout=30_000)
        assert posts == [f"{sims.server.url}/api/v1/rollouts/{ORPHANED}/actions/unwedge"]

        def scaled() -> bool:
            rs = next(r for r in sims.replicasets(ORPHANED) if r["metadata"]["name"] == orphan)
            return (rs.get("spec") or {}).get("replicas") == 0

        _until("the orphan scaled to 0", scaled)
        page.wait_for_selector("#revisions .rs[data-role=orphaned]", state="detached", timeout=20_000)
        assert_clean(page)
        shot(page, "actions-unwedged")
    finally:
        page.context.close()


def test_an_operator_promotes_from_the_action_bar_and_an_admin_may_too(sims: World) -> None:
    sims.wait_for_view(PAUSED, lambda v: v["status"] == "Paused" and v.get("step") == "1/2")
    admin = sims.open("admin", page_path(PAUSED))
    try:
        _opens_and_cancels(admin, _bar(admin, "promote"))
    finally:
        admin.context.close()
    page = sims.open("operator", page_path(PAUSED))
    try:
        posts = _posts(page)
        promote = _bar(page, "promote")
        _wait_disabled(page, "#rollout-actions [data-action=promote]", False)
        promote.click()
        said = _confirm_if_asked(page)
        if said:  # it asks only to name the open critical findings it would go past
            assert (
                page.evaluate(
                    "() => document.querySelectorAll('#action-confirm-advice [data-warning]').length"
                )
                > 0
            )
        _until(
            "the promotion", lambda: (sims.rollout(PAUSED).get("status") or {}).get("currentStepIndex") == 2
        )
        page.wait_for_function(
            "() => document.querySelector('[data-field=step]').textContent === '2/2'", timeout=20_000
        )
        assert posts[-1] == f"{sims.server.url}/api/v1/rollouts/{PAUSED}/actions/promote"
        # After a healthy release the old stable waits out its scale-down delay: drawn quiet with its time
        # left, never as an orphan (the false alarm of issue 16 §3).
        _until(
            "the release to finish",
            lambda: (sims.rollout(PAUSED).get("status") or {}).get("phase") == "Healthy",
        )
        scaling = scaling_down_in_cluster(sims, PAUSED)
        if scaling:  # the delay (30 s simulated) may already be over on a slow machine
            name = next(iter(scaling))
            row = page.locator(f"#revisions .rs[data-rs='{name}'][data-role=scaling-down]")
            row.wait_for(timeout=10_000)
            assert "left" in (row.text_content() or "")
        assert page.locator("#revisions .rs[data-role=orphaned], #flow [data-role=orphaned]").count() == 0
        assert_clean(page)
    finally:
        page.context.close()


def test_an_admin_skips_a_step_and_an_operator_may_too(sims: World) -> None:
    sims.wait_for_view(FIGHT, lambda v: v["status"] == "Paused")
    before = (sims.rollout(FIGHT).get("status") or {}).get("currentStepIndex")
    operator = sims.open("operator", page_path(FIGHT))
    try:
        _opens_and_cancels(operator, _bar(operator, "skip-current-step"))
    finally:
        operator.context.close()
    page = sims.open("admin", page_path(FIGHT))
    try:
        skip = _bar(page, "skip-current-step")
        _wait_disabled(page, "#rollout-actions [data-action=skip-current-step]", False)
        skip.click()
        _confirm_if_asked(page)
        _until(
            "the skipped step",
            lambda: ((sims.rollout(FIGHT).get("status") or {}).get("currentStepIndex") or 0) > (before or 0),
        )
        assert_clean(page)
    finally:
        page.context.close()


def test_an_operator_aborts_after_confirming_and_an_admin_may_too(sims: World) -> None:
    sims.wait_for_view(RACE, lambda v: v["status"] == "Paused" and len(v.get("revisions") or []) >= 3)
    admin = sims.open("admin", page_path(RACE))
    try:
        _opens_and_cancels(admin, _bar(admin, "abort"))
    finally:
        admin.context.close()
    page = sims.open("operator", page_path(RACE))
    try:
        _bar(page, "abort").click()
        page.locator("#action-confirm").wait_for(state="visible")
        assert page.text_content("#action-confirm-text")  # the server's words for what abort does
        shot(page, "actions-abort-confirm")
        page.click("#action-confirm-go")
        _until("the abort", lambda: bool((sims.rollout(RACE).get("status") or {}).get("abort")))
        page.wait_for_function(
            "() => document.querySelector('[data-badge=phase] [data-field=status]').textContent"
            " === 'Degraded'",
            timeout=20_000,
        )
        # Now retry applies and abort does not; the disabled one says why.
        _wait_disabled(page, "#rollout-actions [data-action=abort]", True)
        assert _bar(page, "abort").get_attribute("title")
        assert _bar(page, "retry").get_attribute("aria-disabled") != "true"
        assert_clean(page)
    finally:
        page.context.close()
