"""Fault suite: a Redis of our own is stopped and restarted empty under a running watcher process and a
real web server (uvicorn). While it is down, login, the fleet page, the API and the probes answer (no
500); the watcher says so in its log; after it returns, the fleet equals the simulator within 10 s.

Everything is bounded: each wait has a deadline, and the test's own timeout (pytest-timeout) caps it.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboard.live.bus import RedisBus
from kubesim.testing import free_port, running_kubesim
from tests.kube.watch_helpers import assert_bus_matches_fresh_list, fresh_views

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]
ROOT = Path(__file__).resolve().parents[2]
CLUSTER = "faults"
PASSWORD = "a-long-fault-password"
RECOVERY_SECONDS = 10.0
QUIET_SCENARIOS = ["failed-analysis-abort", "progress-deadline"]


class PrivateRedis:
    """redis-server on a free port, no persistence: a restart loses everything, as in the incident."""

    def __init__(self) -> None:
        if shutil.which("redis-server") is None:
            raise RuntimeError("redis-server is not installed: the fault suite needs it")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import redis

        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                redis.Redis(port=self.port).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    server.start()
    yield server
    server.stop()


def _process(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


class Browser:
    """Just enough of a browser: cookies, the CSRF token, status codes without exceptions."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        cookies = urllib.request.HTTPCookieProcessor(self.jar)
        self.opener = urllib.request.build_opener(cookies, _NoRedirect())

    def request(self, path: str, data: dict[str, str] | None = None) -> tuple[int, bytes, float]:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        started = time.monotonic()
        try:
            with self.opener.open(self.base + path, data=body, timeout=15) as response:
                return response.status, response.read(), time.monotonic() - started
        except urllib.error.HTTPError as error:
            return error.code, error.read(), time.monotonic() - started

    def login(self, username: str) -> int:
        self.request("/accounts/login/")
        token = next(c.value for c in self.jar if c.name == "csrftoken")
        status, _, _ = self.request(
            "/accounts/login/", {"csrfmiddlewaretoken": token, "username": username, "password": PASSWORD}
        )
        return status


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _wait_http(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited: {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1).read()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the web server did not start within 30 s")


async def _fleet_snapshot(base: str, browser: Browser) -> dict[str, Any]:
    """What a fleet page's websocket receives first, with ``browser``'s session."""
    import aiohttp

    cookies = {c.name: c.value for c in browser.jar}
    async with aiohttp.ClientSession(cookies=cookies) as session, session.ws_connect(
        base.replace("http://", "ws://") + "/ws/fleet/", headers={"Origin": base}
    ) as ws:
        await ws.send_str("{}")
        message = await ws.receive_json(timeout=10)
    assert message["type"] == "snapshot", message
    return dict(message)


async def _quiet(bus: RedisBus, *, seconds: float, timeout: float) -> None:
    """Wait until nothing has been published for ``seconds`` (the scenarios have ended)."""
    import asyncio

    deadline = time.monotonic() + timeout
    last, since = await bus.last_id(), time.monotonic()
    while time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        now_id = await bus.last_id()
        if now_id != last:
            last, since = now_id, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return
    raise AssertionError(f"the fleet did not go quiet within {timeout}s")


async def test_a_redis_restart_under_a_running_watcher_and_web_server(
    private_redis: PrivateRedis, transactional_db: Any, tmp_path: Path
) -> None:
    from asgiref.sync import sync_to_async
    from django.contrib.auth.models import User
    from django.db import connection

    def create_user() -> None:
        User.objects.create_user("ops", password=PASSWORD)
        connection.close()  # this worker thread's connection would keep the test database busy

    await sync_to_async(create_user)()
    name = connection.settings_dict["NAME"]
    base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    prefix = "faults:"
    env = {
        **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
        "DATABASE_URL": f"{base}/{name}",
        "REDIS_URL": private_redis.url,
        "LIVE_REDIS_PREFIX": prefix,
        "RBAC_DEFAULT_ROLE": "viewer",
        "LOG_FORMAT": "plain",
        "CELERY_TASK_DEFAULT_QUEUE": f"faults-{private_redis.port}",
        "DJANGO_SETTINGS_MODULE": "rollouts_ui.settings",
    }
    bus = RedisBus(private_redis.url, prefix=prefix)
    # Scenarios that end: the fleet is quiet when Redis goes, so nothing but the resync can refill it.
    with running_kubesim(QUIET_SCENARIOS, speed=20, bookmark_interval=1.0) as sim:
        watcher_log, web_log = tmp_path / "watcher.log", tmp_path / "web.log"
        watcher = _process(
            [sys.executable, "manage.py", "watch", "--kubeconfig", str(sim.kubeconfig), "--cluster", CLUSTER,
             "--no-history"], env, watcher_log,
        )
        port = free_port()
        web = _process(
            [sys.executable, "-m", "uvicorn", "rollouts_ui.asgi:application", "--host", "127.0.0.1",
             "--port", str(port), "--lifespan", "off", "--log-level", "warning"], env, web_log,
        )
        try:
            _wait_http(f"http://127.0.0.1:{port}", web, web_log)
            await assert_bus_matches_fresh_list(bus, sim, CLUSTER, timeout=30)
            await _quiet(bus, seconds=3.0, timeout=60)
            await assert_bus_matches_fresh_list(bus, sim, CLUSTER, timeout=10)
            browser = Browser(f"http://127.0.0.1:{port}")
            assert browser.login("ops") == 302
            status, body, _ = browser.request("/api/v1/rollouts")
            assert status == 200, body[:300]

            assert "unreachable" not in watcher_log.read_text(), watcher_log.read_text()[-2000:]
            private_redis.stop()  # --- Redis is down ---------------------------------------------------
            await sync_to_async(time.sleep)(1.0)
            late = Browser(f"http://127.0.0.1:{port}")
            assert late.login("ops") == 302, "login while Redis is down"
            for path, expected in [("/", 200), ("/audit/", 200), ("/api/v1/rollouts", 503),
                                   ("/api/v1/live-status", 200)]:
                status, body, took = await sync_to_async(late.request)(path)
                assert status == expected, (path, status, body[:300])
                assert took < 5, (path, took)
            status, body, _ = late.request("/api/v1/live-status")
            assert json.loads(body)["bus"]["ok"] is False
            status, body, took = await sync_to_async(late.request)("/readyz")
            assert status == 503 and took < 5 and json.loads(body)["status"] == "unavailable"
            await sync_to_async(time.sleep)(4.0)  # a lease renewal or two: the watcher must say so
            assert re.search(r"Redis \(the live bus\) is unreachable", watcher_log.read_text()), (
                watcher_log.read_text()[-2000:]
            )

            private_redis.start()  # --- back, empty ------------------------------------------------------
            restarted = time.monotonic()
            await assert_bus_matches_fresh_list(bus, sim, CLUSTER, timeout=RECOVERY_SECONDS)
            recovered_in = time.monotonic() - restarted
            print(f"fleet equal to the simulator {recovered_in:.1f}s after Redis came back empty")
            status, body, _ = late.request("/api/v1/rollouts")
            assert status == 200, body[:300]
            status, body, _ = late.request("/api/v1/live-status")
            assert json.loads(body)["bus"]["ok"] is True
            snapshot = await _fleet_snapshot(f"http://127.0.0.1:{port}", late)
            assert len(snapshot["rows"]) == len(fresh_views(sim, CLUSTER)), snapshot
            assert watcher.poll() is None and web.poll() is None
            await sync_to_async(time.sleep)(3.5)  # the next lease renewal finds Redis again
            assert "Redis (the live bus) is reachable again" in watcher_log.read_text()
        finally:
            _stop(watcher)
            _stop(web)
            await bus.close()
