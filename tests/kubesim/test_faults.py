"""Fault injection (unit) and the `python -m kubesim` process: CLI errors, restart with the same token."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from typing import Any

import pytest

from kubesim.faults import FaultError, Faults
from kubesim.store import Gone, Store
from kubesim.testing import PROJECT_ROOT, KubesimProcess, kubesim_process


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_it_fails_the_next_count_requests() -> None:
    faults = Faults()
    faults.fail(count=2, code=503)
    assert [faults.take_failure() for _ in range(3)] == [503, 503, None]


def test_it_fails_every_request_for_a_while() -> None:
    clock = FakeClock()
    faults = Faults(clock=clock)
    faults.fail(seconds=5)
    assert faults.take_failure() == 500
    clock.now += 6
    assert faults.take_failure() is None


def test_hang_counts_down() -> None:
    clock = FakeClock()
    faults = Faults(clock=clock)
    faults.hang(3)
    clock.now += 1
    assert faults.hang_remaining() == pytest.approx(2)


def test_expire_next_watch_is_used_once_per_watch() -> None:
    faults = Faults()
    faults.expire_next_watch(count=2, mode="status")
    assert [faults.take_expire() for _ in range(3)] == ["status", "status", None]


def test_restart_closes_watches_and_compacts_history() -> None:
    store = Store()
    store.create("pods", {"metadata": {"name": "p", "namespace": "default"}, "spec": {}})
    faults = Faults(store)
    faults.attach(lambda: 3)
    assert faults.restart() == 3
    with pytest.raises(Gone):
        store.events_since("pods", store.resource_version - 1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda f: f.hang(0), "seconds must be a positive number"),
        (lambda f: f.fail(count=0), "count must be a positive integer"),
        (lambda f: f.fail(code=200), "code must be an HTTP error status"),
        (lambda f: f.expire_next_watch(mode="sometimes"), "mode must be one of event, status"),
    ],
)
def test_bad_fault_parameters_are_named(call: Any, message: str) -> None:
    with pytest.raises(FaultError, match=message):
        call(Faults())


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubesim", *args], capture_output=True, text=True, timeout=60, cwd=PROJECT_ROOT
    )


def test_the_cli_names_a_bad_argument_without_a_traceback() -> None:
    result = run_cli("serve", "--speed", "0")
    assert result.returncode == 2 and "must be greater than 0" in result.stderr
    assert "Traceback" not in result.stderr
    result = run_cli("serve", "--port", "http")
    assert result.returncode == 2 and "is not a TCP port" in result.stderr


def test_the_cli_rejects_an_unknown_scenario_clearly() -> None:
    result = run_cli("serve", "--scenario", "no-such-scenario", "--kubeconfig", "/dev/null")
    assert result.returncode == 2 and "no-such-scenario" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_cli_lists_scenarios_one_a_line() -> None:
    result = run_cli("scenarios")
    assert result.returncode == 0
    assert any(line.startswith("healthy-canary ") for line in result.stdout.splitlines())


def _request(proc: KubesimProcess, method: str, path: str, body: Any = None) -> Any:
    request = urllib.request.Request(
        proc.url + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {proc.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5, context=proc.ssl_context()) as response:
        return json.load(response)


@pytest.mark.slow
def test_a_token_that_begins_with_a_dash_is_still_the_token() -> None:
    # secrets.token_urlsafe() begins with "-" one time in 64; argparse once took it for an option
    with kubesim_process(token="-starts-with-a-dash") as proc:
        assert _request(proc, "GET", "/api/v1/pods")["items"] == []


@pytest.mark.slow
def test_the_process_restarts_on_the_same_port_with_the_same_token() -> None:
    with kubesim_process() as proc:
        _request(
            proc,
            "POST",
            "/api/v1/namespaces/default/pods",
            {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        )
        assert [p["metadata"]["name"] for p in _request(proc, "GET", "/api/v1/pods")["items"]] == ["p"]
        port = proc.port
        proc.restart()
        assert proc.port == port
        assert _request(proc, "GET", "/api/v1/pods")["items"] == []  # a restart without etcd loses the state
        assert _request(proc, "GET", "/kubesim/healthz")["ok"] is True
