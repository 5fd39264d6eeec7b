"""The scheduler's sweep of approval requests: close the expired ones (audited, announced, notified)
even when nobody looks at them; a look (``/api/v1/requests``) or a vote closes them first otherwise."""

from __future__ import annotations

from dashboard.guardrails import service
from rollouts_ui.celery import app


@app.task(ignore_result=True)
def close_due_requests() -> int:
    return service.close_due()
