"""The Celery app. Actions are executed here; in embedded mode (no REDIS_URL) tasks run inline."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rollouts_ui.settings")

app = Celery("rollouts_ui")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
