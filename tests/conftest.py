"""Suite-wide set-up: the real services must be there, and the shared fixtures must be found.

The suite talks to a real PostgreSQL and a real Redis (see ``scripts/services.sh``). If either is
missing the whole run stops at once with a message saying which, rather than skipping tests.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_FIXTURES = (PROJECT_ROOT / ".." / "shared" / "fixtures").resolve()


def pytest_sessionstart(session: pytest.Session) -> None:
    problems = [*_database_problems(), *_redis_problems()]
    if not SHARED_FIXTURES.is_dir():
        problems.append(f"the shared fixtures are not at {SHARED_FIXTURES} (expected ../shared/fixtures)")
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
def shared_fixtures() -> Path:
    return SHARED_FIXTURES


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
