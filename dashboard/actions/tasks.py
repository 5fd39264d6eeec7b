"""Celery task running an accepted action (inline in embedded mode, where tasks are eager).

Bounded retries with exponential backoff on transient API errors (5xx, 429, no answer) that happened
before anything was sent; the last attempt records ``failed`` instead of retrying again.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from dashboard.actions.service import TransientKubeError, execute
from rollouts_ui.celery import app

BACKOFF_SECONDS = (1, 2, 4, 8, 16, 30, 30, 30, 30, 30)


@app.task(bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def execute_action(self: Any, entry_id: int) -> int:
    retries = int(self.request.retries or 0)
    give_up = retries >= settings.ACTIONS_MAX_RETRIES
    if self.request.is_eager:
        # Inline (embedded mode): retry in place with short pauses rather than re-entering Celery.
        import time

        while True:
            try:
                return execute(entry_id, give_up=give_up).pk
            except TransientKubeError:
                time.sleep(min(0.2 * 2**retries, 2.0))
                retries += 1
                give_up = retries >= settings.ACTIONS_MAX_RETRIES
    try:
        return execute(entry_id, give_up=give_up).pk
    except TransientKubeError as error:
        raise self.retry(
            exc=error,
            countdown=BACKOFF_SECONDS[min(retries, len(BACKOFF_SECONDS) - 1)],
            max_retries=settings.ACTIONS_MAX_RETRIES,
        ) from None
