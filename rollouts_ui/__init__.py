"""Django project for rollouts-ui: settings, ASGI entry point, URLs and the Celery app."""

from __future__ import annotations

from rollouts_ui.celery import app as celery_app

__all__ = ["celery_app"]
