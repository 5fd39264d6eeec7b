"""kubectl against the routing and autoscaling kinds kubesim serves: discovery, explain, apply validation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesim.testing import KubesimHandle
from tests.kubesim.kubectl_helpers import kubectl, kubesim_for_kubectl


@pytest.fixture(scope="module")
def sim() -> Iterator[KubesimHandle]:
    yield from kubesim_for_kubectl()



def test_api_resources_list_the_routing_and_autoscaling_kinds(sim: KubesimHandle) -> None:
    out = kubectl(sim, "api-resources", "-o", "name").stdout.split()
    for name in (
        "virtualservices.networking.istio.io",
        "destinationrules.networking.istio.io",
        "ingresses.networking.k8s.io",
        "httproutes.gateway.networking.k8s.io",
        "horizontalpodautoscalers.autoscaling",
    ):
        assert name in out


def test_explain_reads_the_upstream_schemas(sim: KubesimHandle) -> None:
    weight = kubectl(sim, "explain", "virtualservice.spec.http.route.weight").stdout
    assert "weight" in weight and "integer" in weight
    backend = kubectl(sim, "explain", "httproute.spec.rules.backendRefs.weight").stdout
    assert "integer" in backend
    assert "maxReplicas" in kubectl(sim, "explain", "hpa.spec").stdout
    assert "ingressClassName" in kubectl(sim, "explain", "ingress.spec").stdout


def test_apply_refuses_a_virtual_service_weight_of_the_wrong_type(sim: KubesimHandle, tmp_path: Path) -> None:
    kubectl(sim, "create", "namespace", "mesh")
    manifest = tmp_path / "vs.yaml"
    manifest.write_text(
        "apiVersion: networking.istio.io/v1beta1\nkind: VirtualService\n"
        "metadata: {name: web, namespace: mesh}\n"
        "spec:\n  hosts: [web]\n  http:\n  - name: primary\n    route:\n"
        "    - destination: {host: web-stable}\n      weight: lots\n"
    )
    refused = kubectl(sim, "apply", "--validate=false", "-f", str(manifest), check=False)
    assert refused.returncode != 0 and "weight" in refused.stderr
    manifest.write_text(manifest.read_text().replace("weight: lots", "weight: 100"))
    kubectl(sim, "apply", "--server-side", "-f", str(manifest))
    assert kubectl(sim, "get", "vs", "-n", "mesh", "-o", "name").stdout.strip() == (
        "virtualservice.networking.istio.io/web"
    )
