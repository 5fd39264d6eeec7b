"""One module-long world for the scenario suites: kubesim running a batch of built-in scenarios (sped
up), its watcher, one uvicorn server, one Chromium, a signed-in session per built-in role, and the
checks every page must pass (no page or console error, no sideways scroll at 1280 px, axe-core).

Module scope keeps the suite affordable on two shared cores: the server, the simulator and the browser
start once per module, and each role signs in once (its cookies are reused by every page it opens).
The database rows the module creates are flushed when it ends, as a transactional test would, and the
rows the data migrations made (the built-in roles) are put back for the tests that follow.
Non-goal: scenario-specific expectations (the test modules hold those).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesim.testing import running_kubesim
from tests.browser.conftest import PASSWORD, SHOTS, Server, WatcherThread, snapshot
from tests.conftest import restore_migrated_rows

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
CLUSTER = "sim"
# The built-in roles (dashboard.access.policy.BUILTIN_ROLES) and the user who holds each here.
USERS = {"viewer": "vera", "operator": "olivia", "admin": "ada"}
NARROW = {"width": 1280, "height": 900}

# Which rollout (or Flagger Canary) each built-in scenario creates, as cluster/namespace/name.
SCENARIO_KEYS = {
    "healthy-canary": "sim/shop/checkout",
    "failed-analysis-abort": "sim/billing/payments",
    "rerender-race": "sim/web/frontend",
    "paused-reads-degraded": "sim/search/search",
    "orphaned-canary": "sim/warehouse/inventory",
    "weight-fight": "sim/ml/recommendations",
    "blue-green": "sim/identity/accounts",
    "progress-deadline": "sim/fulfilment/orders",
    "metrics-provider-down": "sim/catalog/catalog",
    "prometheus-healthy": "sim/prom-healthy/storefront",
    "prometheus-error-spike": "sim/prom-errors/cart",
    "prometheus-latency-regression": "sim/prom-latency/search-api",
    "prometheus-no-traffic": "sim/prom-idle/reports",
    "flagger-canary": "sim/test/podinfo",
    "flagger-failed": "sim/test/frontend",
    "flagger-waiting-approval": "sim/test/backend",
    "istio-weight-fight": "sim/bookinfo/reviews",
    "istio-header-route": "sim/mesh-istio/ratings",
    "alb-canary": "sim/aws-edge/catalog-api",
    "nginx-canary": "sim/edge/storefront",
    "gateway-api-canary": "sim/gateway-demo/payments",
    "smi-canary": "sim/mesh-smi/ledger",
    "traffic-ahead-of-capacity": "sim/capacity/quotes",
    "hpa-workload-ref-conflict": "sim/autoscale-ref/api",
    "hpa-sync-conflict": "sim/autoscale-sync/cart",
    "hpa-at-max-during-analysis": "sim/autoscale-max/orders",
    "fleet": "sim/fleet-00/",  # a prefix: the generated rollouts' names are not fixed
    "environments": "sim/bookstore-dev/bookstore",  # and bookstore-staging, bookstore-prod
}


def page_path(key: str) -> str:
    return "/rollouts/" + key + "/"


@dataclass
class World:
    sim: Any
    server: Server
    browser: Any
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)

    # --- the simulator's own objects (what the page must agree with) -------------------------------
    def objects(self, resource: str, namespace: str | None = None) -> list[dict[str, Any]]:
        items, _ = self.sim.call(self.sim.store.list, resource, namespace)
        return list(items)

    def rollout(self, key: str) -> dict[str, Any]:
        _, namespace, name = key.split("/")
        return next(
            o for o in self.objects("argoproj.io/rollouts", namespace) if o["metadata"]["name"] == name
        )

    def replicasets(self, key: str) -> list[dict[str, Any]]:
        _, namespace, name = key.split("/")
        return [
            rs
            for rs in self.objects("apps/replicasets", namespace)
            if any(ref.get("name") == name for ref in rs["metadata"].get("ownerReferences") or [])
        ]

    def managed_by_application(self, key: str) -> bool:
        _, namespace, name = key.split("/")
        for app in self.objects("argoproj.io/applications"):
            for res in (app.get("status") or {}).get("resources") or []:
                if (
                    res.get("kind") == "Rollout"
                    and res.get("name") == name
                    and res.get("namespace") == namespace
                ):
                    return True
        return False

    def wait_for_view(
        self, key: str, check: Callable[[dict[str, Any]], bool], timeout: float = 60.0
    ) -> dict[str, Any]:
        """The bus's view of ``key`` once ``check`` holds (the watcher has caught up with the simulator)."""
        deadline = time.monotonic() + timeout
        view: dict[str, Any] = {}
        while time.monotonic() < deadline:
            view = snapshot(key) or {}
            if view and check(view):
                return view
            time.sleep(0.25)
        raise AssertionError(
            f"{key} never reached the expected state within {timeout:g} s; last seen: "
            f"status={view.get('status')} step={view.get('step')} message={view.get('message')!r}"
        )

    # --- pages ------------------------------------------------------------------------------------
    def open(
        self, role: str, path: str, *, viewport: dict[str, int] | None = None, dark: bool = False
    ) -> Any:
        """A fresh tab signed in as the built-in ``role``, with page and console errors collected."""
        context = self.browser.new_context(
            viewport=viewport or NARROW,
            storage_state=self.session(role),
            color_scheme="dark" if dark else "light",
        )
        page = context.new_page()
        page.set_default_timeout(15_000)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
        page.on(
            "console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None
        )
        page.errors = errors  # read by assert_clean
        # A liveness bound, not a speed target: "load" waits for plotly.js (4.6 MB) to be parsed in a fresh
        # context, 4.4 s on an idle two-core machine here, and a loaded, slower one passed 15 s.
        page.goto(self.server.url + path, timeout=45_000)
        return page

    def session(self, role: str) -> dict[str, Any]:
        if role not in self.sessions:
            context = self.browser.new_context(viewport=NARROW)
            page = context.new_page()
            page.goto(self.server.url + "/accounts/login/")
            page.fill("input[name=username]", USERS[role])
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(self.server.url + "/")
            self.sessions[role] = context.storage_state()
            context.close()
        return self.sessions[role]


