"""Markup inside Kubernetes objects stays text in a real browser, on the rollout page and the fleet page.

The objects are hostile the way a compromised CI or a careless author can make them: a status message
with an ``onerror`` image, annotations holding ``<script>`` and ``<svg onload>``, an image reference and
a condition message with markup. They reach the browser both ways a page gets data — rendered into the
first response and pushed live over the websocket after a status patch — and nothing may run: each
payload would set ``window.__pwned``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubesim.controller.common import ROLLOUTS
from kubesim.testing import running_kubesim
from tests.actions import objects
from tests.browser.conftest import Server, WatcherThread, screenshot, snapshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

IMG = "<img src=x onerror=window.__pwned=1>"
SCRIPT = "<script>window.__pwned=1</script>"
SVG = "<svg onload=window.__pwned=1></svg>"
KEY = "sim/shop/checkout"

# Whatever the payloads could have produced: an element that ran or could run them.
INERT = """() => ({
  pwned: typeof window.__pwned,
  img: document.querySelectorAll('img[src="x"]').length,
  handlers: document.querySelectorAll('[onerror], [onload], [onmouseover]').length,
  scripts: Array.from(document.scripts).filter(
    s => s.type !== 'application/json' && s.textContent.includes('__pwned')).length,
})"""
SAFE = {"pwned": "undefined", "img": 0, "handlers": 0, "scripts": 0}


def _hostile_rollouts() -> list[dict[str, Any]]:
    paused = objects.canary()
    paused["metadata"]["annotations"] = {"notes.example.com/why": SCRIPT, "kubernetes.io/change-cause": SVG}
    paused["spec"]["template"]["spec"]["containers"][0]["image"] = f"shop/checkout:v2{IMG}"
    degraded = objects.canary(
        "billing",
        phase="Degraded",
        message=f"ProgressDeadlineExceeded: {IMG}",
        abort=True,
        conditions=[
            {
                "type": "Progressing",
                "status": "False",
                "reason": "ProgressDeadlineExceeded",
                "message": f'ReplicaSet "billing-new" has timed out progressing. {SVG}',
            }
        ],
    )
    degraded["metadata"]["annotations"] = {"notes.example.com/why": SCRIPT}
    return [paused, degraded]


@pytest.fixture
def cluster(server: Server) -> Iterator[Any]:
    with running_kubesim() as sim:
        for rollout in _hostile_rollouts():
            objects.load(
                sim, rollout, [("new", 2, f"shop/checkout:v2{IMG}", 1), ("old", 1, "shop/checkout:v1", 5)]
            )
        watcher = WatcherThread(str(sim.kubeconfig), "sim")
        watcher.start()
        try:
            yield sim
        finally:
            watcher.stop()


def _wait_for(key: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if snapshot(key):
            return
        time.sleep(0.1)
    raise AssertionError(f"the watcher never published {key}")


def _shows(page: Any, text: str) -> None:
    page.wait_for_function("t => document.body.innerText.includes(t)", arg=text, timeout=10_000)


def test_markup_in_a_rollout_stays_text_on_the_rollout_page_live_and_on_reload(
    page: Any, server: Server, cluster: Any
) -> None:
    _wait_for(KEY)
    page.goto(f"{server.url}/rollouts/{KEY}/")
    page.wait_for_selector("#live-status[data-state=live]")
    _shows(page, IMG)  # the image reference, as text

    # A status patch carries the message to the open page over the websocket.
    message = f"RolloutAborted: {IMG} {SCRIPT}"

    def patch() -> None:
        body = {"status": {"phase": "Degraded", "message": message, "abort": True}}
        cluster.store.patch(ROLLOUTS, "shop", "checkout", body, subresource="status")

    cluster.call(patch)
    _shows(page, message)
    page.wait_for_timeout(300)  # an onerror would fire on the failed load of "x"
    assert page.evaluate(INERT) == SAFE
    screenshot(page, "security-markup-rollout")

    page.reload()
    page.wait_for_selector("#live-status[data-state=live]")
    _shows(page, message)
    page.wait_for_timeout(300)
    assert page.evaluate(INERT) == SAFE


def test_markup_in_rollouts_stays_text_on_the_degraded_rollout_and_the_fleet(
    page: Any, server: Server, cluster: Any
) -> None:
    _wait_for("sim/shop/billing")
    page.goto(f"{server.url}/rollouts/sim/shop/billing/")
    page.wait_for_selector("#live-status[data-state=live]")
    _shows(page, IMG)
    page.wait_for_timeout(300)
    assert page.evaluate(INERT) == SAFE

    page.goto(server.url + "/")
    page.wait_for_selector("tr.row[data-key='sim/shop/billing']")
    page.wait_for_selector("tr.row[data-key='sim/shop/checkout']")
    page.wait_for_timeout(300)
    assert page.evaluate(INERT) == SAFE
    screenshot(page, "security-markup-fleet")
