"""The Celery app: actions and notifications run here; in embedded mode (no REDIS_URL) tasks run inline.

Only the processes that send or run tasks load Celery: the worker and beat (``-A rollouts_ui`` finds
this module), the web server (``rollouts_ui.asgi``), and any other process at its first send (``task``):
a watcher sends one only when its history notifies a subscription, so it starts without Celery.

The beat schedule (``celery -A rollouts_ui beat``, one scheduler per installation) runs the history
retention hourly and the notification sweep every 30 s (retries, rate-limited messages, lost tasks).
"""

from __future__ import annotations

import os
from importlib import import_module
from typing import Any

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rollouts_ui.settings")

app = Celery("rollouts_ui")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Keep Django's LOGGING (JSON, redacted) instead of Celery's own root handler.
app.conf.worker_hijack_root_logger = False
app.autodiscover_tasks(["dashboard", "dashboard.history", "dashboard.notify"])
app.autodiscover_tasks()

BEAT_SCHEDULE = {
    "history-retention": {"task": "dashboard.history.tasks.prune_history_task", "schedule": 3600.0},
    "notification-sweep": {
        "task": "dashboard.notify.tasks.deliver_due_notifications",
        "schedule": 30.0,
    },
    "approval-request-expiry": {"task": "dashboard.guardrails.tasks.close_due_requests", "schedule": 30.0},
}
app.conf.beat_schedule = BEAT_SCHEDULE


@worker_init.connect
def _require_database(**kwargs: Any) -> None:
    """A worker without its database stops at once, naming DATABASE_URL (not at its first task)."""
    from rollouts_ui.settings_check import require_database

    require_database()


def task(name: str) -> Any:
    """The registered task ``name`` (``module.function``), its module imported on first use: services send
    their tasks by name, since the task modules import the services."""
    import_module(name.rpartition(".")[0])
    return app.tasks[name]
