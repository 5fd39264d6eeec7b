"""Embedded mode in one process: kubesim with a mix of scenarios, the watcher, and the web server.

``run_demo`` migrates the (SQLite) database, creates a demo login with a fresh random password (printed
once), starts the simulator on its own thread, then runs the watcher and uvicorn on one event loop so
the in-memory bus and channel layer are shared. Non-goals: production use (run ``watch`` + an ASGI
server + Celery for that) and choosing scenarios beyond what kubesim offers.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass

DEFAULT_SCENARIOS = (
    "healthy-canary",
    "rerender-race",
    "blue-green",
    "failed-analysis-abort",
    "paused-reads-degraded",
    "orphaned-canary",
)
DEMO_USER = "demo"
CLUSTER = "demo"


@dataclass(frozen=True)
class DemoOptions:
    port: int = 8000
    host: str = "127.0.0.1"
    scenarios: Sequence[str] = DEFAULT_SCENARIOS
    speed: float = 1.0
    seed: int = 0


class DemoError(Exception):
    """The demo could not start; the message says why and what to do."""


def check_scenarios(names: Sequence[str]) -> None:
    from kubesim.scenarios import ScenarioError, load_scenarios

    try:
        load_scenarios(list(names))
    except ScenarioError as error:
        raise DemoError(str(error)) from None


def demo_login() -> tuple[str, str]:
    """(username, password): the demo user, with a new password each run."""
    from django.contrib.auth.models import User

    password = secrets.token_urlsafe(12)
    user, _ = User.objects.get_or_create(username=DEMO_USER)
    user.set_password(password)
    user.is_active = True
    user.save()
    from dashboard.access.models import Grant, Role

    # Access is deny-by-default: the demo login may see and do everything in the simulator.
    admin, _ = Role.objects.get_or_create(name="admin", defaults={"actions": "*"})
    Grant.objects.get_or_create(user=user, role=admin)
    return DEMO_USER, password


async def serve(options: DemoOptions, kubeconfig: str, announce: Callable[[str], None]) -> None:
    """Watcher + ASGI server on this loop until cancelled (Ctrl-C)."""
    import uvicorn
    from channels.layers import get_channel_layer

    from dashboard.history.recorder import Recorder
    from dashboard.kube.actions import register_cluster
    from dashboard.kube.connection import KubeApi
    from dashboard.kube.service import pipeline_settings
    from dashboard.kube.watcher import Watcher
    from dashboard.live.bus import get_bus
    from dashboard.live.lease import MemoryLease

    register_cluster(CLUSTER, kubeconfig)  # actions reach the simulator under the watcher's cluster name
    recorder = Recorder().start()
    watcher = Watcher(
        CLUSTER,
        bus=get_bus(channel_layer=get_channel_layer()),
        lease=MemoryLease(),
        recorder=recorder,
        settings=pipeline_settings(),
    )
    api = await KubeApi.connect(kubeconfig)
    config = uvicorn.Config(
        "rollouts_ui.asgi:application",
        host=options.host,
        port=options.port,
        log_level="warning",
        lifespan="off",
        ws_ping_interval=None,
    )
    server = uvicorn.Server(config)
    web = asyncio.create_task(server.serve(), name="web")
    watch = asyncio.create_task(watcher.run(api), name="watcher")
    while not server.started and not web.done():
        await asyncio.sleep(0.05)
    if web.done():
        watch.cancel()
        await asyncio.gather(watch, return_exceptions=True)
        web.result()
        raise DemoError(f"the web server did not start on {options.host}:{options.port}")
    announce(f"http://{options.host}:{options.port}/")
    try:
        await asyncio.wait({web, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        server.should_exit = True
        watch.cancel()
        await asyncio.gather(web, watch, return_exceptions=True)
        with contextlib.suppress(Exception):
            await api.close()
        recorder.stop()
