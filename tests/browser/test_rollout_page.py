from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubesim.testing import running_kubesim
from tests.browser.conftest import Server, WatcherThread, screenshot, snapshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def cluster(server: Server) -> Iterator[Any]:
    with running_kubesim(["healthy-canary", "rerender-race"], speed=4.0, seed=1) as sim:
        watcher = WatcherThread(str(sim.kubeconfig), "sim")
        watcher.start()
        yield sim
        watcher.stop()


def _wait_for_snapshot(key: str, timeout: float = 15.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = snapshot(key)
        if view:
            return view
        time.sleep(0.1)
    raise AssertionError(f"the watcher never published {key}")


def test_the_rollout_page_shows_weights_and_step_and_follows_the_simulator(
    page: Any, server: Server, cluster: Any
) -> None:
    key = "sim/shop/checkout"
    _wait_for_snapshot(key)
    page.goto(f"{server.url}/rollouts/sim/shop/checkout/")
    page.wait_for_selector("#flow [data-node=rollout]")
    page.wait_for_selector("#live-status[data-state=live]")
    shown = page.text_content("[data-field=step]")
    # Wait for the simulator to move the step, then the page must show it within 1 s, without reload.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        current = snapshot(key) or {}
        if current.get("step") and current.get("step") != shown:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the simulator did not advance a step within 20 s")
    page.wait_for_function(
        "s => document.querySelector('[data-field=step]').textContent === s",
        arg=current["step"],
        timeout=1000,
    )
    # The weights shown are the bus's weights (desired in the header, actual on the users edge).
    page.wait_for_function(
        "w => document.querySelector('[data-field=setWeight]').textContent.startsWith(w + ' %')",
        arg=str(current["setWeight"]),
        timeout=1000,
    )
    assert page.locator("[data-edge=canary-users], [data-edge=stable-users]").count() == 2
    screenshot(page, "rollout")


def test_the_rerender_race_shows_the_hash_change_and_the_step_reset(
    page: Any, server: Server, cluster: Any
) -> None:
    _wait_for_snapshot("sim/web/frontend")
    page.goto(f"{server.url}/rollouts/sim/web/frontend/")
    page.wait_for_selector("[data-marker=step-reset]", timeout=20_000)
    marker = page.text_content("[data-marker=step-reset]") or ""
    assert marker.startswith("Hash changed · step ") and marker.endswith("→ 0")
    assert (page.text_content("#steps-note") or "").endswith("it restarted at step 0.")
    # The sync node follows the Application: its name, what Argo CD says, and the commit's two renders.
    page.wait_for_selector("[data-node=sync] [data-marker=renders]", timeout=20_000)
    assert page.text_content("[data-node=sync] [data-marker=renders]") == "2 renders of this commit"
    sync_text = page.text_content("[data-node=sync]") or ""
    gitops = (snapshot("sim/web/frontend") or {}).get("gitops") or {}
    assert gitops.get("app") and gitops["app"] in sync_text
    assert f"{gitops.get('sync')} · " in sync_text
    # The finding's evidence reads as facts, not JSON: key tiles, the diff as a table, the rest behind
    # a details element that opens from the keyboard.
    race = page.locator("#findings [data-code=rerender-race]")
    race.locator(".tile").first.wait_for()
    labels = race.locator(".tile .label").all_text_contents()
    assert "Template diff" in labels and "Step index" in labels
    assert "checksum/config" in (race.locator("[data-evidence=templateDiff]").text_content() or "")
    assert "[{" not in (race.text_content() or "").split("All evidence")[0]
    race.locator("[data-details=all] > summary").focus()
    page.keyboard.press("Enter")
    assert race.locator("[data-details=all]").get_attribute("open") is not None
    assert "Previous render at" in (race.locator("[data-details=all] dl").text_content() or "")
    screenshot(page, "rollout-rerender-race")
