"""Every built-in scenario reaches the end state its description documents, checked from the objects."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from kubesim.controller import actions
from kubesim.scenarios import ScenarioError, list_scenarios, load_scenario, load_scenarios
from tests.kubesim._simhelp import condition, replica_sets, rollout, runs, start


def test_every_builtin_scenario_documents_an_end_state() -> None:
    names = [n for n, _ in list_scenarios()]
    assert names == [
        "healthy-canary",
        "failed-analysis-abort",
        "rerender-race",
        "paused-reads-degraded",
        "orphaned-canary",
        "weight-fight",
        "blue-green",
        "progress-deadline",
        "metrics-provider-down",
        "fleet",
        "prometheus-healthy",
        "prometheus-error-spike",
        "prometheus-latency-regression",
        "prometheus-no-traffic",
        "flagger-canary",
        "flagger-failed",
        "flagger-waiting-approval",
        "alb-canary",
        "istio-header-route",
        "traffic-ahead-of-capacity",
        "smi-canary",
        "gateway-api-canary",
        "nginx-canary",
        "istio-weight-fight",
        "hpa-workload-ref-conflict",
        "hpa-sync-conflict",
        "hpa-at-max-during-analysis",
        "environments",
    ]
    for _, description in list_scenarios():
        assert "Ends" in description or "Cycles" in description


def test_healthy_canary_ends_healthy_on_revision_two_with_successful_analyses() -> None:
    sim, store, _ = start("healthy-canary")
    sim.advance(400)
    ro = rollout(store, "shop", "checkout")
    st = ro["status"]
    assert st["phase"] == "Healthy"
    assert st["stableRS"] == st["currentPodHash"]
    assert ro["metadata"]["annotations"]["rollout.argoproj.io/revision"] == "2"
    assert st["currentStepIndex"] == 6
    assert [r["status"]["phase"] for r in runs(store, "shop")] == ["Successful", "Successful"]
    assert st["canary"]["weights"]["stable"] == {
        "weight": 100,
        "serviceName": "checkout-stable",
        "podTemplateHash": st["currentPodHash"],
    }
    assert condition(ro, "Healthy")["status"] == "True"
    assert condition(ro, "Completed")["status"] == "True"


def test_healthy_canary_names_and_labels_children_the_upstream_way() -> None:
    sim, store, _ = start("healthy-canary")
    sim.advance(400)
    st = rollout(store, "shop", "checkout")["status"]
    rs = next(
        r for r in replica_sets(store, "shop") if r["metadata"]["name"] == f"checkout-{st['currentPodHash']}"
    )
    assert rs["metadata"]["labels"]["rollouts-pod-template-hash"] == st["currentPodHash"]
    assert rs["metadata"]["annotations"]["rollout.argoproj.io/revision"] == "2"
    run = runs(store, "shop")[0]
    assert run["metadata"]["name"] == f"checkout-{st['currentPodHash']}-2-2"
    assert run["metadata"]["labels"] == {
        "rollouts-pod-template-hash": st["currentPodHash"],
        "rollout-type": "Step",
        "step-index": "2",
    }
    assert run["status"]["metricResults"][0]["measurements"][0]["value"] == "[0.01]"
    pods = store.list("pods", "shop", label_selector=f"rollouts-pod-template-hash={st['currentPodHash']}")[0]
    assert len(pods) == 5 and all(p["status"]["phase"] == "Running" for p in pods)


def test_failed_analysis_abort_ends_degraded_with_abort_true() -> None:
    sim, store, _ = start("failed-analysis-abort")
    sim.advance(300)
    ro = rollout(store, "billing", "payments")
    st = ro["status"]
    assert st["phase"] == "Degraded" and st["abort"] is True and "abortedAt" in st
    assert st["message"].startswith(
        "RolloutAborted: Rollout aborted update to revision 2: "
        'Step-based analysis phase error/failed: Metric "error-rate" assessed Failed'
    )
    by_hash = {
        r["metadata"]["labels"]["rollouts-pod-template-hash"]: r for r in replica_sets(store, "billing")
    }
    assert by_hash[st["currentPodHash"]]["spec"]["replicas"] == 0
    assert by_hash[st["stableRS"]]["status"]["availableReplicas"] == 4


def test_rerender_race_changes_the_hash_and_resets_the_step() -> None:
    sim, store, _ = start("rerender-race")
    history: list[tuple[str, int]] = []
    store.subscribe(
        lambda t, res, o: (
            history.append((o["status"].get("currentPodHash", ""), o["status"].get("currentStepIndex", 0)))
            if res == "argoproj.io/rollouts" and o.get("status")
            else None
        )
    )
    sim.advance(300)
    ro = rollout(store, "web", "frontend")
    st = ro["status"]
    assert st["phase"] == "Paused" and st["message"] == "CanaryPauseStep"
    assert ro["metadata"]["annotations"]["rollout.argoproj.io/revision"] == "3"
    hashes = [h for h, _ in history]
    first_canary = next(h for h in hashes if h != hashes[0])
    # The first canary got past step 0, then the hash changed and the step went back to 0.
    assert max(i for h, i in history if h == first_canary) >= 1
    assert (st["currentPodHash"], 0) in history
    rs = {r["metadata"]["annotations"]["rollout.argoproj.io/revision"]: r for r in replica_sets(store, "web")}
    t2, t3 = rs["2"]["spec"]["template"], rs["3"]["spec"]["template"]
    assert t2["spec"] == t3["spec"]
    assert (
        t2["metadata"]["annotations"]["checksum/config"] != t3["metadata"]["annotations"]["checksum/config"]
    )
    app = store.get("argoproj.io/applications", "argocd", "frontend")
    deployed = app["status"]["history"]
    assert len(deployed) == 3 and deployed[1]["revision"] != deployed[2]["revision"]


def test_environments_runs_one_app_in_three_namespaces_each_at_its_own_release() -> None:
    sim, store, _ = start("environments")
    sim.advance(120)
    seen = {}
    for env in ("dev", "staging", "prod"):
        ro = rollout(store, f"bookstore-{env}", "bookstore")
        assert ro["metadata"]["labels"]["app.kubernetes.io/name"] == "bookstore"
        image = ro["spec"]["template"]["spec"]["containers"][0]["image"]
        seen[env] = (ro["status"]["phase"], ro["status"].get("currentStepIndex"), image.rsplit(":", 1)[1])
    assert seen == {
        "dev": ("Healthy", 2, "yellow"),
        "staging": ("Paused", 1, "green"),
        "prod": ("Healthy", 4, "blue"),
    }


def test_a_scenario_event_may_name_the_namespace_of_a_rollout_name_used_twice(tmp_path: Path) -> None:
    path = tmp_path / "twice.yaml"
    path.write_text(
        "name: twice\ndescription: Ends Healthy.\nrollouts:\n"
        + "".join(
            f"  - {{name: web, namespace: {ns}, image: 'a:1',"
            " strategy: {canary: {steps: [{setWeight: 50}]}}}\n"
            for ns in ("web-dev", "web-prod")
        )
        + "events:\n  - {at: 1, set_image: {rollout: web, namespace: web-dev, image: 'a:2'}}\n"
    )
    sim, store, _ = start(str(path))
    sim.advance(30)
    images = {
        ns: rollout(store, ns, "web")["spec"]["template"]["spec"]["containers"][0]["image"]
        for ns in ("web-dev", "web-prod")
    }
    assert images == {"web-dev": "a:2", "web-prod": "a:1"}
    path.write_text(path.read_text().replace("web-dev, image: 'a:2'", "web-qa, image: 'a:2'"))
    with pytest.raises(ScenarioError, match="no rollout 'web' in namespace 'web-qa'"):
        load_scenario(str(path))


def test_paused_reads_degraded_ends_suspended_with_a_running_sync() -> None:
    sim, store, _ = start("paused-reads-degraded")
    sim.advance(200)
    st = rollout(store, "search", "search")["status"]
    assert (st["phase"], st["message"], st["currentStepIndex"]) == ("Paused", "CanaryPauseStep", 1)
    app = store.get("argoproj.io/applications", "argocd", "search")["status"]
    assert app["health"]["status"] == "Suspended"
    assert app["operationState"]["phase"] == "Running"
    assert app["operationState"]["message"] == "waiting for healthy state of argoproj.io/Rollout/search"


def test_orphaned_canary_keeps_replicas_after_the_abort() -> None:
    sim, store, _ = start("orphaned-canary")
    sim.advance(300)
    st = rollout(store, "warehouse", "inventory")["status"]
    assert st["phase"] == "Degraded" and st["abort"] is True
    assert st["canary"]["weights"]["canary"]["weight"] == 0
    orphans = [
        r
        for r in replica_sets(store, "warehouse")
        if r["metadata"]["labels"]["rollouts-pod-template-hash"] != st["stableRS"] and r["spec"]["replicas"]
    ]
    assert [r["spec"]["replicas"] for r in orphans] == [2]


def test_weight_fight_flips_the_weight_between_two_writers() -> None:
    sim, store, _ = start("weight-fight")
    seen: list[int] = []
    writers: set[str] = set()

    def watch(_: str, resource: str, obj: dict) -> None:
        weights = (obj.get("status") or {}).get("canary", {}).get("weights")
        if resource == "argoproj.io/rollouts" and weights:
            seen.append(weights["canary"]["weight"])
            writers.update(e["manager"] for e in obj["metadata"]["managedFields"] if e.get("subresource"))

    store.subscribe(watch)
    sim.advance(120)
    flips = sum(1 for a, b in itertools.pairwise(seen) if a != b)
    assert flips >= 10 and set(seen) >= {0, 30}
    ro = rollout(store, "ml", "recommendations")
    assert ro["status"]["phase"] == "Paused"
    assert {"rollouts-controller", "argocd-controller"} <= writers


def test_istio_weight_fight_alternates_the_virtual_service_weights_between_two_writers() -> None:
    sim, store, _ = start("istio-weight-fight")
    seen: list[tuple[list[int], str]] = []

    def watch(_: str, resource: str, obj: dict) -> None:
        if resource == "networking.istio.io/virtualservices":
            route = obj["spec"]["http"][0]
            # The writer of the route is the manager whose entry owns f:route (each write takes it over).
            owner = next(
                e["manager"]
                for e in obj["metadata"]["managedFields"]
                if "f:route" in str(e.get("fieldsV1", {}))
            )
            seen.append(([d["weight"] for d in route["route"]], owner))

    store.subscribe(watch)
    sim.advance(120)
    fight = seen[1:]  # after the creation by kubectl
    assert len(fight) >= 20
    assert all(a != b for a, b in itertools.pairwise(fight))
    assert {tuple(w) for w, _ in fight} == {(80, 20), (100, 0)}
    assert {(tuple(w), m) for w, m in fight} == {
        ((80, 20), "rollouts-controller"),
        ((100, 0), "argocd-controller"),
    }
    ro = rollout(store, "bookinfo", "reviews")
    assert (ro["status"]["phase"], ro["status"]["currentStepIndex"]) == ("Paused", 1)
    assert ro["status"]["canary"]["weights"]["canary"]["weight"] == 20
    reasons = {e["reason"]: e for e in store.list("events", "bookinfo")[0]}
    updated = reasons["Updated VirtualService"]
    assert updated["message"] == "VirtualService `reviews` set to desiredWeight '20'"
    assert updated["count"] >= 20


def test_nginx_canary_moves_the_canary_ingress_weight_with_the_steps() -> None:
    sim, store, _ = start("nginx-canary")
    weights: list[str] = []

    def watch(_: str, resource: str, obj: dict) -> None:
        if resource == "networking.k8s.io/ingresses" and obj["metadata"]["name"].endswith("-canary"):
            weights.append(obj["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-weight"])

    store.subscribe(watch)
    sim.advance(90)
    assert weights == ["0", "25", "50"]
    ro = rollout(store, "edge", "storefront")
    assert (ro["status"]["phase"], ro["status"]["currentStepIndex"]) == ("Paused", 3)
    assert ro["status"]["canary"]["weights"]["canary"]["weight"] == 50
    ing = store.get("networking.k8s.io/ingresses", "edge", "storefront-storefront-canary")
    assert ing["metadata"]["annotations"] == {
        "nginx.ingress.kubernetes.io/canary": "true",
        "nginx.ingress.kubernetes.io/canary-weight": "50",
        "nginx.ingress.kubernetes.io/canary-by-header": "X-Canary",
        "nginx.ingress.kubernetes.io/canary-by-header-value": "always",
    }
    assert ing["metadata"]["ownerReferences"][0]["uid"] == ro["metadata"]["uid"]
    [rule] = ing["spec"]["rules"]
    assert rule["http"]["paths"][0]["backend"]["service"]["name"] == "storefront-canary"
    assert {e["manager"] for e in ing["metadata"]["managedFields"]} == {"rollouts-controller"}
    stable = store.get("networking.k8s.io/ingresses", "edge", "storefront")
    assert stable["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == "storefront-stable"


def test_gateway_api_canary_moves_the_http_route_backend_weights_then_ends_healthy() -> None:
    sim, store, _ = start("gateway-api-canary")
    seen: list[tuple[list[int], str | None]] = []

    def watch(_: str, resource: str, obj: dict) -> None:
        if (
            resource == "gateway.networking.k8s.io/httproutes"
            and obj["metadata"]["namespace"] == "gateway-demo"
        ):
            refs = obj["spec"]["rules"][0]["backendRefs"]
            label = (obj["metadata"].get("labels") or {}).get("rollouts.argoproj.io/gatewayapi-canary")
            seen.append(([r["weight"] for r in refs], label))

    store.subscribe(watch)
    sim.advance(120)
    assert seen == [([100, 0], None), ([70, 30], "in-progress"), ([40, 60], "in-progress"), ([100, 0], None)]
    ro = rollout(store, "gateway-demo", "payments")
    assert ro["status"]["phase"] == "Healthy"
    assert ro["metadata"]["annotations"]["rollout.argoproj.io/revision"] == "2"
    route = store.get("gateway.networking.k8s.io/httproutes", "gateway-demo", "payments")
    assert [e["manager"] for e in route["metadata"]["managedFields"]] == [
        "kubectl-client-side-apply",
        "gatewayAPI",
    ]


def test_smi_canary_splits_by_weight_then_returns_to_stable_on_abort() -> None:
    sim, store, _ = start("smi-canary")
    seen: list[list[tuple[str, int]]] = []

    def watch(_: str, resource: str, obj: dict) -> None:
        if resource == "split.smi-spec.io/trafficsplits":
            seen.append([(b["service"], b["weight"]) for b in obj["spec"]["backends"]])

    store.subscribe(watch)
    sim.advance(150)
    assert [[w for _, w in backends] for backends in seen] == [[0, 100], [10, 90], [40, 60], [0, 100]]
    assert seen[0] == [("ledger-canary", 0), ("ledger-stable", 100)]
    ro = rollout(store, "mesh-smi", "ledger")
    assert ro["status"]["phase"] == "Degraded" and ro["status"]["abort"] is True
    split = store.get("split.smi-spec.io/trafficsplits", "mesh-smi", "ledger")
    assert split["apiVersion"] == "split.smi-spec.io/v1alpha3" and split["spec"]["service"] == "ledger"
    assert split["metadata"]["ownerReferences"][0]["uid"] == ro["metadata"]["uid"]
    assert {e["manager"] for e in split["metadata"]["managedFields"]} == {"rollouts-controller"}


def test_traffic_ahead_of_capacity_sends_sixty_percent_to_one_canary_pod() -> None:
    sim, store, _ = start("traffic-ahead-of-capacity")
    sim.advance(60)
    st = rollout(store, "capacity", "quotes")["status"]
    assert (st["phase"], st["currentStepIndex"]) == ("Paused", 2)
    assert st["canary"]["weights"]["canary"]["weight"] == 60
    sizes = {
        r["metadata"]["labels"]["rollouts-pod-template-hash"]: (
            r["spec"]["replicas"],
            r["status"]["availableReplicas"],
        )
        for r in replica_sets(store, "capacity")
    }
    assert sizes == {st["currentPodHash"]: (1, 1), st["stableRS"]: (10, 10)}
    ing = store.get("networking.k8s.io/ingresses", "capacity", "quotes-quotes-canary")
    assert ing["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-weight"] == "60"


ALB_ACTION = (
    '{"Type":"forward","ForwardConfig":{"TargetGroups":['
    '{"ServiceName":"catalog-api-canary","ServicePort":"80","Weight":%d},'
    '{"ServiceName":"catalog-api-stable","ServicePort":"80","Weight":%d}]}}'
)


def test_alb_canary_writes_the_forward_action_annotation_with_the_step_weights() -> None:
    sim, store, _ = start("alb-canary")
    key = "alb.ingress.kubernetes.io/actions.catalog-api-root"
    actions: list[str] = []

    def watch(_: str, resource: str, obj: dict) -> None:
        if resource == "networking.k8s.io/ingresses" and key in obj["metadata"].get("annotations", {}):
            actions.append(obj["metadata"]["annotations"][key])

    store.subscribe(watch)
    sim.advance(90)
    assert actions == [ALB_ACTION % (0, 100), ALB_ACTION % (20, 80), ALB_ACTION % (50, 50)]
    st = rollout(store, "aws-edge", "catalog-api")["status"]
    assert (st["phase"], st["currentStepIndex"]) == ("Paused", 3)
    ing = store.get("networking.k8s.io/ingresses", "aws-edge", "catalog-api-ingress")
    annotations = ing["metadata"]["annotations"]
    assert annotations["rollouts.argoproj.io/managed-alb-annotations"] == f'{{"catalog-api":["{key}"]}}'
    assert annotations["alb.ingress.kubernetes.io/scheme"] == "internet-facing"  # others' are kept
    mine = next(e for e in ing["metadata"]["managedFields"] if e["manager"] == "rollouts-controller")
    assert set(mine["fieldsV1"]) == {"f:metadata"}  # the router patches annotations only
    reasons = [e["reason"] for e in store.list("events", "aws-edge")[0]]
    assert reasons.count("PatchingALBIngress") == 3


def test_hpa_at_max_during_analysis_pins_the_hpa_while_the_background_run_measures() -> None:
    sim, store, _ = start("hpa-at-max-during-analysis")
    sim.advance(120)
    ro = rollout(store, "autoscale-max", "orders")
    assert (ro["status"]["phase"], ro["status"]["currentStepIndex"], ro["spec"]["replicas"]) == (
        "Paused",
        1,
        4,
    )
    [run] = runs(store, "autoscale-max")
    assert run["status"]["phase"] == "Running"
    assert ro["status"]["canary"]["currentBackgroundAnalysisRunStatus"]["name"] == run["metadata"]["name"]
    hpa = store.get("autoscaling/horizontalpodautoscalers", "autoscale-max", "orders")
    assert (hpa["status"]["desiredReplicas"], hpa["spec"]["maxReplicas"]) == (4, 4)
    limited = next(c for c in hpa["status"]["conditions"] if c["type"] == "ScalingLimited")
    assert (limited["status"], limited["reason"]) == ("True", "TooManyReplicas")


def test_an_hpa_on_the_workload_ref_deployment_is_disabled_once_the_rollout_takes_over() -> None:
    sim, store, _ = start("hpa-workload-ref-conflict")
    sim.advance(120)
    ro = rollout(store, "autoscale-ref", "api")
    assert (ro["status"]["phase"], ro["spec"]["replicas"]) == ("Healthy", 3)
    assert (
        "template" not in ro["spec"] and ro["status"]["workloadObservedGeneration"] == "2"
    )  # scaled to 0: a spec change
    [rs] = replica_sets(store, "autoscale-ref")
    assert rs["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m"
    deployment = store.get("apps/deployments", "autoscale-ref", "api")
    assert deployment["spec"]["replicas"] == 0
    assert deployment["metadata"]["managedFields"][-1]["manager"] == "rollouts-controller"
    hpa = store.get("autoscaling/horizontalpodautoscalers", "autoscale-ref", "api")
    assert hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment"
    assert hpa["status"]["desiredReplicas"] == 0
    active = next(c for c in hpa["status"]["conditions"] if c["type"] == "ScalingActive")
    assert (active["status"], active["reason"]) == ("False", "ScalingDisabled")


def test_an_hpa_and_argo_cd_self_heal_take_turns_writing_the_rollout_replicas() -> None:
    sim, store, _ = start("hpa-sync-conflict")
    writes: list[tuple[int, str, str | None]] = []

    def watch(_: str, resource: str, obj: dict) -> None:
        if resource == "argoproj.io/rollouts":
            owner = next(
                e
                for e in obj["metadata"]["managedFields"]
                if "f:replicas" in str(e["fieldsV1"].get("f:spec", {}))
            )
            writes.append((obj["spec"]["replicas"], owner["manager"], owner.get("subresource")))

    store.subscribe(watch)
    sim.advance(120)
    changes = [w for w, v in itertools.pairwise(writes) if w[0] != v[0]] + [writes[-1]]
    assert {(r, m, sub) for r, m, sub in writes} >= {
        (8, "kube-controller-manager", "scale"),
        (4, "argocd-controller", None),
    }
    assert len(changes) >= 12  # 8 -> 4 -> 8 ... every 15 s sync period
    assert rollout(store, "autoscale-sync", "cart")["status"]["phase"] == "Healthy"
    hpa = store.get("autoscaling/horizontalpodautoscalers", "autoscale-sync", "cart")
    assert hpa["status"]["desiredReplicas"] == 8
    rescale = [e for e in store.list("events", "autoscale-sync")[0] if e["reason"] == "SuccessfulRescale"]
    assert rescale[0]["count"] >= 6 and rescale[0]["source"]["component"] == "horizontal-pod-autoscaler"


def test_istio_header_route_adds_ordered_managed_routes_then_removes_them_on_promotion() -> None:
    sim, store, _ = start("istio-header-route")
    sim.advance(60)
    st = rollout(store, "mesh-istio", "ratings")["status"]
    assert (st["phase"], st["currentStepIndex"]) == ("Paused", 3)
    vs = store.get("networking.istio.io/virtualservices", "mesh-istio", "ratings")
    mirror, header, primary = vs["spec"]["http"]
    assert [r["name"] for r in (mirror, header, primary)] == ["mirror-gets", "canary-header", "primary"]
    assert header["match"] == [{"headers": {"X-Canary": {"exact": "true"}}}]
    assert header["route"] == [
        {"destination": {"host": "ratings", "subset": "canary", "port": {"number": 80}}, "weight": 100}
    ]
    assert mirror["mirror"] == {"host": "ratings", "subset": "canary", "port": {"number": 80}}
    assert mirror["mirrorPercentage"] == {"value": 25.0} and mirror["match"] == [{"method": {"exact": "GET"}}]
    assert [d["weight"] for d in mirror["route"]] == [d["weight"] for d in primary["route"]] == [90, 10]
    subsets = store.get("networking.istio.io/destinationrules", "mesh-istio", "ratings")["spec"]["subsets"]
    hashes = {s["name"]: s["labels"]["rollouts-pod-template-hash"] for s in subsets}
    assert hashes == {"canary": st["currentPodHash"], "stable": st["stableRS"]}
    actions.promote(store, "mesh-istio", "ratings", full=True)
    sim.advance(60)
    st = rollout(store, "mesh-istio", "ratings")["status"]
    assert st["phase"] == "Healthy"
    vs = store.get("networking.istio.io/virtualservices", "mesh-istio", "ratings")
    assert [r["name"] for r in vs["spec"]["http"]] == ["primary"]
    assert [d["weight"] for d in vs["spec"]["http"][0]["route"]] == [100, 0]


def test_blue_green_pauses_with_preview_then_promotes_to_healthy() -> None:
    sim, store, _ = start("blue-green")
    sim.advance(100)
    st = rollout(store, "identity", "accounts")["status"]
    assert (st["phase"], st["message"]) == ("Paused", "BlueGreenPause")
    assert st["blueGreen"]["previewSelector"] == st["currentPodHash"] != st["blueGreen"]["activeSelector"]
    assert st["blueGreen"]["prePromotionAnalysisRunStatus"]["status"] == "Successful"
    sim.advance(200)
    st = rollout(store, "identity", "accounts")["status"]
    assert st["phase"] == "Healthy"
    assert st["blueGreen"]["activeSelector"] == st["stableRS"] == st["currentPodHash"]
    old = [
        r
        for r in replica_sets(store, "identity")
        if r["metadata"]["labels"]["rollouts-pod-template-hash"] != st["stableRS"]
    ]
    assert [r["spec"]["replicas"] for r in old] == [0]
    svc = store.get("services", "identity", "accounts")
    assert svc["spec"]["selector"]["rollouts-pod-template-hash"] == st["stableRS"]


def test_blue_green_old_replica_set_carries_a_scale_down_deadline_first() -> None:
    sim, store, _ = start("blue-green")
    sim.advance(125)
    st = rollout(store, "identity", "accounts")["status"]
    old = next(
        r
        for r in replica_sets(store, "identity")
        if r["metadata"]["labels"]["rollouts-pod-template-hash"] != st["currentPodHash"]
    )
    assert old["spec"]["replicas"] == 3 and "scale-down-deadline" in old["metadata"]["annotations"]


def test_progress_deadline_ends_degraded_with_progress_deadline_exceeded() -> None:
    sim, store, _ = start("progress-deadline")
    sim.advance(200)
    ro = rollout(store, "fulfilment", "orders")
    cond = condition(ro, "Progressing")
    assert cond["reason"] == "ProgressDeadlineExceeded" and cond["status"] == "False"
    assert ro["status"]["phase"] == "Degraded"
    assert ro["status"]["message"] == (
        f'ProgressDeadlineExceeded: ReplicaSet "orders-'
        f'{ro["status"]["currentPodHash"]}" has timed out progressing.'
    )
    pod = store.list(
        "pods", "fulfilment", label_selector=f"rollouts-pod-template-hash={ro['status']['currentPodHash']}"
    )
    assert pod[0][0]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ImagePullBackOff"


def test_metrics_provider_down_ends_with_an_errored_analysis_run() -> None:
    sim, store, _ = start("metrics-provider-down")
    sim.advance(200)
    (run,) = runs(store, "catalog")
    assert run["status"]["phase"] == "Error"
    result = run["status"]["metricResults"][0]
    assert result["error"] == 5 and result["consecutiveError"] == 5
    assert "no such host" in result["measurements"][-1]["message"]
    assert rollout(store, "catalog", "catalog")["status"]["phase"] == "Degraded"


def test_fleet_creates_rollouts_in_namespaces_and_keeps_churning() -> None:
    sim, store, _ = start("fleet")
    sim.advance(60)
    items, _ = store.list("argoproj.io/rollouts")
    assert len(items) == 100
    assert {r["metadata"]["namespace"] for r in items} == {f"fleet-{i:02d}" for i in range(5)}
    revisions = [int(r["metadata"]["annotations"]["rollout.argoproj.io/revision"]) for r in items]
    assert sum(revisions) > 100  # churn made new revisions
    assert sum(1 for r in items if r["status"]["phase"] == "Healthy") > 50


def test_the_same_seed_gives_the_same_objects() -> None:
    def snapshot() -> list[str]:
        sim, store, _ = start("failed-analysis-abort", seed=7)
        sim.advance(120)
        return sorted(p["metadata"]["name"] for p in store.list("pods")[0])

    assert snapshot() == snapshot()


def test_a_scenario_file_in_the_documented_format_loads(tmp_path: Path) -> None:
    example = (
        Path(__file__).resolve().parents[2]
        / "kubesim"
        / "scenarios"
        / "examples"
        / "canary-with-analysis.yaml"
    )
    scenario = load_scenario(str(example))
    assert scenario.rollouts[0].name == "demo"
    sim, store, _ = start(str(example))
    sim.advance(600)
    assert rollout(store, "demo", "demo")["status"]["phase"] == "Healthy"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\n", "missing required key(s) description"),
        ("name: Bad_Name\ndescription: d\n", "name: expected a lowercase DNS-1123 name"),
        (
            "name: x\ndescription: d\n"
            "rollouts: [{name: a, image: i, strategy: {canary: {}}, replicas: -1}]\n",
            "rollouts[0].replicas: expected an integer >= 0",
        ),
        (
            "name: x\ndescription: d\n"
            "rollouts: [{name: a, image: i, strategy: {canary: {steps: [{setWeight: 140}]}}}]\n",
            "rollouts[0].strategy.canary.steps[0].setWeight: expected 0..100",
        ),
        (
            "name: x\ndescription: d\nevents: [{at: 1, action: {rollout: nope, name: promote}}]\n",
            "events[0].action.rollout: no rollout named 'nope'",
        ),
        ("name: x\ndescription: d\nmetrics: {m: [a]}\n", "metrics.m.values: expected a list of numbers"),
        ("name: x\ndescription: d\nbogus: 1\n", "unknown key(s) bogus"),
        (
            "name: x\ndescription: d\nobjects: [{apiVersion: v9, kind: Gizmo, metadata: {name: g}}]\n",
            "objects[0]: kubesim does not serve Gizmo in v9",
        ),
        (
            "name: x\ndescription: d\nobjects: [{apiVersion: v1, kind: Service, metadata: {}}]\n",
            "objects[0].metadata: expected a mapping with a name",
        ),
        (
            "name: x\ndescription: d\n"
            "writers: [{object: {kind: VirtualService, name: vs}, every: 5, spec: {}}]\n",
            "writers[0].object: no VirtualService 'vs' among this scenario's objects",
        ),
        (
            "name: x\ndescription: d\nwriters: [{every: 5, spec: {}}]\n",
            "writers[0]: give exactly one of rollout or object",
        ),
        (
            "name: x\ndescription: d\nload: [{hpa: web, at: 0, pods: 2}]\n",
            "load[0].hpa: no HorizontalPodAutoscaler 'web' among this scenario's objects",
        ),
        ("name: [\n", "not valid YAML (line"),
    ],
)
def test_bad_scenario_files_get_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as error:
        load_scenarios([str(path)])
    assert message in str(error.value) and str(error.value).startswith(str(path))


def test_an_unknown_scenario_name_lists_the_builtin_ones() -> None:
    with pytest.raises(ScenarioError, match=r"unknown scenario 'nope'.*healthy-canary"):
        load_scenarios(["nope"])


def test_scenarios_run_side_by_side_keep_their_own_metric_series() -> None:
    # failed-analysis-abort's "error-rate" series fails; blue-green's own "error-rate" must still pass.
    sim, store, _ = start("blue-green", "failed-analysis-abort")
    sim.advance(300)
    assert rollout(store, "identity", "accounts")["status"]["phase"] == "Healthy"
    assert rollout(store, "billing", "payments")["status"]["phase"] == "Degraded"


def test_every_builtin_scenario_runs_beside_every_other() -> None:
    # Collisions are refused pairwise when loading, so all of them together covers any combination.
    names = [n for n, _ in list_scenarios()]
    sim, store, _ = start(*names)
    sim.advance(30)
    defined = {(r.namespace, r.name) for s in load_scenarios(names) for r in s.rollouts}
    present = {
        (r["metadata"]["namespace"], r["metadata"]["name"]) for r in store.list("argoproj.io/rollouts")[0]
    }
    assert defined <= present


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (
            "rollouts: [{name: checkout, namespace: shop, image: i, strategy: {canary: {}}}]\n",
            "rollout shop/checkout",
        ),
        (
            "rollouts: [{name: other, namespace: shop, image: i, strategy: {canary: {}}}]\n"
            "analysis_templates: [{name: error-rate, spec: {metrics: []}}]\n",
            "analysis template shop/error-rate",
        ),
    ],
)
def test_two_scenarios_that_would_collide_are_refused_naming_both(
    tmp_path: Path, second: str, message: str
) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\ndescription: d\n" + second)
    with pytest.raises(ScenarioError, match=f"scenarios healthy-canary and mine both define {message}"):
        load_scenarios(["healthy-canary", str(path)])


def test_two_scenarios_creating_the_same_object_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "name: mine\ndescription: d\nobjects: [{apiVersion: networking.istio.io/v1beta1, "
        "kind: VirtualService, metadata: {name: reviews, namespace: bookinfo}, spec: {hosts: [reviews]}}]\n"
    )
    both = "scenarios istio-weight-fight and mine both define VirtualService bookinfo/reviews"
    with pytest.raises(ScenarioError, match=both):
        load_scenarios(["istio-weight-fight", str(path)])


def test_a_scenario_listed_twice_is_refused() -> None:
    with pytest.raises(ScenarioError, match="scenario blue-green is listed twice"):
        load_scenarios(["blue-green", "blue-green"])
