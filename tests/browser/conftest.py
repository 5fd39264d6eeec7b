"""Browser-test machinery: a real uvicorn server in a subprocess, a watcher thread, headless Chromium.

The server runs against pytest-django's test database (the test creates the user with
``transactional_db`` so the subprocess sees it) and the real Redis under the test's key prefix; the
watcher runs on its own event loop in a thread and rings the Redis channel layer, exactly like
``manage.py watch`` in another process would.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesim.testing import free_port

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
PASSWORD = "a-long-browser-password"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class Server:
    """uvicorn serving rollouts_ui.asgi on 127.0.0.1; can be stopped and started again on its port."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "rollouts_ui.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--lifespan",
                "off",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=1).read()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(
                        self.process.stderr.read().decode() if self.process.stderr else ""
                    ) from None
                time.sleep(0.1)
        raise RuntimeError("uvicorn did not start within 20 s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
            self.process = None


@pytest.fixture
def server(transactional_db: Any, redis_prefix: str, settings: Any) -> Iterator[Server]:
    from django.contrib.auth.models import User
    from django.db import connection

    from dashboard.web import data

    settings.LIVE_REDIS_PREFIX = redis_prefix
    settings.RBAC_DEFAULT_ROLE = "viewer"
    data.reset()
    User.objects.create_user("browser", password=PASSWORD)
    name = connection.settings_dict["NAME"]
    base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    # The server must run as in production: without the test process's async-unsafe escape hatch.
    inherited = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {
        **inherited,
        "DATABASE_URL": f"{base}/{name}",
        "LIVE_REDIS_PREFIX": redis_prefix,
        "DJANGO_SETTINGS_MODULE": "rollouts_ui.settings",
        "RBAC_DEFAULT_ROLE": "viewer",  # the browser user reads everything (RBAC denies by default)
    }
    running = Server(env)
    running.start()
    yield running
    running.stop()
    data.reset()


# Module scope, not session: sync Playwright runs an event loop on the main thread while it is open, and
# pytest-django moves transactional (browser) tests before plain ones, so a session-long loop would break
# every later test that calls asyncio.run / async_to_sync.
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    # Sync Playwright keeps an event loop on the main thread; Django's database calls in fixtures are
    # still synchronous and safe here (the documented Playwright + Django arrangement).
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(server: Server, browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto(server.url + "/accounts/login/")
    page.fill("input[name=username]", "browser")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(server.url + "/")
    yield page
    context.close()


def screenshot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


class WatcherThread:
    """The watcher for one kubesim cluster, on its own loop in a daemon thread."""

    def __init__(self, kubeconfig: str, cluster: str) -> None:
        self.kubeconfig = kubeconfig
        self.cluster = cluster
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="watcher")
        self.task: Any = None

    def start(self) -> None:
        from dashboard.history.recorder import Recorder
        from dashboard.kube.connection import KubeApi
        from dashboard.kube.watcher import Watcher
        from dashboard.live.bus import get_bus
        from dashboard.live.lease import MemoryLease

        async def run() -> None:
            api = await KubeApi.connect(self.kubeconfig)
            recorder = Recorder().start()
            watcher = Watcher(
                self.cluster,
                bus=get_bus(),
                lease=MemoryLease(),
                recorder=recorder,
            )
            try:
                await watcher.run(api)
            finally:
                recorder.stop()

        self.thread.start()
        self.task = asyncio.run_coroutine_threadsafe(run(), self.loop)

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            deadline = time.monotonic() + 5
            while not self.task.done() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.2)  # let the cancelled watch loops unwind
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def off_loop(fn: Any, *args: Any) -> Any:
    """Run the coroutine function ``fn(*args)`` to completion on a fresh loop in another thread.

    (The main thread's loop belongs to sync Playwright.)
    """
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = asyncio.run(fn(*args))
        except BaseException as error:  # re-raised in the caller's thread
            result["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    if "error" in result:
        raise result["error"]
    return result.get("value")


def snapshot(key: str) -> dict[str, Any] | None:
    """The bus's current view of ``key``."""
    from dashboard.live.bus import get_bus

    async def read() -> dict[str, Any] | None:
        bus = get_bus()
        try:
            return await bus.snapshot(key)
        finally:
            await bus.close()  # type: ignore[attr-defined]

    return off_loop(read)
