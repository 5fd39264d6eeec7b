"""The two-person rule in a real browser: an operator requests a promote, an admin on another browser
sees the request arrive live and approves it, and the promote runs as the operator — both pages update
without a reload.

The real path throughout: the rule comes from the policy file, the request and the vote go through the
API, the approval's Celery task sends the promote to kubesim, the watcher sees it and both pages move.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesim.testing import running_kubesim
from tests.browser.conftest import PASSWORD, Server, WatcherThread, screenshot
from tests.browser.test_actions_browser import CeleryWorker, _log_in, _wait_for_pause

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KEY = "sim/search/search"
PAGE = "/rollouts/sim/search/search/"
RULE = "approval, promote promote-full, sim/search/*, count=1, approvers=role:admin, expires=1h\n"


@pytest.fixture
def guarded(server: Server, tmp_path: Path) -> Iterator[Any]:
    policy = tmp_path / "policy.csv"
    policy.write_text(RULE)
    with running_kubesim(["paused-reads-degraded"], speed=4.0, seed=1) as sim:
        watcher = WatcherThread(str(sim.kubeconfig), "sim")
        watcher.start()
        server.stop()
        server.env = {
            **server.env,
            "CLUSTERS": f"sim={sim.kubeconfig}",
            "CELERY_TASK_DEFAULT_QUEUE": f"guardrails-browser-{uuid.uuid4().hex[:8]}",
            "ACTIONS_WAIT_SECONDS": "15",
            "RBAC_POLICY_FILE": str(policy),
        }
        server.start()
        worker = CeleryWorker(server.env)
        worker.start()
        try:
            yield sim
        finally:
            worker.stop()
            watcher.stop()


def _user(username: str, role_name: str) -> None:
    from django.contrib.auth.models import User

    from dashboard.access.models import Grant, Role

    user = User.objects.create_user(username, password=PASSWORD)
    role = Role.objects.get_or_create(name=role_name, defaults={"actions": "get"})[0]
    Grant.objects.create(user=user, role=role, cluster="*", namespace="*", rollout="*")


def test_an_operator_requests_a_promote_and_an_admin_approves_it_live(
    browser: Any, server: Server, guarded: Any
) -> None:
    _user("olivia", "operator")
    _user("ada", "admin")
    _wait_for_pause(KEY)
    requester, approver = _log_in(browser, server, "olivia"), _log_in(browser, server, "ada")
    for page in (requester, approver):
        page.goto(server.url + PAGE)
        page.wait_for_selector("#live-status[data-state=live]")
        page.evaluate("window.__samePage = true")

    # The guarded button says what it does; asking opens the dialog with the rule's terms and a reason.
    promote = requester.locator("#rollout-actions button[data-action=promote]")
    promote.wait_for(state="visible")
    assert promote.text_content() == "Request promote (1 approval)"
    promote.click()
    requester.locator("#action-confirm").wait_for(state="visible")
    assert "role:admin" in (requester.text_content("#action-confirm-guard") or "")
    requester.fill("#action-confirm-reason input", "CHG-1042 search ranking fix")
    screenshot(requester, "guardrails-request-dialog")
    requester.click("#action-confirm-go")
    requester.wait_for_selector("#action-result:has-text('Requested')")
    mine = requester.locator("#approval-request-list li.request").first
    mine.wait_for()
    assert "someone else must approve" in (mine.text_content() or "")
    assert mine.locator("button[data-vote=approve]").count() == 0

    # The admin's page shows the request without a reload, with who, why and the approvals so far.
    theirs = approver.locator("#approval-request-list li.request").first
    theirs.wait_for(timeout=10_000)
    text = theirs.text_content() or ""
    assert "olivia asks to promote" in text and "CHG-1042" in text and "0 of 1 approval" in text
    screenshot(approver, "guardrails-awaiting-approval")

    # The approval runs the promote as the requester; both pages move on live.
    theirs.locator("input.request-comment").fill("ranking looks right in staging")
    theirs.locator("button[data-vote=approve]").click()
    for page in (requester, approver):
        page.wait_for_function(
            "() => document.querySelector('[data-field=step]').textContent === '2/2'", timeout=20_000
        )
        page.wait_for_selector("#approval-requests", state="hidden")
        assert page.evaluate("window.__samePage") is True
    done = requester.locator("#recent-actions li.outcome-done").first
    done.wait_for()
    assert done.locator(".who").text_content() == "olivia promoted (approved by ada)"
    screenshot(requester, "guardrails-approved")
