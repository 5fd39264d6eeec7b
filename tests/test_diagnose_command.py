"""``manage.py diagnose`` on dumps and on recordings (generated from kubesim runs), in json and text."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from dashboard.domain.rollout_view import rollout_views
from kubesim.controller import actions
from tests.domain.findings.kubesim_runs import run

DATA = Path(__file__).resolve().parent / "data" / "diagnose"


def diagnose(*args: str) -> str:
    out = StringIO()
    call_command("diagnose", *args, stdout=out)
    return out.getvalue()


def test_a_dump_of_the_sev1_shows_the_race_the_orphan_and_the_stuck_step() -> None:
    findings = json.loads(diagnose(str(DATA / "sev1-dump.yaml"), "--format", "json"))
    by_code = {f["code"]: f for f in findings}
    assert {
        "rerender-race",
        "orphaned-canary-replicaset",
        "stuck-at-step-zero",
        "config-only-revision",
    } == set(by_code)
    race = by_code["rerender-race"]
    assert race["evidence"]["inferred"] is True and race["action"] == "unwedge"
    assert "kubectl -n shop scale rs checkout-5f6b8c9d74 --replicas=0" in race["runbook"]
    assert by_code["stuck-at-step-zero"]["since"] == "2026-11-29T10:07:40Z"  # 10:02:40 + 300 s
    assert "clearedAt" not in race  # a dump has no history: the Finding JSON exactly


def test_the_text_format_lists_each_rollout_with_evidence_and_runbook() -> None:
    text = diagnose(str(DATA / "sev1-dump.yaml"), "--cluster", "prod")
    assert text.startswith("prod/shop/checkout: 4 findings\n")
    assert "✖ CRITICAL  rerender-race" in text and "Action offered: unwedge" in text
    assert "      $ kubectl -n shop scale rs checkout-5f6b8c9d74 --replicas=0" in text


def test_a_dump_judged_right_after_the_rerender_is_not_stuck_yet() -> None:
    codes = {f["code"] for f in json.loads(diagnose(str(DATA / "sev1-dump.yaml"), "--format", "json",
                                                      "--now", "2026-11-29T10:04:00Z"))}  # fmt: skip
    assert "stuck-at-step-zero" not in codes and "rerender-race" in codes


def test_a_recording_of_the_sev1_shows_each_finding_raised_and_cleared(tmp_path: Path) -> None:
    result = run(str(DATA / "sev1-scenario.yaml"), 400)
    orphan = next(f for f in result.findings("shop", "checkout") if f.code == "orphaned-canary-replicaset")
    result.store.patch(
        "apps/replicasets", "shop", orphan.subject, {"spec": {"replicas": 0}}, manager="kubectl"
    )
    actions.abort(result.store, "shop", "checkout")
    result.sim.advance(100)
    recording = result.write_recording(tmp_path / "sev1.jsonl")

    findings = json.loads(diagnose(str(recording), "--format", "json"))
    by_code = {f["code"]: f for f in findings}
    for code in ("rerender-race", "stuck-at-step-zero", "orphaned-canary-replicaset"):
        assert by_code[code]["clearedAt"] is not None, code
    assert by_code["rerender-race"]["evidence"]["inferred"] is False
    assert by_code["rerender-race"]["cluster"] == "kubesim"
    text = diagnose(str(recording))
    assert "Timeline:" in text and "raised   kubesim/shop/checkout  rerender-race" in text
    assert "cleared  kubesim/shop/checkout  orphaned-canary-replicaset" in text


def test_a_recording_of_a_weight_fight_names_the_writers(tmp_path: Path) -> None:
    recording = run("weight-fight", 90).write_recording(tmp_path / "fight.jsonl")
    (finding,) = [
        f for f in json.loads(diagnose(str(recording), "--format", "json")) if f["code"] == "weight-fight"
    ]
    assert set(finding["evidence"]["writers"]) == {"argocd-controller", "rollouts-controller"}
    assert finding["clearedAt"] is None


def test_a_recording_of_the_istio_weight_fight_names_both_writers_and_the_virtual_service(
    tmp_path: Path,
) -> None:
    recording = run("istio-weight-fight", 90).write_recording(tmp_path / "istio-fight.jsonl")
    found = json.loads(diagnose(str(recording), "--format", "json"))
    (finding,) = [f for f in found if f["code"] == "weight-fight"]
    assert finding["rollout"] == "reviews"
    assert set(finding["evidence"]["writers"]) == {"argocd-controller", "rollouts-controller"}
    router = {"kind": "VirtualService", "namespace": "bookinfo", "name": "reviews"}
    assert finding["evidence"]["router"] == router
    assert "ignoreDifferences" in finding["explanation"] and finding["action"] is None


ROUTER_CODES = {"router-weight-drift", "weight-fight"}


@pytest.mark.parametrize(
    ("scenario", "seconds", "rollout", "router", "codes"),
    [
        ("nginx-canary", 120, "storefront", ("Ingress", "storefront-storefront-canary", 50), set()),
        ("gateway-api-canary", 300, "payments", ("HTTPRoute", "payments", 0), set()),
        ("smi-canary", 300, "ledger", ("TrafficSplit", "ledger", 0), {"analysis-failed"}),
        ("istio-header-route", 120, "ratings", ("VirtualService", "ratings", 10), set()),
    ],
)
def test_a_router_that_follows_its_rollout_raises_no_router_finding(
    tmp_path: Path, scenario: str, seconds: float, rollout: str, router: tuple[str, str, int], codes: set[str]
) -> None:
    result = run(scenario, seconds)
    (view,) = [v.to_dict() for v in rollout_views(result.dump(), now=result.now()) if v.name == rollout]
    assert (view["router"]["kind"], view["router"]["name"], view["router"]["canaryWeight"]) == router
    recording = result.write_recording(tmp_path / f"{scenario}.jsonl")
    assert {f["code"] for f in json.loads(diagnose(str(recording), "--format", "json"))} == codes


def test_a_recording_of_traffic_ahead_of_capacity_reads_the_weight_from_the_canary_ingress(
    tmp_path: Path,
) -> None:
    recording = run("traffic-ahead-of-capacity", 120).write_recording(tmp_path / "capacity.jsonl")
    found = json.loads(diagnose(str(recording), "--format", "json"))
    (finding,) = [f for f in found if f["code"] == "traffic-ahead-of-capacity"]
    assert (finding["evidence"]["weight"], finding["evidence"]["available"]) == (60, 1)
    assert finding["evidence"]["weightSource"] == "Ingress quotes-quotes-canary"


def test_a_recording_of_hpa_workload_ref_conflict_names_the_hpa_on_the_deployment(tmp_path: Path) -> None:
    recording = run("hpa-workload-ref-conflict", 120).write_recording(tmp_path / "hpa-ref.jsonl")
    found = json.loads(diagnose(str(recording), "--format", "json"))
    (finding,) = [f for f in found if f["code"] == "autoscaler-targets-workload-ref"]
    assert finding["evidence"]["scaleTargetRef"]["kind"] == "Deployment"
    assert finding["action"] is None and finding["actionParams"] is None


def test_a_recording_of_hpa_sync_conflict_names_both_writers(tmp_path: Path) -> None:
    recording = run("hpa-sync-conflict", 240).write_recording(tmp_path / "hpa-sync.jsonl")
    found = json.loads(diagnose(str(recording), "--format", "json"))
    (finding,) = [f for f in found if f["code"] == "autoscaler-sync-conflict"]
    assert {"argocd-controller", "kube-controller-manager"} <= set(finding["evidence"]["writers"])
    assert "RespectIgnoreDifferences=true" in finding["evidence"]["ownershipFix"]


def test_a_recording_of_hpa_at_max_during_analysis_names_the_hpa_and_the_run(tmp_path: Path) -> None:
    recording = run("hpa-at-max-during-analysis", 90).write_recording(tmp_path / "hpa-max.jsonl")
    found = json.loads(diagnose(str(recording), "--format", "json"))
    (finding,) = [f for f in found if f["code"] == "autoscaler-at-max-during-analysis"]
    assert (finding["rollout"], finding["evidence"]["maxReplicas"]) == ("orders", 4)
    assert finding["evidence"]["analysisRun"].startswith("orders-") and finding["clearedAt"] is None


def test_a_recording_of_the_alb_canary_reads_the_forward_action_and_raises_no_router_finding(
    tmp_path: Path,
) -> None:
    result = run("alb-canary", 90)
    (view,) = [v for v in rollout_views(result.dump(), now=result.now()) if v.name == "catalog-api"]
    router = view.to_dict()["router"]
    assert (router["name"], router["canaryWeight"], router["stableWeight"]) == ("catalog-api-ingress", 50, 50)
    recording = result.write_recording(tmp_path / "alb.jsonl")
    codes = {f["code"] for f in json.loads(diagnose(str(recording), "--format", "json"))}
    assert not codes & ROUTER_CODES


def test_a_healthy_recording_has_nothing_above_info(tmp_path: Path) -> None:
    recording = run("healthy-canary", 400).write_recording(tmp_path / "healthy.jsonl")
    assert json.loads(diagnose(str(recording), "--format", "json")) == []


def test_bad_input_is_named_on_stderr_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        '{"at": "2026-11-29T10:00:00Z", "cluster": "prod", "type": "ADDED", "object": {}}\nnot json\n'
    )
    err = StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("diagnose", str(broken), str(tmp_path / "missing.yaml"), stdout=StringIO(), stderr=err)
    assert exit_info.value.code == 1
    assert f"{broken}:2: not JSON" in err.getvalue()
    assert "missing.yaml: no such file or directory" in err.getvalue()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--now", "yesterday"], "--now: 'yesterday' is not an RFC 3339 time"),
        (["--pipeline", "abc"], "SHA=STATE"),
    ],
)
def test_bad_options_get_a_clear_error(args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("diagnose", str(DATA / "sev1-dump.yaml"), *args, stdout=StringIO())


def test_a_pipeline_state_given_on_the_command_line_is_used() -> None:
    text = diagnose(str(DATA / "sev1-dump.yaml"), "--pipeline", "abcdef1=failed")
    assert "pipeline-red-rollout-healthy" not in text  # the rollout is not healthy: nothing to say


def _run_diagnose(*args: str) -> tuple[str, str, int]:
    out, err = StringIO(), StringIO()
    code = 0
    try:
        call_command("diagnose", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return out.getvalue(), err.getvalue(), code


@pytest.mark.parametrize(
    ("name", "data", "cause"),
    [
        ("binary.yaml", b"\x00\x01\x02garbage\xff", "binary data"),
        ("truncated.json", b'{"kind": "Rollout", "metadata": {', "invalid JSON"),
        ("deep.json", b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "levels deep"),
        ("empty.yaml", b"", "empty"),
        ("deep.jsonl", b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n", "nested too deeply"),
    ],
)
def test_unreadable_input_is_one_line_naming_the_file_and_exits_1(
    tmp_path: Path, name: str, data: bytes, cause: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    out, err, code = _run_diagnose(str(path))
    assert code == 1
    assert out == ""  # not "No Rollouts found." as well: the error is the one line
    assert err.strip().count("\n") == 0, err
    assert err.startswith(f"error: {path}") and cause in err, err
