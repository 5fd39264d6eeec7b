"""Pod STATUS / READY / RESTARTS as kubectl prints them."""

from __future__ import annotations

from typing import Any

from dashboard.domain.pods import pod_status
from dashboard.domain.status_icons import pod_icon


def _pod(
    status: dict[str, Any], containers: int = 1, init: list[dict[str, Any]] | None = None, **meta: Any
) -> Any:
    return {
        "metadata": {"name": "p", **meta},
        "spec": {"containers": [{"name": f"c{i}"} for i in range(containers)], "initContainers": init or []},
        "status": status,
    }


def test_a_running_ready_pod() -> None:
    running = {
        "phase": "Running",
        "containerStatuses": [{"ready": True, "state": {"running": {}}, "restartCount": 2}],
    }

    assert pod_status(_pod(running)) == ("Running", "1/1", 2)


def test_a_waiting_reason_wins_over_the_phase() -> None:
    pulling = {
        "phase": "Pending",
        "containerStatuses": [{"state": {"waiting": {"reason": "ImagePullBackOff"}}}],
    }

    assert pod_status(_pod(pulling)) == ("ImagePullBackOff", "0/1", 0)


def test_terminated_without_reason_shows_signal_or_exit_code() -> None:
    signal = {
        "phase": "Failed",
        "containerStatuses": [{"state": {"terminated": {"signal": 9, "exitCode": 137}}}],
    }
    code = {"phase": "Failed", "containerStatuses": [{"state": {"terminated": {"exitCode": 3}}}]}

    assert pod_status(_pod(signal))[0] == "Signal:9"
    assert pod_status(_pod(code))[0] == "ExitCode:3"


def test_completed_with_a_running_container_reads_running() -> None:
    status = {
        "phase": "Running",
        "containerStatuses": [
            {"ready": True, "state": {"running": {}}},
            {"state": {"terminated": {"reason": "Completed", "exitCode": 0}}},
        ],
    }

    assert pod_status(_pod(status, containers=2)) == ("Running", "1/2", 0)


def test_init_containers_report_progress_and_failures() -> None:
    init_specs = [{"name": "a"}, {"name": "b"}]
    waiting = {
        "phase": "Pending",
        "initContainerStatuses": [{"name": "a", "state": {"waiting": {"reason": "PodInitializing"}}}],
    }
    failed = {
        "phase": "Pending",
        "initContainerStatuses": [
            {"name": "a", "state": {"terminated": {"reason": "Error", "exitCode": 1}}, "restartCount": 3}
        ],
    }
    crash = {
        "phase": "Pending",
        "initContainerStatuses": [{"name": "a", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
    }

    assert pod_status(_pod(waiting, init=init_specs)) == ("Init:0/2", "0/1", 0)
    assert pod_status(_pod(failed, init=init_specs)) == ("Init:Error", "0/1", 3)
    assert pod_status(_pod(crash, init=init_specs))[0] == "Init:CrashLoopBackOff"


def test_a_ready_sidecar_does_not_hold_initialisation() -> None:
    init_specs = [{"name": "proxy", "restartPolicy": "Always"}]
    status = {
        "phase": "Running",
        "initContainerStatuses": [
            {"name": "proxy", "started": True, "ready": True, "state": {"running": {}}}
        ],
        "containerStatuses": [{"ready": True, "state": {"running": {}}}],
    }

    assert pod_status(_pod(status, init=init_specs)) == ("Running", "1/1", 0)


def test_deletion_reads_terminating_or_unknown_when_the_node_is_lost() -> None:
    running = {"phase": "Running"}
    lost = {"phase": "Running", "reason": "NodeLost"}

    assert pod_status(_pod(running, deletionTimestamp="2026-01-01T00:00:00Z"))[0] == "Terminating"
    assert pod_status(_pod(lost, deletionTimestamp="2026-01-01T00:00:00Z"))[0] == "Unknown"


def test_pod_icons() -> None:
    assert [
        pod_icon(s) for s in ("Init:0/1", "ExitCode:1", "CreateContainerConfigError", "ErrImagePull")
    ] == [
        "◌",
        "✖",
        "⚠",
        "⚠",
    ]
    assert [pod_icon(s) for s in ("Running", "CrashLoopBackOff", "ImagePullBackOff", "Unknown", "Weird")] == [
        "✔",
        "✖",
        "⚠",
        "?",
        " ",
    ]
