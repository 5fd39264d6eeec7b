"""The action buttons in a real browser: promote moves a paused canary live, abort asks first, viewers
see no buttons.

Everything is the real path: uvicorn serves the page, the click POSTs to the API, a Celery worker in
its own process (on a queue of its own, so no other worker takes the task) sends the kubectl request to
kubesim, the watcher sees the change and the page updates over its websocket without a reload.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesim.testing import running_kubesim
from tests.browser.conftest import (
    PASSWORD,
    ROOT,
    Server,
    WatcherThread,
    screenshot,
    snapshot,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KEY = "sim/search/search"
PAGE = "/rollouts/sim/search/search/"


class CeleryWorker:
    """``celery -A rollouts_ui worker`` in a subprocess, consuming only this test's queue."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.log = Path(tempfile.mkstemp(prefix="celery-", suffix=".log")[1])
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [sys.executable, "-m", "celery", "-A", "rollouts_ui", "worker", "--pool", "solo"]
        command += ["--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "info"]
        with self.log.open("wb") as sink:  # the project's logging writes "celery@… ready." to stderr
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=sink
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if " ready." in self.log.read_text(errors="replace"):
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("the Celery worker did not start:\n" + self.log.read_text(errors="replace"))

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
            self.process = None
        self.log.unlink(missing_ok=True)


@pytest.fixture
def cluster(server: Server) -> Iterator[Any]:
    """kubesim with a canary waiting at an indefinite pause, its watcher, and a worker that acts on it.

    The web server is restarted with the worker's queue (the shared ``server`` fixture knows nothing of
    actions), so the page, the API and the worker agree on where tasks go.
    """
    with running_kubesim(["paused-reads-degraded"], speed=4.0, seed=1) as sim:
        watcher = WatcherThread(str(sim.kubeconfig), "sim")
        watcher.start()
        extra = {
            "CLUSTERS": f"sim={sim.kubeconfig}",
            "CELERY_TASK_DEFAULT_QUEUE": f"actions-browser-{uuid.uuid4().hex[:8]}",
            "ACTIONS_WAIT_SECONDS": "15",
        }
        server.stop()
        server.env = {**server.env, **extra}
        server.start()
        worker = CeleryWorker(server.env)
        worker.start()
        try:
            yield sim
        finally:
            worker.stop()
            watcher.stop()


def _wait_for_pause(key: str, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    view: dict[str, Any] = {}
    while time.monotonic() < deadline:
        view = snapshot(key) or {}
        if view.get("status") == "Paused" and view.get("step") == "1/2":
            return view
        time.sleep(0.1)
    raise AssertionError(
        f"{key} never paused at step 1/2 (last seen: {view.get('status')} {view.get('step')})"
    )


def _operator(username: str = "olivia") -> None:
    from django.contrib.auth.models import User

    from dashboard.access.models import Grant, Role

    user = User.objects.create_user(username, password=PASSWORD)
    role = Role.objects.get_or_create(name="operator", defaults={"actions": "get"})[0]
    Grant.objects.create(user=user, role=role, cluster="*", namespace="*", rollout="*")


def _log_in(browser: Any, server: Server, username: str) -> Any:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto(server.url + "/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(server.url + "/")
    return page


def _action_posts(page: Any) -> list[str]:
    """Every action POST the page sends, as it sends them."""
    sent: list[str] = []
    page.on(
        "request",
        lambda request: (
            sent.append(request.url) if request.method == "POST" and "/actions/" in request.url else None
        ),
    )
    return sent


def test_an_operator_promotes_a_paused_canary_and_sees_it_move_live(
    browser: Any, server: Server, cluster: Any
) -> None:
    _operator()
    before = _wait_for_pause(KEY)
    page = _log_in(browser, server, "olivia")
    posts = _action_posts(page)
    page.goto(server.url + PAGE)
    page.wait_for_selector("#live-status[data-state=live]")
    page.wait_for_function("() => document.querySelector('[data-field=step]').textContent === '1/2'")
    promote = page.locator("#rollout-actions button[data-action=promote]")
    promote.wait_for(state="visible")
    assert promote.get_attribute("aria-disabled") != "true"
    screenshot(page, "actions-paused")

    # Abort is destructive: it asks first, says what will happen, and cancelling sends nothing.
    page.click("#rollout-actions button[data-action=abort]")
    dialog = page.locator("#action-confirm")
    dialog.wait_for(state="visible")
    text = page.text_content("#action-confirm-text") or ""
    assert text  # the server's words for what abort does
    screenshot(page, "actions-abort-confirm")
    dialog.locator("button[value=cancel]").click()
    dialog.wait_for(state="hidden")
    page.wait_for_timeout(300)
    assert posts == []
    assert page.is_hidden("#action-result")

    # Promote is not destructive: one click, and the next step arrives live, without a reload.
    page.evaluate("window.__samePage = true")
    promote.click()
    page.wait_for_function(
        "() => document.querySelector('[data-field=step]').textContent === '2/2'", timeout=20_000
    )
    page.wait_for_function(
        "() => document.querySelector('[data-field=setWeight]').textContent.startsWith('100 %')",
        timeout=10_000,
    )
    assert page.evaluate("window.__samePage") is True
    assert posts == [f"{server.url}/api/v1/rollouts/sim/search/search/actions/promote"]
    page.wait_for_selector("#action-result:has-text('Done')")

    # The outcome is in "Recent actions" on the page, and in the audit log.
    entry = page.locator("#recent-actions li.outcome-done").first
    entry.wait_for()
    assert entry.locator(".who").text_content() == "olivia promoted"
    assert entry.locator(".badge").text_content() == "done"
    screenshot(page, "actions-promoted")

    page.goto(server.url + "/audit/?rollout=search")
    row = page.locator("table.audit-table tbody tr.outcome-done").first
    cells = [c.strip() for c in row.locator("td").all_text_contents()]
    assert cells[1:4] == ["olivia", "promote", KEY]
    assert cells[4].startswith("step 1 " + before["currentPodHash"])
    screenshot(page, "actions-audit")
    page.context.close()


def test_a_viewer_sees_the_rollout_and_why_each_action_is_disabled(
    page: Any, server: Server, cluster: Any
) -> None:
    _wait_for_pause(KEY)
    page.goto(server.url + PAGE)
    page.wait_for_selector("#live-status[data-state=live]")
    page.wait_for_function("() => document.querySelector('[data-field=step]').textContent === '1/2'")
    # Every button is there, disabled, with the reason (tooltip and aria-describedby).
    buttons = page.locator("#rollout-actions button[data-action]")
    buttons.first.wait_for()
    for button in buttons.all():
        assert button.get_attribute("aria-disabled") == "true"
        assert "may not" in (button.get_attribute("title") or "")
    page.wait_for_selector("#recent-actions li.muted:has-text('No actions yet.')")
    screenshot(page, "actions-viewer")
