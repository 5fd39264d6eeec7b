"""Embedded mode in one process: kubesim with a mix of scenarios, the watcher, and the web server.

``run_demo`` migrates the (SQLite) database, creates a demo login with a fresh random password (printed
once), starts the simulator on its own thread, then runs the watcher and uvicorn on one event loop so
the in-memory bus and channel layer are shared.

Live metrics: when a ``prometheus`` binary exists, ``demo_prometheus`` starts a real one scraping the
simulated pods, routes the Prometheus-backed scenarios' analyses to it and points the demo cluster's
``PROMETHEUS_URLS`` entry at it, so the rollout page's charts work. Without the binary, ``plan_scenarios``
leaves the Prometheus-backed scenarios out of the default mix (their analyses could only Error) and says
so, with the install command.

Non-goals: production use (run ``watch`` + an ASGI server + Celery for that) and choosing scenarios beyond
what kubesim offers.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

# The Prometheus-backed ones: real traffic metrics, analyses answered by a real Prometheus.
METRICS_SCENARIOS = ("prometheus-healthy", "prometheus-error-spike")
DEFAULT_SCENARIOS = (
    "healthy-canary",
    "rerender-race",
    "blue-green",
    "failed-analysis-abort",
    "paused-reads-degraded",
    "orphaned-canary",
    *METRICS_SCENARIOS,
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


def needs_prometheus(names: Sequence[str]) -> list[str]:
    """The scenarios among ``names`` whose analyses query Prometheus."""
    from kubesim.scenarios.builtin import PROMETHEUS_SCENARIOS

    backed = {str(s["name"]) for s in PROMETHEUS_SCENARIOS}
    return [name for name in names if name in backed]


def plan_scenarios(names: Sequence[str], *, explicit: bool, have_prometheus: bool) -> tuple[list[str], str]:
    """The scenarios to run and what to tell the user about live metrics (pure)."""
    backed = needs_prometheus(names)
    if have_prometheus or not backed:
        return list(names), ""
    from kubesim.prometheus import INSTALL_HINT

    missing = f"prometheus is not installed, so there are no live metrics charts (install it: {INSTALL_HINT})"
    if explicit:
        return list(names), f"{missing}; the analyses of {', '.join(backed)} will Error."
    return [n for n in names if n not in backed], f"{missing}; leaving out {', '.join(backed)}."


def scrape_interval(speed: float) -> float:
    """Faster simulations scrape more often so that their scaled-down query windows still hold samples."""
    return min(1.0, max(0.25, 1.0 / speed))


@contextlib.contextmanager
def demo_prometheus(
    handle: object, scenarios: Sequence[str], speed: float, say: Callable[[str], None]
) -> Iterator[str | None]:
    """A real Prometheus for the running kubesim ``handle``, wired to the demo cluster; yields its URL.

    Yields None (after saying why) when there is no binary or it will not start: the demo goes on
    without charts rather than failing.
    """
    from django.conf import settings

    from kubesim.prometheus import PrometheusUnavailable, attached_prometheus, find_prometheus

    if find_prometheus() is None or not needs_prometheus(scenarios):
        yield None  # plan_scenarios has said why; without traffic scenarios there is nothing to chart
        return
    stack = contextlib.ExitStack()
    try:
        prom = stack.enter_context(attached_prometheus(handle, scrape_interval=scrape_interval(speed)))
    except PrometheusUnavailable as error:
        say(f"Prometheus would not start, so there are no live metrics charts: {error}")
        yield None
        return
    before = settings.PROMETHEUS_URLS
    # The simulated cluster's metrics live only in this Prometheus, whatever else is configured.
    settings.PROMETHEUS_URLS = ",".join(p for p in (before, f"{CLUSTER}={prom.url}") if p)
    say(f"Prometheus {prom.url} is scraping the simulated pods (live charts on each rollout page).")
    try:
        with stack:
            yield prom.url
    finally:
        settings.PROMETHEUS_URLS = before


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """SIGTERM ends the demo like Ctrl-C, so the context managers stop Prometheus instead of orphaning it."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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
