"""Action-test fixtures: an in-process kubesim registered as cluster ``sim``, users with grants, and
Celery running tasks inline (the suite has REDIS_URL set, which would otherwise queue them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kubesim.testing import running_kubesim


@pytest.fixture
def sim() -> Iterator[Any]:
    from dashboard.kube.actions import _registered, forget_clients, register_cluster

    with running_kubesim() as handle:
        register_cluster("sim", str(handle.kubeconfig))
        forget_clients()
        yield handle
    _registered.pop("sim", None)
    forget_clients()


@pytest.fixture
def eager() -> Iterator[None]:
    from rollouts_ui.celery import app

    # The app reads Django settings under the CELERY_ namespace, so the override uses that name.
    previous = app.conf.task_always_eager
    app.conf.update(CELERY_TASK_ALWAYS_EAGER=True)
    yield
    app.conf.update(CELERY_TASK_ALWAYS_EAGER=previous)


def make_user(username: str, role: str | None, scope: str = "*/*/*", **extra: Any) -> Any:
    from django.contrib.auth.models import User

    from dashboard.access.models import Grant, Role

    user = User.objects.create_user(username, password="a-long-test-password", **extra)
    if role is not None:
        cluster, namespace, rollout = scope.split("/")
        Grant.objects.create(
            user=user,
            role=Role.objects.get_or_create(name=role, defaults={"actions": "get"})[0],
            cluster=cluster,
            namespace=namespace,
            rollout=rollout,
        )
    return user


@pytest.fixture
def operator(db: Any) -> Any:
    return make_user("olivia", "operator")


@pytest.fixture
def admin_user(db: Any) -> Any:
    return make_user("ada", "admin")


@pytest.fixture
def viewer(db: Any) -> Any:
    return make_user("victor", "viewer")
