"""Embedded mode in one process: kubesim with every built-in scenario, the watcher, and the web server.

``run_demo`` migrates the (SQLite) database, creates the demo logins with fresh random passwords (printed
once: ``demo`` may do everything, and one user per built-in role), starts the simulator on its own thread,
then runs the watcher and uvicorn on one event loop so the in-memory bus and channel layer are shared.

Every built-in scenario runs by default, each on names of its own; ``demo_legend`` says which rollout
plays which scenario (the fleet page shows it in demo mode). A failure that stops the simulation is
logged at once with its cause and ``fail_the_cluster`` makes the simulated API server answer every
request with an error, so the dashboard shows the cluster as failing rather than as quietly frozen.

Live metrics: when a ``prometheus`` binary exists (``make demo`` installs it the way ``make test`` does,
when it can), ``demo_prometheus`` starts a real one scraping the simulated pods, routes the
Prometheus-backed scenarios' analyses to it and points the demo cluster's ``PROMETHEUS_URLS`` entry at it,
so the rollout page's charts work. Without the binary, ``plan_scenarios`` leaves the Prometheus-backed
scenarios out of the default mix (their analyses could only Error) and says so in one line.

Non-goals: production use (run ``watch`` + an ASGI server + Celery for that) and choosing scenarios beyond
what kubesim offers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import signal
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from kubesim.scenarios import builtin_names
from kubesim.scenarios.builtin import PROMETHEUS_SCENARIOS

# The Prometheus-backed ones: real traffic metrics, analyses answered by a real Prometheus.
METRICS_SCENARIOS = tuple(str(s["name"]) for s in PROMETHEUS_SCENARIOS)
DEFAULT_SCENARIOS = tuple(builtin_names())
DEMO_USER = "demo"
CLUSTER = "demo"
# One login per built-in role (dashboard.access.policy.BUILTIN_ROLES), and what it may do.
ROLE_USERS = (
    ("viewer", "viewer", "sees every rollout; no actions"),
    ("operator", "operator", "sees every rollout; promote, abort, retry, pause, resume, restart, undo"),
    ("admin", "admin", "everything, including unwedge"),
)
# What each built-in scenario shows, in a release manager's words (the scenarios' own descriptions are
# written for their tests). The fleet page's legend and the README's scenario table say the same;
# tests/test_demo.py holds the README to this.
WHAT_YOU_SEE = {
    "healthy-canary": "10 % → 50 % → 100 % with passing analyses; a new image every 15 min",
    "failed-analysis-abort": "the analysis fails; Degraded, aborted, stable serves everything",
    "rerender-race": "Argo CD renders twice; a new hash restarts the canary at step 0",
    "paused-reads-degraded": "paused at a step while Argo CD says Suspended and the sync stays Running",
    "orphaned-canary": "aborted, but the canary ReplicaSet keeps its replicas",
    "weight-fight": "a second writer keeps resetting the canary weight",
    "blue-green": "preview, passing pre-promotion analysis, promoted by a user at 120 s",
    "progress-deadline": "an unpullable image; Degraded with ProgressDeadlineExceeded",
    "metrics-provider-down": "the metrics provider is unreachable; the AnalysisRun ends Error",
    "fleet": "100 generated rollouts with a new image every second",
    "prometheus-healthy": "passes its Prometheus analysis (error rate, p95 latency)",
    "prometheus-error-spike": "the canary's 5xx ratio jumps to 30 %; aborted on error-rate",
    "prometheus-latency-regression": "a slow canary; aborted on p95-latency",
    "prometheus-no-traffic": "no requests: NaN fails the condition, as upstream",
    "flagger-canary": "a Flagger canary that succeeds",
    "flagger-failed": "a Flagger canary that fails its checks and rolls back",
    "flagger-waiting-approval": "waits at its max weight for promotion from the dashboard",
    "istio-weight-fight": (
        "Argo CD self-heal resets the VirtualService's weights; the users node shows the router and its "
        "writer, weight-fight names both"
    ),
    "istio-header-route": (
        "subset routing with a header route and a mirror route; the users node names both and the 90 / 10"
    ),
    "nginx-canary": (
        "the canary Ingress's canary-weight 25 → 50 and its X-Canary header route on the users node"
    ),
    "gateway-api-canary": (
        "the Gateway API plugin moves the HTTPRoute's backendRefs weights; the users node names the HTTPRoute"
    ),
    "smi-canary": "the TrafficSplit's backends 10 → 40, then back to 0 / 100 after the failed analysis",
    "alb-canary": (
        "the ALB Ingress's forward action moves its target groups 20 → 50; the users node names the Ingress"
    ),
    "traffic-ahead-of-capacity": "60 % of traffic on one canary pod, read from the canary Ingress",
    "hpa-workload-ref-conflict": (
        "the HPA targets the workloadRef Deployment, not the Rollout: autoscaler-targets-workload-ref"
    ),
    "hpa-sync-conflict": (
        "the HPA and Argo CD self-heal trade spec.replicas: autoscaler-sync-conflict, and the HPA card"
    ),
    "hpa-at-max-during-analysis": (
        "the HPA sits at maxReplicas while the background analysis runs: autoscaler-at-max-during-analysis"
    ),
    "environments": "one app, bookstore, in dev, staging and prod: the Environments page lines them up",
}
DEMO_GATE_LABEL = "demo (make demo)"
# Months: the simulated cluster stays failed until the demo stops.
FAILED_FOR_SECONDS = 90 * 24 * 3600.0


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
    """The scenarios to run and, in one line, what is missing without Prometheus and why (pure)."""
    backed = needs_prometheus(names)
    if have_prometheus or not backed:
        return list(names), ""
    from kubesim.prometheus import INSTALL_HINT

    missing = (
        "prometheus is not installed (make demo installs it only as root; install it: "
        f"sudo {INSTALL_HINT}), so there are no live analysis charts"
    )
    if explicit:
        return list(names), f"{missing}; the analyses of {', '.join(backed)} will Error."
    return [n for n in names if n not in backed], f"{missing}; leaving out {', '.join(backed)}."


def demo_legend(names: Sequence[str]) -> list[dict[str, Any]]:
    """For each scenario: the objects that play it (with their page) and the state it reaches (pure)."""
    from dashboard.web.fleet import rollout_path
    from kubesim.scenarios import load_scenarios

    legend = []
    for scenario in load_scenarios(list(names)):
        plays = [(r.namespace, r.name) for r in scenario.rollouts]
        plays += [(c.namespace, c.name) for c in scenario.canaries]
        objects = [{"label": f"{ns}/{name}", "url": rollout_path(CLUSTER, ns, name)} for ns, name in plays]
        if scenario.fleet is not None:
            fleet = scenario.fleet
            last = f"fleet-{fleet.namespaces - 1:02d}"
            # The fleet page searching their names (a search also opens the folded Healthy group).
            label = f"{fleet.rollouts} rollouts svc-* in fleet-00 … {last}"
            objects.append({"label": label, "url": "/?" + urlencode({"q": "svc-"})})
        description = scenario.description
        start = min((i for i in (description.find("Ends "), description.find("Cycles")) if i >= 0), default=0)
        outcome = WHAT_YOU_SEE.get(scenario.name) or description[start:]
        legend.append(
            {
                "scenario": scenario.name,
                "kind": "Flagger Canary" if scenario.canaries else "Rollout",
                "objects": objects,
                "outcome": outcome,
                "description": description,
            }
        )
    return legend


def fail_the_cluster(handle: Any, say: Callable[[str], None]) -> None:
    """When the simulation of the running kubesim ``handle`` stops, its API server fails every request
    from then on (its watches end), so the dashboard shows the demo cluster failing rather than a frozen
    picture; ``say`` tells the person running the demo why."""
    simulation = handle.simulation
    if simulation is None:
        return

    def hook(error: BaseException) -> None:
        handle.faults.fail(seconds=FAILED_FOR_SECONDS, code=503)
        handle.faults.drop_watches()
        say(
            f"The simulation stopped ({type(error).__name__}: {error}); the demo cluster now answers every "
            "request with 503, so the dashboard shows it failing. Stop with Ctrl-C."
        )

    def attach() -> None:  # on the simulator's loop, so a failure cannot slip between check and append
        if simulation.failed is not None:
            hook(simulation.failed)
        else:
            simulation.on_failure.append(hook)

    handle.call(attach)


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


# The demo's terminal is for the person running it: the sign-in lines and what goes wrong. A line per
# request (and a "Forbidden" warning each time the simulated Flagger polls a gate that is still closed,
# which is the gate protocol's normal "not yet") would bury them, as would the watcher's progress notes
# ("resynced (0 held, 116 current: …)") after "Press Ctrl-C to stop". LOG_LEVEL=DEBUG keeps them all.
QUIET_LOGGERS = {
    "rollouts_ui.request": logging.WARNING,
    "django.request": logging.ERROR,
    "dashboard.kube.watcher": logging.WARNING,
}
# Django says this once per process when uvicorn streams a static file; harmless for a demo.
_STATIC_STREAMING_WARNING = "StreamingHttpResponse must consume synchronous iterators"


def quiet_request_logs(level: str) -> None:
    """Unless ``level`` (``LOG_LEVEL``) is DEBUG: no access log lines and no 4xx warnings in the demo's
    terminal; server errors (5xx) and every other warning still show."""
    if level == "DEBUG":
        return
    for name, quiet in QUIET_LOGGERS.items():
        logging.getLogger(name).setLevel(quiet)
    warnings.filterwarnings("ignore", message=_STATIC_STREAMING_WARNING)


def wire_flagger_gates(options: DemoOptions) -> None:
    """Point the simulated Flagger's gates at this demo's own gate endpoint with a fresh gate token (the
    endpoint refuses calls without one); the previous demo run's token is withdrawn."""
    import os

    from dashboard.flagger_gates.models import GateToken
    from dashboard.flagger_gates.services import issue_token
    from kubesim.flagger import GATE_TOKEN_ENV, GATE_URL_ENV

    GateToken.objects.filter(cluster=CLUSTER, label=DEMO_GATE_LABEL).delete()
    _, token = issue_token(CLUSTER, label=DEMO_GATE_LABEL)
    os.environ[GATE_URL_ENV] = f"http://{options.host}:{options.port}/api/v1/flagger/gates/{CLUSTER}/"
    os.environ[GATE_TOKEN_ENV] = token


