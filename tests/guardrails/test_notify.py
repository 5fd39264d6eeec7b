"""Guard-rail notifications link to the request on the rollout's page."""

from __future__ import annotations

from dashboard.notify.rules import slack_message, webhook_body

EVENT = {
    "type": "action.requested",
    "cluster": "prod",
    "namespace": "billing",
    "rollout": "payments",
    "severity": "info",
    "title": "olivia requested promote (request #7)",
    "dedupe": "action:70",
    "detail": {"request": 7, "reason": "CHG-1"},
}


def test_a_request_notification_links_to_the_request() -> None:
    link = "https://rollouts.example/rollouts/prod/billing/payments#request-7"
    assert webhook_body(EVENT, "https://rollouts.example")["url"] == link
    assert f"<{link}|" in slack_message(EVENT, "https://rollouts.example")["blocks"][0]["text"]["text"]
