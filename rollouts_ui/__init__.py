"""Django project for rollouts-ui: settings, ASGI entry point, URLs and the Celery app.

The Celery app (``rollouts_ui.celery``) is not imported here, so a Django process loads Celery only if it
sends or runs tasks; ``celery -A rollouts_ui`` finds it by that module's name.
"""
