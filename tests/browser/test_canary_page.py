"""A Flagger Canary published into the live bus renders as a Canary on the rollout page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import Server, off_loop, screenshot
from tests.web.test_canary_presenter import canary

pytestmark = [pytest.mark.browser]


def _publish(view: dict[str, Any]) -> None:
    from dashboard.live.bus import get_bus

    async def publish() -> None:
        bus = get_bus()
        try:
            await bus.publish_many([(view, [])])
        finally:
            await bus.close()  # type: ignore[attr-defined]

    off_loop(publish)


def test_a_canary_shows_flaggers_phase_notes_gates_and_the_diagram(
    page: Any, server: Server, shared_fixtures: Path
) -> None:
    view = canary(shared_fixtures, "canary-waitingpromotion.yaml")
    _publish(view)
    page.goto(f"{server.url}/rollouts/prod/{view['namespace']}/{view['name']}/")
    page.wait_for_selector("#flow [data-node=rollout]")
    assert page.text_content("[data-field=phase]") == "WaitingPromotion"
    assert page.text_content("[data-badge=phase] [data-field=status]") == "Paused"
    assert page.locator("#canary-notes [data-note]").count() == len(view["notes"])
    assert "What is true" in (page.text_content("#canary-notes") or "")
    gate = page.text_content("[data-gate=promotion-gate]") or ""
    assert "waiting for approval to promote" in gate
    # A viewer sees the Canary's actions at the top, each disabled with the reason.
    buttons = page.locator("#canary-actions [data-canary-action]")
    assert buttons.count() > 0
    for button in buttons.all():
        assert button.get_attribute("aria-disabled") == "true" and "may not" in (
            button.get_attribute("title") or ""
        )
    assert page.locator("[data-node=stable]").text_content().startswith("Primary")  # type: ignore[union-attr]
    screenshot(page, "rollout-canary")
