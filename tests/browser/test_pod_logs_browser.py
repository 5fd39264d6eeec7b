"""The rollout page tails a canary pod and a stable pod side by side, from the cluster, as text.

failed-analysis-abort runs slowly enough that its canary lives while the page looks: the viewer (whose
built-in role reads logs, as Argo CD's readonly does) tails the canary in one pane and the stable pod in
the other; the canary's lines come from kubesim's pods/log with its error lines marked, the session is
audited, and stopping a pane closes its socket.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.world import SCENARIO_KEYS, World, assert_clean, page_path, shot, world

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db]

KEY = SCENARIO_KEYS["failed-analysis-abort"]


@pytest.fixture(scope="module")
def sims(django_db_setup: Any, django_db_blocker: Any, browser: Any) -> Iterator[World]:
    with world(
        ["failed-analysis-abort"],
        django_db_blocker=django_db_blocker,
        browser=browser,
        redis_url=os.environ["REDIS_URL"],
        # At real speed the canary lives about 40 s after it is ready (a 20 s pause, then the analysis
        # fails its second measurement): at speed 3 a loaded machine opened the page after the abort had
        # already deleted the pod.
        speed=1.0,
    ) as w:
        # The scenario's canary errs on one request in five, and its pod may be cut short by the abort: a
        # loaded run once tailed it to its end without an error line. Three in five make one certain.
        _, namespace, name = KEY.split("/")
        w.sim.call(w.sim.store.log_error_rates.__setitem__, (namespace, name), 0.6)
        yield w


def _has_ready_canary(view: dict[str, Any]) -> bool:
    return any(
        rs.get("role") == "canary" and any(p.get("ready") == "1/1" for p in rs.get("pods") or [])
        for rev in view.get("revisions") or []
        for rs in rev.get("replicaSets") or []
    )


def test_the_viewer_tails_a_canary_and_a_stable_pod_side_by_side(sims: World) -> None:
    from dashboard.actions.models import AuditEntry

    view = sims.wait_for_view(KEY, _has_ready_canary, timeout=60)
    canary_pods = [
        p["name"]
        for rev in view["revisions"]
        for rs in rev["replicaSets"]
        if rs.get("role") == "canary"
        for p in rs["pods"]
    ]
    page = sims.open("viewer", page_path(KEY), viewport={"width": 1440, "height": 1000})
    canary, stable = (
        page.locator(".podlogs-pane[data-pane='a']"),
        page.locator(".podlogs-pane[data-pane='b']"),
    )
    assert canary.locator(".pl-role").input_value() == "canary"
    assert stable.locator(".pl-role").input_value() == "stable"
    canary.locator(".pl-toggle").click()
    stable.locator(".pl-toggle").click()
    page.wait_for_selector(".podlogs-pane[data-pane='a'][data-state='tailing']")
    assert canary.get_attribute("data-pod") in canary_pods
    # The canary of a failing release logs errors (marked by the server); its stable neighbour does not.
    page.wait_for_selector(".podlogs-pane[data-pane='a'] .pl-line.pl-error", timeout=20_000)
    page.wait_for_function(
        "() => document.querySelectorAll(\".podlogs-pane[data-pane='b'] .pl-line\").length >= 3"
    )
    lines = canary.locator(".pl-line").all_text_contents()
    assert lines[0].startswith('level=info msg="starting payments" image=argoproj/rollouts-demo:red')
    assert stable.locator(".pl-error").count() == 0
    assert "image=argoproj/rollouts-demo:blue" in stable.locator(".pl-line").first.text_content()
    page.locator("#pod-logs").scroll_into_view_if_needed()
    shot(page, "pod-logs", docs=True)
    page.locator("#pod-logs").screenshot(path=str(_shots() / "pod-logs-panel.png"))
    page.emulate_media(color_scheme="dark")
    page.locator("#pod-logs").screenshot(path=str(_shots() / "pod-logs-panel-dark.png"))
    page.emulate_media(color_scheme="light")
    stable.locator(".pl-toggle").click()
    assert stable.get_attribute("data-state") == "stopped"
    assert_clean(page)
    sessions = AuditEntry.objects.filter(action="logs", actor="vera", outcome="done")
    assert sorted(e.params["pod"] for e in sessions)[0] and sessions.count() == 2
    page.context.close()


def _shots() -> Any:
    from tests.browser.conftest import SHOTS

    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS
