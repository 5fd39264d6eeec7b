"""`manage.py analysis-dryrun` against a real Prometheus scraping kubesim's stable pods: the verdict now for a
good template, a broken one (a PromQL typo: Error), one matching nothing, and one that could never fail."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command

from kubesim.prometheus import PrometheusUnavailable, attached_prometheus
from kubesim.scenarios.builtin import CANARY_ERROR_RATE_QUERY
from kubesim.testing import running_kubesim

pytestmark = [pytest.mark.prometheus, pytest.mark.slow]


@pytest.fixture(scope="module")
def prometheus() -> Iterator[tuple[str, str]]:
    """A Prometheus with data for prom-healthy/storefront; yields (url, stable hash)."""
    with running_kubesim(["prometheus-healthy"]) as handle:
        try:
            with attached_prometheus(handle) as prom:
                prom.process.wait_for_data('http_requests_total{rollout="storefront"}')
                ro = handle.call(
                    lambda: handle.store.get("argoproj.io/rollouts", "prom-healthy", "storefront")
                )
                yield prom.url, ro["status"]["stableRS"]
        except PrometheusUnavailable as error:
            pytest.fail(f"this test needs a real Prometheus: {error}", pytrace=False)


def _template(tmp_path: Path, query: str, success: str) -> Path:
    doc = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AnalysisTemplate",
        "metadata": {"name": "gate", "namespace": "prom-healthy"},
        "spec": {
            "args": [
                {"name": "namespace"},
                {"name": "rollout"},
                {"name": "canary-hash", "valueFrom": {"podTemplateHashValue": "Latest"}},
            ],
            "metrics": [
                {
                    "name": "error-rate",
                    "interval": "30s",
                    "successCondition": success,
                    "provider": {"prometheus": {"address": "http://prometheus:9090", "query": query}},
                }
            ],
        },
    }
    path = tmp_path / "template.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _dryrun(path: Path, prometheus: tuple[str, str]) -> tuple[int, dict[str, Any]]:
    url, stable = prometheus
    out = io.StringIO()
    code = 0
    try:
        call_command(
            "analysis-dryrun",
            str(path),
            "--prometheus",
            url,
            "--stable-hash",
            stable,
            "--arg",
            "namespace=prom-healthy",
            "--arg",
            "rollout=storefront",
            "--format",
            "json",
            stdout=out,
        )
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, json.loads(out.getvalue())


def test_a_good_template_is_successful_with_the_stable_value(tmp_path: Path, prometheus: Any) -> None:
    code, doc = _dryrun(_template(tmp_path, CANARY_ERROR_RATE_QUERY, "result[0] <= 0.05"), prometheus)
    metric = doc["metrics"][0]
    assert code == 0 and doc["verdict"] == "Successful" and metric["problems"] == []
    assert abs(float(metric["value"].strip("[]")) - 0.01) < 1e-9
    assert f'rollouts_pod_template_hash="{prometheus[1]}"' in metric["query"]


def test_a_promql_typo_is_an_error_that_would_block_every_rollout(tmp_path: Path, prometheus: Any) -> None:
    broken = CANARY_ERROR_RATE_QUERY.replace("sum(rate(", "sum(rat(", 1)
    code, doc = _dryrun(_template(tmp_path, broken, "result[0] <= 0.05"), prometheus)
    metric = doc["metrics"][0]
    assert code == 1 and doc["verdict"] == "Error"
    assert metric["message"].startswith("bad_data: ") and "block every rollout" in metric["problems"][0]


def test_a_query_matching_nothing_is_named(tmp_path: Path, prometheus: Any) -> None:
    query = CANARY_ERROR_RATE_QUERY.replace('rollout="{{args.rollout}}"', 'rollout="storefrnt"')
    code, doc = _dryrun(_template(tmp_path, query, "result[0] <= 0.05"), prometheus)
    assert code == 1 and doc["verdict"] == "Error"
    assert "matches nothing" in doc["metrics"][0]["problems"][0]


def test_a_condition_that_could_never_fail_is_caught(tmp_path: Path, prometheus: Any) -> None:
    code, doc = _dryrun(
        _template(tmp_path, CANARY_ERROR_RATE_QUERY, "result[0] >= 0 || isNaN(result[0]) || true"), prometheus
    )
    assert code == 0 and doc["verdict"] == "Successful"
    assert "can never fail" in doc["metrics"][0]["problems"][-1]


def test_bad_input_gets_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no AnalysisTemplate found"):
        (tmp_path / "x.yaml").write_text("kind: Rollout\n")
        call_command("analysis-dryrun", str(tmp_path / "x.yaml"), "--prometheus", "http://127.0.0.1:9")
