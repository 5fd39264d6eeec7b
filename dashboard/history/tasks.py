"""The scheduled history retention (``HISTORY_RETENTION_DAYS``), run by Celery beat.

The watcher also prunes hourly while it runs; this job keeps retention going when no watcher does (a
cluster removed, watchers scaled to zero).
"""

from __future__ import annotations

from django.conf import settings

from dashboard.history.recorder import prune_history
from rollouts_ui.celery import app


@app.task(ignore_result=True)
def prune_history_task() -> int:
    return prune_history(settings.HISTORY_RETENTION_DAYS)