def assert_clean(page: Any) -> None:
    """No page error, no console error, and nothing wider than the window (no sideways scroll)."""
    page.wait_for_timeout(150)  # late errors from the first live update
    assert page.errors == [], "\n".join(page.errors)
    widths = page.evaluate(
        "() => ({doc: document.documentElement.scrollWidth, win: document.documentElement.clientWidth})"
    )
    assert widths["doc"] <= widths["win"], f"the page scrolls sideways: {widths}"


# The rules a colour scheme can change the outcome of: in the dark scheme the DOM is the light one's, so
# the structural rules (names, roles, landmarks) would find what they found in light, at twice the cost.
COLOUR_RULES = ("color-contrast", "link-in-text-block")


def axe_violations(page: Any, rules: tuple[str, ...] | None = None) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now (rule, impact, first nodes);
    every rule, or only ``rules``."""
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async (rules) => {
             const options = {resultTypes: ['violations']};
             if (rules) options.runOnly = {type: 'rule', values: rules};
             const r = await axe.run(document, options);
             return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
               .map(v => `${v.id} (${v.impact}): ${v.help} — `
                 + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '));
           }""",
        list(rules) if rules else None,
    )
    return list(found)


def axe_sweep(world: World, paths: list[str], *, dark: bool) -> None:
    """Every page of ``paths`` free of axe-core's serious and critical violations and of page errors, in
    one operator's tab, as a user goes from page to page (plotly.js is parsed once, not once a page); in
    the dark scheme only the rules a colour scheme can change."""
    problems: dict[str, list[str]] = {}
    page = world.open("operator", paths[0], dark=dark)
    try:
        for path in paths:
            page.errors.clear()
            if page.url != world.server.url + path:
                page.goto(world.server.url + path)
            page.wait_for_timeout(400)  # the first live update and the charts
            found = axe_violations(page, COLOUR_RULES if dark else None)
            if found:
                problems[path] = found
            assert page.errors == [], f"{path}: " + "\n".join(page.errors)
    finally:
        page.context.close()
    assert problems == {}, "\n".join(f"{p}:\n  " + "\n  ".join(v) for p, v in problems.items())


