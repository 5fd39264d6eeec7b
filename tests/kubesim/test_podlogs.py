"""kubesim's pods/log subresource, read by kubectl (``logs``, ``logs -f``) and the official client."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubesim import podlogs
from kubesim.clock import rfc3339
from kubesim.testing import KubesimHandle
from tests.kubesim.kubectl_helpers import KUBECTL, kubectl, kubesim_for_kubectl


@pytest.fixture(scope="module")
def sim() -> Iterator[KubesimHandle]:
    yield from kubesim_for_kubectl()


def running_pod(
    sim: KubesimHandle,
    ns: str,
    name: str,
    *,
    containers: tuple[str, ...] = ("app",),
    revision: str = "2",
    started_seconds_ago: int = 40,
    waiting: str | None = None,
) -> dict[str, Any]:
    """A pod of ReplicaSet revision ``revision`` of a rollout ``web``, its containers started a while ago."""
    store = sim.store

    def make() -> dict[str, Any]:
        if store.try_get("namespaces", None, ns) is None:
            store.create("namespaces", {"metadata": {"name": ns}})
        rollout = store.try_get("argoproj.io/rollouts", ns, "web") or store.create(
            "argoproj.io/rollouts",
            {
                "metadata": {"name": "web", "namespace": ns},
                "spec": {"selector": {"matchLabels": {"app": "web"}}},
            },
        )
        rs_name = f"web-{revision}abc"
        rs = store.try_get("apps/replicasets", ns, rs_name) or store.create(
            "apps/replicasets",
            {
                "metadata": {
                    "name": rs_name,
                    "namespace": ns,
                    "annotations": {podlogs.REVISION_ANNOTATION: revision},
                    "ownerReferences": [_owner(rollout, "argoproj.io/v1alpha1", "Rollout")],
                },
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "app", "image": "demo:1"}]},
                    },
                },
            },
        )
        store.create(
            "pods",
            {
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "ownerReferences": [_owner(rs, "apps/v1", "ReplicaSet")],
                },
                "spec": {"containers": [{"name": c, "image": f"demo/{c}:1"} for c in containers]},
            },
        )
        started = rfc3339(store.now() - timedelta(seconds=started_seconds_ago))
        state: dict[str, Any] = (
            {"waiting": {"reason": waiting}} if waiting else {"running": {"startedAt": started}}
        )
        status = {"phase": "Running", "containerStatuses": [{"name": c, "state": state} for c in containers]}
        return dict(store.patch("pods", ns, name, {"status": status}, subresource="status"))

    return sim.call(make)


def _owner(obj: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
    }


def core_api(sim: KubesimHandle) -> Any:
    from kubernetes import client, config

    return client.CoreV1Api(config.new_client_from_config(config_file=str(sim.kubeconfig)))


def test_a_log_is_the_same_each_time_it_is_read() -> None:
    lines = [podlogs.line("web-1", "app", "demo:1", i, 0.3) for i in range(50)]
    assert lines == [podlogs.line("web-1", "app", "demo:1", i, 0.3) for i in range(50)]
    assert lines[0].startswith('level=info msg="starting app"')
    errors = sum("level=error" in line for line in lines[2:])
    assert 5 <= errors <= 25  # about the rate asked for
    assert not any("level=error" in podlogs.line("web-1", "app", "demo:1", i, 0.0) for i in range(50))


def test_the_failing_scenarios_canaries_log_errors_at_their_measured_rate() -> None:
    from kubesim.simulation import canary_error_rate, load_scenarios

    def rate(name: str) -> float:
        (scenario,) = load_scenarios([name])
        return canary_error_rate(scenario, scenario.rollouts[0])

    assert rate("failed-analysis-abort") == 0.2
    assert rate("orphaned-canary") == 0.3
    assert rate("prometheus-error-spike") >= 0.2
    assert rate("rerender-race") == 0.0


def test_kubectl_logs_prints_the_pods_lines_with_tail_and_since(sim: KubesimHandle) -> None:
    running_pod(sim, "logs-read", "web-2abc-x")

    def logs(*args: str) -> list[str]:
        return kubectl(sim, "logs", "-n", "logs-read", "web-2abc-x", *args).stdout.splitlines()

    out = logs()
    assert 38 <= len(out) <= 42 and out[1] == 'level=info msg="listening on :8080"'
    tail = logs("--tail=3")
    recent = logs("--since=5s")
    stamped = logs("--tail=1", "--timestamps")
    after = logs()  # the pod writes a line a second: each read ends somewhere between `out` and `after`
    assert after[: len(out)] == out

    def ends_between(lines: list[str]) -> bool:
        return any(after[end - len(lines) : end] == lines for end in range(len(out), len(after) + 1))

    assert len(tail) == 3 and ends_between(tail)
    assert 4 <= len(recent) <= 6 and ends_between(recent)
    stamp, _, text = stamped[0].partition(" ")
    assert stamp.endswith("000Z") and datetime.fromisoformat(stamp[:26] + "+00:00") <= datetime.now(UTC)
    assert ends_between([text])


def test_a_canary_of_a_failing_scenario_logs_errors(sim: KubesimHandle) -> None:
    sim.call(sim.store.log_error_rates.__setitem__, ("logs-errors", "web"), 0.3)
    running_pod(sim, "logs-errors", "web-2abc-canary")
    running_pod(sim, "logs-errors", "web-1abc-stable", revision="1")
    canary = kubectl(sim, "logs", "-n", "logs-errors", "web-2abc-canary").stdout
    stable = kubectl(sim, "logs", "-n", "logs-errors", "web-1abc-stable").stdout
    assert canary.count("level=error") >= 3 and "500: " in canary
    assert "level=error" not in stable


def test_kubectl_logs_f_follows_until_the_pod_goes_away(sim: KubesimHandle) -> None:
    running_pod(sim, "logs-follow", "web-2abc-f", started_seconds_ago=3)
    proc = subprocess.Popen(
        [str(KUBECTL), "--kubeconfig", str(sim.kubeconfig), "logs", "-f", "-n", "logs-follow", "web-2abc-f"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = [proc.stdout.readline() for _ in range(5)]  # 3 at once, then one a second
        assert first[0].startswith('level=info msg="starting app"') and all(
            line.endswith("\n") for line in first
        )
        sim.call(sim.store.delete, "pods", "logs-follow", "web-2abc-f")
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_api_answers_like_kubernetes_when_the_request_cannot_be_served(sim: KubesimHandle) -> None:
    from kubernetes.client.exceptions import ApiException

    running_pod(sim, "logs-errs", "two", containers=("app", "proxy"))
    running_pod(sim, "logs-errs", "waits", waiting="ContainerCreating")
    api = core_api(sim)

    def refused(name: str, **kwargs: Any) -> tuple[int, str]:
        with pytest.raises(ApiException) as caught:
            api.read_namespaced_pod_log(name, "logs-errs", **kwargs)
        return caught.value.status, json.loads(caught.value.body)["message"]

    assert refused("nope") == (404, 'pods "nope" not found')
    assert refused("two") == (
        400,
        "a container name must be specified for pod two, choose one of: [app proxy]",
    )
    assert refused("two", container="db") == (400, "container db is not valid for pod two")
    assert refused("waits") == (400, 'container "app" in pod "waits" is waiting to start: ContainerCreating')
    assert refused("two", container="app", tail_lines=-1) == (
        422,
        'PodLogOptions "two" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0',
    )
    assert api.read_namespaced_pod_log("two", "logs-errs", container="proxy").startswith(
        'level=info msg="starting proxy"'
    )
    started = time.monotonic()
    assert api.read_namespaced_pod_log("two", "logs-errs", container="app", since_seconds=3).count("\n") <= 4
    assert time.monotonic() - started < 5
