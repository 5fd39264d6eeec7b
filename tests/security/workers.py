"""Worker processes for the concurrency tests, started with ``spawn`` so each is a fresh interpreter with
its own database pool and Redis connections, like a Celery worker (nothing Django is imported up here:
the child sets Django up itself)."""

from __future__ import annotations

import os
from typing import Any


def run_accepted_action(
    db_name: str, kubeconfig: str, prefix: str, entry_id: int, barrier: Any, results: Any
) -> None:
    """What a Celery worker does with one accepted attempt: ``execute`` it (against kubesim)."""
    os.environ["LIVE_REDIS_PREFIX"] = prefix
    import django

    django.setup()
    from django.conf import settings
    from django.db import connections

    settings.DATABASES["default"]["NAME"] = db_name  # the test database the parent created
    from dashboard.actions import service
    from dashboard.kube.actions import register_cluster

    register_cluster("sim", kubeconfig)
    try:
        barrier.wait(30)
        results.put(str(service.execute(entry_id).outcome))
    except Exception as error:  # reported to the test, not lost in the child
        results.put(repr(error))
    finally:
        connections.close_all()
