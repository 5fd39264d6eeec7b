"""The demo shows everything: every built-in scenario with a legend, one login per role, an honest failure
and a quiet stop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from dashboard.demo import (
    DEFAULT_SCENARIOS,
    QUIET_LOGGERS,
    WHAT_YOU_SEE,
    demo_legend,
    demo_login,
    fail_the_cluster,
    quiet_request_logs,
    role_logins,
)
from kubesim.scenarios import builtin_names
from kubesim.testing import free_port, running_kubesim

ROOT = Path(__file__).resolve().parents[1]
KEY = "demo/shop/checkout"


def test_the_default_mix_is_every_builtin_scenario() -> None:
    assert list(DEFAULT_SCENARIOS) == builtin_names()


@pytest.fixture
def logger_levels() -> Any:
    saved = {name: logging.getLogger(name).level for name in QUIET_LOGGERS}
    yield
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


def test_the_demo_terminal_gets_no_line_per_request_nor_a_warning_per_closed_gate(logger_levels: Any) -> None:
    quiet_request_logs("INFO")
    assert not logging.getLogger("rollouts_ui.request").isEnabledFor(logging.INFO)
    assert not logging.getLogger("django.request").isEnabledFor(logging.WARNING)  # a closed gate's 403
    assert logging.getLogger("django.request").isEnabledFor(logging.ERROR)  # a 500 still shows
    assert not logging.getLogger("dashboard.kube.watcher").isEnabledFor(logging.INFO)
    assert logging.getLogger("dashboard.kube.watcher").isEnabledFor(logging.WARNING)  # a failing watch shows


def test_log_level_debug_keeps_every_request_line_in_the_demo(logger_levels: Any) -> None:
    logging.getLogger("rollouts_ui.request").setLevel(logging.NOTSET)
    quiet_request_logs("DEBUG")
    assert logging.getLogger("rollouts_ui.request").level == logging.NOTSET


def test_the_legend_speaks_plainly_for_every_builtin_scenario_and_the_readme_says_the_same() -> None:
    assert set(WHAT_YOU_SEE) == set(builtin_names())
    table = {}
    for line in (ROOT / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[0].strip("`") in WHAT_YOU_SEE:
            table[cells[0].strip("`")] = (cells[1], cells[2])
    assert set(table) == set(WHAT_YOU_SEE)
    legend = {entry["scenario"]: entry for entry in demo_legend(DEFAULT_SCENARIOS)}
    for name, (played_by, what) in table.items():
        assert what == WHAT_YOU_SEE[name] == legend[name]["outcome"], name
        if name != "fleet":
            assert f"`{legend[name]['objects'][0]['label']}`" in played_by, name


def test_a_scenario_file_of_ones_own_shows_the_outcome_its_description_states() -> None:
    example = ROOT / "kubesim" / "scenarios" / "examples" / "canary-with-analysis.yaml"
    assert demo_legend([str(example)])[0]["outcome"] == "Ends Healthy on revision 2."


def test_the_legend_says_which_objects_play_each_scenario_and_what_they_reach() -> None:
    legend = {entry["scenario"]: entry for entry in demo_legend(DEFAULT_SCENARIOS)}
    assert set(legend) == set(DEFAULT_SCENARIOS)
    healthy = legend["healthy-canary"]
    assert healthy["objects"] == [{"label": "shop/checkout", "url": "/rollouts/demo/shop/checkout/"}]
    assert healthy["kind"] == "Rollout" and healthy["outcome"] == WHAT_YOU_SEE["healthy-canary"]
    assert legend["flagger-canary"]["kind"] == "Flagger Canary"
    fleet = [{"label": "100 rollouts svc-* in fleet-00 … fleet-04", "url": "/?q=svc-"}]
    assert legend["fleet"]["objects"] == fleet  # every scenario links to what plays it
    assert all(o["url"] for entry in legend.values() for o in entry["objects"])
    assert legend["weight-fight"]["outcome"] == WHAT_YOU_SEE["weight-fight"]
    labels = [o["label"] for entry in legend.values() for o in entry["objects"]]
    assert len(labels) == len(set(labels))  # distinct names


@pytest.mark.django_db
def test_demo_may_do_everything_and_each_role_user_holds_its_role() -> None:
    from django.contrib.auth.models import User

    from dashboard.access.rbac import can, forget

    demo_login()
    logins = {name: (password, role) for name, password, role, _ in role_logins()}
    assert {role for _, role in logins.values()} == {"viewer", "operator", "admin"}
    demo = User.objects.get(username="demo")
    assert demo.is_superuser and can(demo, "unwedge", KEY)
    users = {name: User.objects.get(username=name) for name in logins}
    assert [can(users["viewer"], a, KEY) for a in ("get", "promote")] == [True, False]
    assert [can(users["operator"], a, KEY) for a in ("promote", "unwedge")] == [True, False]
    assert can(users["admin"], "unwedge", KEY) and not users["admin"].is_staff
    assert all(users[name].check_password(password) for name, (password, _) in logins.items())
    first = logins["viewer"][0]
    forget(users["viewer"])
    role_logins()  # a second run: new passwords, still exactly one role each
    users["viewer"].refresh_from_db()
    assert not users["viewer"].check_password(first)
    assert users["viewer"].rollout_grants.count() == 1


@pytest.mark.django_db
def test_the_fleet_page_shows_the_legend_in_demo_mode_only(settings: Any) -> None:
    from django.contrib.auth.models import User

    client = Client()
    client.force_login(User.objects.create_user("reader", password="a-long-test-password"))
    settings.RBAC_DEFAULT_ROLE = "viewer"
    assert 'id="demo-legend"' not in client.get("/").content.decode()
    settings.DEMO_LEGEND = demo_legend(["healthy-canary", "fleet"])
    page = client.get("/").content.decode()
    assert (
        'id="demo-legend"' in page
        and "<summary>Demo: which rollout plays which scenario (2)</summary>" in page
    )
    assert '<a href="/rollouts/demo/shop/checkout/">shop/checkout</a>' in page


def test_a_stopped_simulation_fails_the_demo_cluster_and_says_why() -> None:
    said: list[str] = []
    with running_kubesim(["healthy-canary"]) as sim:
        fail_the_cluster(sim, said.append)
        simulation = sim.simulation
        sim.call(lambda: [hook(RuntimeError("boom")) for hook in simulation.on_failure])
        assert sim.call(sim.faults.take_failure) == 503
        assert said == [
            "The simulation stopped (RuntimeError: boom); the demo cluster now answers every request "
            "with 503, so the dashboard shows it failing. Stop with Ctrl-C."
        ]
        sim.call(sim.faults.clear)  # let the handle stop cleanly


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("pages_open", "sigint"),
    [(True, signal.SIG_DFL), (False, signal.SIG_IGN)],
    ids=["with-live-pages", "idle-started-in-the-background"],  # `cmd &` in a script ignores SIGINT
)
def test_ctrl_c_stops_the_demo_quietly(
    pages_open: bool, sigint: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As `make demo` runs: SQLite and no Redis (the suite's REDIS_URL would leave this demo's cluster
    # report on the shared bus, where readiness would find it stale long after).
    env = {
        **{name: value for name, value in os.environ.items() if name != "REDIS_URL"},
        "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        "LOG_FORMAT": "plain",
        "ANONYMOUS_READ_ONLY": "true",  # lets the test's websockets in without a login
        "PYTHONUNBUFFERED": "1",
    }
    port = free_port()
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        demo = subprocess.Popen(
            [sys.executable, "manage.py", "demo", "--port", str(port), "--scenario", "healthy-canary"],
            cwd=ROOT,
            env=env,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # its own process group, as in a terminal
            preexec_fn=lambda: signal.signal(signal.SIGINT, sigint),
        )
        try:
            deadline = time.monotonic() + 90
            while "Press Ctrl-C to stop." not in out.read_text() and time.monotonic() < deadline:
                assert demo.poll() is None, err.read_text()[-2000:]
                time.sleep(0.2)
            for path in ("/healthz", "/favicon.ico", "/accounts/login/"):  # an access line, a 404 warning
                with contextlib.suppress(urllib.error.HTTPError):
                    urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10).close()
            received: list[str] = []
            if pages_open:  # live pages stay open through the stop, as browsers do
                pages = _open_pages(port, received)
            time.sleep(3)  # the watcher streams, the simulation moves, the pages get updates
            started = time.monotonic()
            os.killpg(demo.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground process group
            demo.wait(30)
            took = time.monotonic() - started
            if pages_open:
                pages.join(10)
        finally:
            if demo.poll() is None:
                demo.kill()
                demo.wait()
    with capsys.disabled():
        print(f"\ndemo stopped {took:.2f} s after Ctrl-C")
    errors = err.read_text()
    assert demo.returncode == 0, errors[-2000:]
    assert out.read_text().rstrip().endswith("Stopped.")
    assert "socket.send() raised exception" not in errors and "Traceback" not in errors
    assert "rollouts_ui.request" not in errors and "Not Found" not in errors, errors[-2000:]  # quiet terminal
    assert not pages_open or len(received) >= 2, received  # both pages were live (at least their snapshots)
    assert "Sign in as  demo  with password  " in out.read_text()


def _open_pages(port: int, received: list[str]) -> threading.Thread:
    """A thread holding a fleet and a rollout websocket open (reading updates) until the server goes."""

    async def hold() -> None:
        import websockets

        origin = f"http://127.0.0.1:{port}"
        paths = ("/ws/fleet/", "/ws/rollouts/demo/shop/checkout/")
        sockets = [
            await websockets.connect(f"ws://127.0.0.1:{port}{p}", origin=origin)  # type: ignore[arg-type]
            for p in paths
        ]
        for ws in sockets:
            await ws.send("{}")

        async def drain(ws: Any) -> None:
            with contextlib.suppress(Exception):
                async for message in ws:
                    received.append(str(message)[:80])

        await asyncio.wait_for(asyncio.gather(*(drain(ws) for ws in sockets)), 60)

    thread = threading.Thread(target=lambda: asyncio.run(hold()), daemon=True)
    thread.start()
    return thread


@pytest.mark.django_db
def test_the_demos_flagger_gates_carry_a_token_the_gate_endpoint_accepts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dashboard.demo import DemoOptions, wire_flagger_gates
    from dashboard.flagger_gates.models import GateCall
    from kubesim.flagger import GATE_TOKEN_ENV, GATE_URL_ENV, canary_manifest
    from kubesim.scenarios import load_scenarios

    for name in (GATE_URL_ENV, GATE_TOKEN_ENV):
        monkeypatch.setenv(name, "")  # restored afterwards, whatever wire_flagger_gates sets
    wire_flagger_gates(DemoOptions(port=8123))
    wire_flagger_gates(DemoOptions(port=8123))  # a second run withdraws the first run's token
    gated = [
        (defn, hook)
        for scenario in load_scenarios(builtin_names())
        for defn in scenario.canaries
        for hook in canary_manifest(defn, os.environ[GATE_URL_ENV], os.environ[GATE_TOKEN_ENV])["spec"][
            "analysis"
        ].get("webhooks", [])
        if hook["url"].startswith("http://127.0.0.1:8123/api/v1/flagger/gates/demo/")
    ]
    assert gated, "no built-in Canary waits at the dashboard's gates"
    for defn, hook in gated:
        payload = {"name": defn.name, "namespace": defn.namespace, "phase": "Progressing", "checksum": "c1"}
        body = json.dumps({**payload, "metadata": hook["metadata"]})
        path = hook["url"].removeprefix("http://127.0.0.1:8123")
        response = Client().post(path, data=body, content_type="application/json")
        assert response.status_code in (200, 403), (hook["type"], response.content)  # open or closed, not 401
    assert GateCall.objects.count() == len(gated)


def test_the_default_demo_routes_a_canary_through_each_kind_of_traffic_router() -> None:
    from kubesim.scenarios import load_scenarios

    routers = set()
    for scenario in load_scenarios(list(DEFAULT_SCENARIOS)):
        for rollout in scenario.rollouts:
            routing = (rollout.strategy.get("canary") or {}).get("trafficRouting") or {}
            routers |= set(routing) | set(routing.get("plugins") or {})
    assert {"istio", "nginx", "alb", "smi", "argoproj-labs/gatewayAPI"} <= routers
