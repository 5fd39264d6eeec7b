"""Suite-wide set-up: the real services must be there, and the suite reads nothing outside the repository.

The suite talks to a real PostgreSQL and a real Redis (see ``scripts/services.sh``). If either is
missing the whole run stops at once with a message saying which, rather than skipping tests.

Upstream test data (Argo Rollouts, Argo CD, Flagger) lives in ``tests/fixtures/upstream`` with a SOURCE
file per project; tests reach it through the ``upstream_fixtures`` fixture (``shared_fixtures`` is the
older name of the same fixture). A clone with nothing beside it runs the whole suite: any attempt to
read the repository's parent's ``shared`` folder fails the test that makes it, naming the path.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
UPSTREAM_FIXTURES = PROJECT_ROOT / "tests" / "fixtures" / "upstream"
SHARED_FIXTURES = UPSTREAM_FIXTURES  # the older name, kept for tests written before the move
# The folder beside the repository where upstream data was once kept; nothing may read it any more.
_OUTSIDE = str(PROJECT_ROOT.parent / "shared") + os.sep
_READ_EVENTS = frozenset({"open", "os.listdir", "os.scandir"})
_HOOKED: list[bool] = []


class ReadOutsideRepository(RuntimeError):
    """A test read a file beside the repository: a clone with nothing beside it would fail there."""


def _refuse_reads_beside_the_repository(event: str, args: tuple[Any, ...]) -> None:
    if event not in _READ_EVENTS or not args or not isinstance(args[0], str | bytes | os.PathLike):
        return
    text = os.fsdecode(args[0])
    if "shared" in text and os.path.realpath(text).startswith(_OUTSIDE):
        raise ReadOutsideRepository(f"tests must not read outside the repository: {text}")


def pytest_configure(config: pytest.Config) -> None:
    if not _HOOKED:  # an audit hook cannot be removed: add it once per process
        sys.addaudithook(_refuse_reads_beside_the_repository)
        _HOOKED.append(True)
    _one_bus_per_worker()


def _one_bus_per_worker() -> None:
    """Under pytest-xdist the workers share one Redis database: give each its own default bus prefix, so
    a test that reads the default bus (or a command it runs in a subprocess) never sees another worker's.
    Each worker already has its own test database (pytest-django adds the worker id to its name)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    from django.conf import settings

    prefix = f"rollouts-ui-{worker}:"
    os.environ["LIVE_REDIS_PREFIX"] = prefix  # read by the servers and commands tests start
    settings.LIVE_REDIS_PREFIX = prefix


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """Drop any connection pool opened before the test database exists. A test without database access
    can still reach the code that reads history (a page's timeline falls back when it cannot), and the
    pool that opens then is keyed by alias, not by database: the test database's migrations would take
    their connections from it, from the configured database (absent on a fresh machine), and time out."""
    from django.db import connections

    for connection in connections.all():
        close_pool = getattr(connection, "close_pool", None)
        if close_pool is not None:
            close_pool()


@pytest.hookimpl(trylast=True)  # after pytest-django's own ordering, which it keeps within each file
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadfile --no-loadscope-reorder``), hand out the files with slow tests
    first: a module-long browser world started last would leave one worker running it alone at the end."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: the order within a file stays


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After a transactional test's flush, put back the rows the data migrations made (the built-in
    roles). pytest-django runs those tests after the plain database tests, but pytest-xdist hands whole
    files to each worker, so a worker may run a test that reads the built-in roles after another file's
    flush."""
    result = yield
    if nextitem is not None and _flushes_the_database(item):  # (after the last, the database is gone)
        from pytest_django.plugin import blocking_manager_key

        with item.config.stash[blocking_manager_key].unblock():
            restore_migrated_rows()
    return result


def _flushes_the_database(item: pytest.Item) -> bool:
    fixtures = getattr(item, "fixturenames", ())
    if "transactional_db" in fixtures or "live_server" in fixtures:
        return True
    marker = item.get_closest_marker("django_db")
    return marker is not None and bool(
        marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")
    )


def restore_migrated_rows() -> None:
    """The rows data migrations create (the built-in roles), which a flush removes."""
    import importlib

    from django.apps import apps

    importlib.import_module("dashboard.access.migrations.0002_builtin_roles").create(apps, None)


def pytest_sessionstart(session: pytest.Session) -> None:
    problems = [*_database_problems(), *_redis_problems()]
    if not (UPSTREAM_FIXTURES / "argo-rollouts" / "SOURCE").is_file():
        problems.append(f"the upstream test data is missing from {UPSTREAM_FIXTURES}")
    if problems:
        raise pytest.UsageError("the test suite cannot run:\n  - " + "\n  - ".join(problems))


def _database_problems() -> list[str]:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        return ["DATABASE_URL must point at PostgreSQL (run the suite with `make test`)"]
    import psycopg

    admin_url = url.rsplit("/", 1)[0] + "/postgres"
    try:
        psycopg.connect(admin_url, connect_timeout=3).close()
    except psycopg.Error as error:
        return [f"PostgreSQL is not reachable at {admin_url}: {error}"]
    return []


def _redis_problems() -> list[str]:
    url = os.environ.get("REDIS_URL", "")
    if not url:
        return ["REDIS_URL must be set (run the suite with `make test`)"]
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=3).ping()
    except redis.RedisError as error:
        return [f"Redis is not reachable at {url}: {error}"]
    return []


@pytest.fixture
def upstream_fixtures() -> Path:
    """The root of the upstream test data kept in the repository (see each folder's SOURCE)."""
    return UPSTREAM_FIXTURES


@pytest.fixture
def shared_fixtures(upstream_fixtures: Path) -> Path:
    """The older name of ``upstream_fixtures``; both point into the repository."""
    return upstream_fixtures


@pytest.fixture
def redis_url() -> str:
    return os.environ["REDIS_URL"]


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix unique to one test; every key under it is deleted afterwards."""
    import redis

    prefix = f"test:{uuid.uuid4().hex[:12]}:"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    if keys:
        client.delete(*keys)
