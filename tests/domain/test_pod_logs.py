"""Which pods a rollout page offers logs of, and how a logs request is checked."""

from __future__ import annotations

import pytest

from dashboard.domain.pod_logs import LogRequestError, is_error_line, log_request, log_targets


def _pod(name: str, *containers: str) -> dict[str, object]:
    return {"name": name, "status": "Running", "ready": "1/1", "containers": list(containers or ("app",))}


VIEW = {
    "revisions": [
        {"replicaSets": [{"name": "web-2", "role": "canary", "pods": [_pod("web-2-a", "app", "proxy")]}]},
        {"replicaSets": [{"name": "web-1", "role": "stable", "pods": [_pod("web-1-a"), _pod("web-1-b")]}]},
        {"replicaSets": [{"name": "web-0", "role": "old", "pods": [_pod("web-0-a")]}]},
    ]
}


def test_the_canary_and_stable_pods_are_offered_by_role() -> None:
    targets = log_targets(VIEW)
    assert list(targets) == ["canary", "stable"]
    assert [p["name"] for p in targets["stable"]] == ["web-1-a", "web-1-b"]
    assert targets["canary"][0]["containers"] == ["app", "proxy"]


def test_a_request_for_a_pod_the_rollout_does_not_offer_names_the_pod() -> None:
    with pytest.raises(LogRequestError) as caught:
        log_request(VIEW, {"pod": "web-0-a"})
    assert caught.value.field == "pod"
    with pytest.raises(LogRequestError) as caught:
        log_request(VIEW, {"pod": "kube-apiserver"})
    assert caught.value.field == "pod"


def test_a_request_is_bounded_and_defaults_to_the_first_container() -> None:
    request = log_request(VIEW, {"pod": "web-2-a", "sinceSeconds": "300"})
    assert (request.role, request.container, request.since_seconds, request.tail_lines) == (
        "canary",
        "app",
        300,
        200,
    )
    for field, value in (("container", "db"), ("tailLines", 5000), ("sinceSeconds", 0), ("tailLines", "x")):
        with pytest.raises(LogRequestError) as caught:
            log_request(VIEW, {"pod": "web-2-a", field: value})
        assert caught.value.field == field


def test_error_lines_are_told_apart_in_common_formats() -> None:
    assert is_error_line('level=error msg="GET / 500"')
    assert is_error_line('{"level":"error","msg":"x"}')
    assert is_error_line("E1201 10:00:00.000 1 main.go:1] boom")
    assert not is_error_line('level=info msg="GET /errors 200"')