def shot(page: Any, name: str, *, docs: bool = False) -> None:
    """The whole page into artifacts/screenshots; with ``docs`` also its top 1600 px into
    artifacts/screenshots/docs, the size docs/screenshots keeps (copied there by hand when regenerated)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    if docs:
        (SHOTS / "docs").mkdir(exist_ok=True)
        height = min(1600, int(page.evaluate("() => document.documentElement.scrollHeight")))
        width = int(page.evaluate("() => document.documentElement.clientWidth"))
        clip = {"x": 0, "y": 0, "width": width, "height": height}
        page.screenshot(path=str(SHOTS / "docs" / f"{name}.png"), full_page=True, clip=clip)


def _drain(stream: Any, path: Path) -> None:
    with path.open("ab") as sink:
        for line in iter(stream.readline, b""):
            sink.write(line)
            sink.flush()


def _users() -> None:
    from django.contrib.auth.models import User

    from dashboard.access.models import Grant, Role

    for role, username in USERS.items():
        user = User.objects.create_user(username, password=PASSWORD)
        if role != "viewer":  # everyone reads (RBAC_DEFAULT_ROLE=viewer); the others get their role
            stored = Role.objects.get_or_create(name=role, defaults={"actions": "get"})[0]
            Grant.objects.create(user=user, role=stored, cluster="*", namespace="*", rollout="*")


@contextlib.contextmanager
def world(
    scenarios: list[str],
    *,
    django_db_blocker: Any,
    browser: Any,
    redis_url: str,
    speed: float = 6.0,
    prometheus: bool = False,
    actions: bool = False,
) -> Iterator[World]:
    """Start everything for ``scenarios``; tear it down (and flush the rows it wrote) afterwards."""
    import redis
    from django.core.management import call_command
    from django.db import connection

    prefix = f"test:{uuid.uuid4().hex[:12]}:"
    # Open for the whole module: the watcher's history recorder writes from its own thread.
    blocker = django_db_blocker.unblock()
    blocker.__enter__()
    _users()
    name = connection.settings_dict["NAME"]
    base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    from django.conf import settings

    old_prefix = settings.LIVE_REDIS_PREFIX
    settings.LIVE_REDIS_PREFIX = prefix  # the watcher thread and snapshot() publish / read under it
    stack = contextlib.ExitStack()
    try:
        sim = stack.enter_context(running_kubesim(scenarios, speed=speed, seed=1))
        env = {
            **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
            "DATABASE_URL": f"{base}/{name}",
            "LIVE_REDIS_PREFIX": prefix,
            "DJANGO_SETTINGS_MODULE": "rollouts_ui.settings",
            "RBAC_DEFAULT_ROLE": "viewer",
            "CLUSTERS": f"{CLUSTER}={sim.kubeconfig}",
        }
        if prometheus:
            from kubesim.prometheus import attached_prometheus

            prom = stack.enter_context(attached_prometheus(sim))
            env["PROMETHEUS_URLS"] = f"{CLUSTER}={prom.url}"
        if actions:
            env["CELERY_TASK_DEFAULT_QUEUE"] = f"actions-browser-{uuid.uuid4().hex[:8]}"
            env["ACTIONS_WAIT_SECONDS"] = "15"
        watcher = WatcherThread(str(sim.kubeconfig), CLUSTER)
        watcher.start()
        stack.callback(watcher.stop)
        server = Server(env)
        server.start()
        stack.callback(server.stop)
        # Drain the server's log (a module-long server fills an unread pipe and then blocks on it).
        log = SHOTS.parent / "browser-server.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        threading.Thread(target=_drain, args=(server.process.stderr, log), daemon=True).start()
        if actions:
            from tests.browser.test_actions_browser import CeleryWorker

            worker = CeleryWorker(env)
            worker.start()
            stack.callback(worker.stop)
        yield World(sim=sim, server=server, browser=browser)
    finally:
        stack.close()
        settings.LIVE_REDIS_PREFIX = old_prefix
        client = redis.Redis.from_url(redis_url)
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        call_command("flush", interactive=False, verbosity=0)
        restore_migrated_rows()
        from django.db import connections

        for conn in connections.all():  # the watcher thread's pooled connections too
            close_pool = getattr(conn, "close_pool", None)
            if close_pool is not None:
                close_pool()
            conn.close()
        blocker.__exit__(None, None, None)