def demo_policy(folder: str | None = None) -> str:
    """The demo's policy file (guard rails: approvals for billing and search, a freeze to switch on),
    copied where it may be edited while the demo runs; "" when ``RBAC_POLICY_FILE`` names one already."""
    import shutil
    import tempfile
    from pathlib import Path

    from django.conf import settings

    if settings.RBAC_POLICY_FILE:
        return ""
    target = Path(folder or tempfile.mkdtemp(prefix="rollouts-ui-demo-")) / "policy.csv"
    shutil.copyfile(Path(__file__).parent / "guardrails" / "demo_policy.csv", target)
    settings.RBAC_POLICY_FILE = str(target)
    return str(target)


def demo_login() -> tuple[str, str]:
    """(username, password): the demo user, with a new password each run, allowed everything."""
    from django.contrib.auth.models import User

    password = secrets.token_urlsafe(12)
    user, _ = User.objects.get_or_create(username=DEMO_USER)
    user.set_password(password)
    user.is_active = True
    user.is_staff = user.is_superuser = True  # the Django admin too: roles and grants are managed there
    user.save()
    _grant(user, "admin")
    return DEMO_USER, password


def role_logins() -> list[tuple[str, str, str, str]]:
    """(username, password, role, what it may do): one user per built-in role, new passwords each run."""
    from django.contrib.auth.models import User

    logins = []
    for username, role, may in ROLE_USERS:
        password = secrets.token_urlsafe(12)
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(password)
        user.is_active = True
        user.is_staff = user.is_superuser = False
        user.save()
        _grant(user, role)
        logins.append((username, password, role, may))
    return logins


def _grant(user: Any, role_name: str) -> None:
    """``user`` holds exactly the built-in role ``role_name`` on everything (access is deny-by-default)."""
    from dashboard.access.models import Grant, Role
    from dashboard.access.policy import BUILTIN_ROLES

    role, _ = Role.objects.get_or_create(
        name=role_name, defaults={"actions": " ".join(BUILTIN_ROLES[role_name])}
    )
    Grant.objects.filter(user=user).exclude(role=role).delete()
    Grant.objects.get_or_create(user=user, role=role, cluster="*", namespace="*", rollout="*", deny=False)


async def serve(options: DemoOptions, kubeconfig: str, announce: Callable[[str], None]) -> None:
    """Watcher + ASGI server on this loop until cancelled (Ctrl-C)."""
    import uvicorn

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
        bus=get_bus(),
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
        recorder.stop()
