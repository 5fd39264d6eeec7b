"""The action tests' simulated cluster and inline Celery, for the guard rails' service tests, and
``make_user`` without a password (hashing one costs a second on this machine; tests log in with
``force_login``)."""

from __future__ import annotations

from typing import Any

from tests.actions.conftest import eager, sim

__all__ = ["eager", "make_user", "sim"]


def make_user(username: str, role: str) -> Any:
    from django.contrib.auth.models import User

    from dashboard.access.models import Grant, Role

    user = User.objects.create(username=username)
    Grant.objects.create(
        user=user, role=Role.objects.get_or_create(name=role, defaults={"actions": "get"})[0]
    )
    return user
