"""The built-in scenarios, written in the same format as scenario files (see ``schema``).

Each description ends with the state the scenario reaches, which the tests check from the objects. Each
scenario keeps to namespaces of its own (the Flagger ones share ``test`` with distinct names), so any
combination runs together: ``load_scenarios`` refuses two scenarios that would create the same object or
feed the same metric series in one namespace.
"""

from __future__ import annotations

from typing import Any

from kubesim.flagger import SCENARIOS as FLAGGER_SCENARIOS

Obj = dict[str, Any]

PROMETHEUS = "http://prometheus.monitoring:9090"


def _error_rate(
    interval: str = "30s", count: int = 3, failure_limit: int = 0, threshold: float = 0.05
) -> Obj:
    return {
        "name": "error-rate",
        "spec": {
            "args": [{"name": "service-name"}],
            "metrics": [
                {
                    "name": "error-rate",
                    "interval": interval,
                    "count": count,
                    "failureLimit": failure_limit,
                    "successCondition": f"result[0] < {threshold:g}",
                    "provider": {
                        "prometheus": {
                            "address": PROMETHEUS,
                            "query": (
                                'sum(rate(http_requests_total{service="{{args.service-name}}",code=~"5.."}[2m]))'
                                " / "
                                'sum(rate(http_requests_total{service="{{args.service-name}}"}[2m]))'
                            ),
                        }
                    },
                }
            ],
        },
    }


def _analysis(service: str) -> Obj:
    return {
        "analysis": {
            "templates": [{"templateName": "error-rate"}],
            "args": [{"name": "service-name", "value": service}],
        }
    }


def _routed(name: str, steps: list[Obj], **extra: Any) -> Obj:
    return {
        "canary": {
            "canaryService": f"{name}-canary",
            "stableService": f"{name}-stable",
            "trafficRouting": {"nginx": {"stableIngress": name}},
            "steps": steps,
            **extra,
        }
    }


# --- Prometheus-backed scenarios: the pods expose real metrics (kubesim.traffic) and the analyses query a
# real Prometheus (`python -m kubesim serve --prometheus`). Windows are short because scrapes are 1 s apart.
_SELECTOR = (
    'namespace="{{args.namespace}}",rollout="{{args.rollout}}",'
    'rollouts_pod_template_hash="{{args.canary-hash}}"'
)
CANARY_ERROR_RATE_QUERY = (
    f'sum(rate(http_requests_total{{{_SELECTOR},status=~"5.."}}[10s]))'
    f" / sum(rate(http_requests_total{{{_SELECTOR}}}[10s]))"
)
CANARY_P95_QUERY = (
    f"histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket{{{_SELECTOR}}}[10s])))"
)


def _canary_health() -> Obj:
    """Error rate at most 5 % and p95 latency at most 250 ms, measured on the canary's own pods. The first
    measurement waits out one query window (10 s), as a template should: before that a young canary's
    ``rate()`` has too few scrapes, and five such errors in a row abort the rollout."""
    common = {"initialDelay": "10s", "interval": "3s", "count": 3, "failureLimit": 0}
    return {
        "name": "canary-health",
        "spec": {
            "args": [{"name": "namespace"}, {"name": "rollout"}, {"name": "canary-hash"}],
            "metrics": [
                {
                    "name": "error-rate",
                    **common,
                    "successCondition": "result[0] <= 0.05",
                    "provider": {"prometheus": {"address": PROMETHEUS, "query": CANARY_ERROR_RATE_QUERY}},
                },
                {
                    "name": "p95-latency",
                    **common,
                    "successCondition": "isNaN(result[0]) || result[0] <= 0.25",
                    "provider": {"prometheus": {"address": PROMETHEUS, "query": CANARY_P95_QUERY}},
                },
            ],
        },
    }


def _prometheus_scenario(name: str, description: str, rollout: str, namespace: str, traffic: Obj) -> Obj:
    return {
        "name": name,
        "description": description,
        "pod_ready_seconds": 2,
        "analysis_templates": [_canary_health()],
        "rollouts": [
            {
                "name": rollout,
                "namespace": namespace,
                "replicas": 4,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": {
                    "canary": {
                        "canaryService": f"{rollout}-canary",
                        "stableService": f"{rollout}-stable",
                        "steps": [
                            {"setWeight": 25},
                            {
                                "analysis": {
                                    "templates": [{"templateName": "canary-health"}],
                                    "args": [
                                        {"name": "namespace", "value": namespace},
                                        {"name": "rollout", "value": rollout},
                                        {
                                            "name": "canary-hash",
                                            "valueFrom": {"podTemplateHashValue": "Latest"},
                                        },
                                    ],
                                }
                            },
                            {"setWeight": 75},
                            {"pause": {"duration": "5s"}},
                        ],
                    }
                },
            }
        ],
        "traffic": [{"rollout": rollout, **traffic}],
        "events": [{"at": 10, "set_image": {"rollout": rollout, "image": "argoproj/rollouts-demo:green"}}],
    }


PROMETHEUS_SCENARIOS: list[Obj] = [
    _prometheus_scenario(
        "prometheus-healthy",
        "Needs --prometheus. A canary whose pods serve 1 % errors at a 50 ms median passes its "
        "Prometheus analysis (error rate and p95 latency, 3 measurements each). Ends Healthy on "
        "revision 2 with one Successful AnalysisRun.",
        "storefront",
        "prom-healthy",
        {"rps": 40, "stable": {"error_rate": 0.01}, "canary": {"error_rate": 0.01, "latency_median": 0.05}},
    ),
    _prometheus_scenario(
        "prometheus-error-spike",
        "Needs --prometheus. The canary's 5xx ratio jumps from 1 % to 30 % 20 s in, during its analysis. "
        "Ends Degraded (aborted): the AnalysisRun is Failed on error-rate.",
        "cart",
        "prom-errors",
        {
            "rps": 40,
            "canary": {"error_rate": 0.01},
            "changes": [{"at": 20, "canary": {"error_rate": 0.3}}],
        },
    ),
    _prometheus_scenario(
        "prometheus-latency-regression",
        "Needs --prometheus. The canary answers with a 300 ms median (stable: 50 ms), so its p95 is "
        "about 0.5 s against a 0.25 s threshold. Ends Degraded (aborted): the AnalysisRun is Failed "
        "on p95-latency.",
        "search-api",
        "prom-latency",
        {"rps": 40, "canary": {"latency_median": 0.3}},
    ),
    _prometheus_scenario(
        "prometheus-no-traffic",
        "Needs --prometheus. Nobody sends requests: the error-rate query is 0/0 = NaN, and "
        "'result[0] <= 0.05' is false for NaN, exactly as upstream. Ends Degraded (aborted): the "
        "AnalysisRun is Failed with the value [NaN].",
        "reports",
        "prom-idle",
        {"rps": 0},
    ),
]


def _istio_routes(name: str, canary_weight: int) -> list[Obj]:
    """The VirtualService's http routes as the repository declares them: one named route, two hosts."""
    return [
        {
            "name": "primary",
            "route": [
                {
                    "destination": {"host": f"{name}-stable", "port": {"number": 80}},
                    "weight": 100 - canary_weight,
                },
                {"destination": {"host": f"{name}-canary", "port": {"number": 80}}, "weight": canary_weight},
            ],
        }
    ]


def _cpu_hpa(name: str, namespace: str, target: Obj, minimum: int, maximum: int) -> Obj:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "scaleTargetRef": target,
            "minReplicas": minimum,
            "maxReplicas": maximum,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                }
            ],
        },
    }


AUTOSCALING_SCENARIOS: list[Obj] = [
    {
        "name": "hpa-workload-ref-conflict",
        "description": "A Rollout that takes its pod template from the Deployment api (workloadRef, "
        "scaleDown: onsuccess) while the HPA still targets that Deployment: once the Rollout is "
        "Healthy the controller scales the Deployment to 0, so the HPA reports ScalingActive False "
        "(ScalingDisabled) and never scales the Rollout, which stays at 3 replicas under a load "
        "of 6 pods' worth of CPU. Ends Healthy at 3 replicas with the HPA's desiredReplicas 0.",
        "pod_ready_seconds": 2,
        "rollouts": [
            {
                "name": "api",
                "namespace": "autoscale-ref",
                "replicas": 3,
                "image": "argoproj/rollouts-demo:blue",
                "spec": {
                    "workloadRef": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "api",
                        "scaleDown": "onsuccess",
                    }
                },
                "strategy": {"canary": {"steps": [{"setWeight": 50}, {"pause": {"duration": "10s"}}]}},
            }
        ],
        "objects": [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "api", "namespace": "autoscale-ref", "labels": {"app": "api"}},
                "spec": {
                    "replicas": 3,
                    "selector": {"matchLabels": {"app": "api"}},
                    "template": {
                        "metadata": {"labels": {"app": "api"}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "api",
                                    "image": "argoproj/rollouts-demo:blue",
                                    "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                                    "resources": {"requests": {"cpu": "100m", "memory": "32Mi"}},
                                }
                            ]
                        },
                    },
                },
            },
            _cpu_hpa(
                "api", "autoscale-ref", {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}, 2, 10
            ),
        ],
        "load": [{"hpa": "api", "at": 0, "pods": 6}],
    },
    {
        "name": "hpa-sync-conflict",
        "description": "An HPA scales the Rollout cart (60 % CPU target, load of 6 pods' worth) while "
        "Argo CD self-heal keeps syncing the repository's replicas: 4, so spec.replicas flips "
        "between the HPA's 8 (field manager kube-controller-manager, subresource scale) and 4 "
        "(argocd-controller) every sync period. Cycles: Healthy while spec.replicas alternates.",
        "pod_ready_seconds": 2,
        "rollouts": [
            {
                "name": "cart",
                "namespace": "autoscale-sync",
                "replicas": 4,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": _routed("cart", [{"setWeight": 20}, {"pause": {"duration": "10s"}}]),
            }
        ],
        "applications": [
            {
                "name": "cart",
                "rollout": "cart",
                "values": {"image": {"tag": "blue"}, "config": {"replicas": 4}},
            }
        ],
        "objects": [
            _cpu_hpa(
                "cart",
                "autoscale-sync",
                {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "cart"},
                2,
                10,
            )
        ],
        "load": [{"hpa": "cart", "at": 0, "pods": 6}],
    },
    {
        "name": "hpa-at-max-during-analysis",
        "description": "An HPA on the Rollout orders (60 % CPU target, 2 to 4 replicas) under a load of "
        "12 pods' worth scales it to 4 and stays there (ScalingLimited, TooManyReplicas) while the "
        "canary's background analysis measures the error rate every 10 s with no count. Ends Paused "
        "at step 1/2 (indefinite pause) with the background AnalysisRun Running, spec.replicas 4 and "
        "the HPA's desiredReplicas at its maxReplicas 4.",
        "pod_ready_seconds": 2,
        "analysis_templates": [_error_rate(interval="10s", count=0)],
        "metrics": {"error-rate": [0.01, 0.012, 0.009]},
        "rollouts": [
            {
                "name": "orders",
                "namespace": "autoscale-max",
                "replicas": 2,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": _routed(
                    "orders",
                    [{"setWeight": 25}, {"pause": {}}],
                    analysis=_analysis("orders-canary")["analysis"],
                ),
            }
        ],
        "objects": [
            _cpu_hpa(
                "orders",
                "autoscale-max",
                {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "orders"},
                2,
                4,
            )
        ],
        "load": [{"hpa": "orders", "at": 0, "pods": 12}],
        "events": [{"at": 20, "set_image": {"rollout": "orders", "image": "argoproj/rollouts-demo:green"}}],
    },
]


def _environment(env: str, image: str, steps: list[Obj]) -> Obj:
    """One environment of the bookstore app: the same rollout in its own namespace, labelled as one app."""
    return {
        "name": "bookstore",
        "namespace": f"bookstore-{env}",
        "replicas": 2,
        "image": image,
        "labels": {"app.kubernetes.io/name": "bookstore", "app.kubernetes.io/part-of": "shop"},
        "strategy": {"canary": {"steps": steps}},
    }


ENVIRONMENT_SCENARIOS: list[Obj] = [
    {
        "name": "environments",
        "description": "One app, bookstore (label app.kubernetes.io/name), in three namespaces, each "
        "rendered by its own Argo CD Application: bookstore-dev, bookstore-staging and bookstore-prod. "
        "prod runs blue; a commit takes staging to green, which waits for promotion at its pause step; "
        "another takes dev to yellow. Ends with prod Healthy on blue, staging Paused at step 1/4 with "
        "green as its canary, dev Healthy on yellow.",
        "pod_ready_seconds": 2,
        "rollouts": [
            _environment(
                "dev", "argoproj/rollouts-demo:green", [{"setWeight": 50}, {"pause": {"duration": "5s"}}]
            ),
            _environment(
                "staging",
                "argoproj/rollouts-demo:blue",
                [{"setWeight": 25}, {"pause": {}}, {"setWeight": 75}, {"pause": {"duration": "20s"}}],
            ),
            _environment(
                "prod",
                "argoproj/rollouts-demo:blue",
                [{"setWeight": 25}, {"pause": {}}, {"setWeight": 75}, {"pause": {"duration": "20s"}}],
            ),
        ],
        "applications": [
            {
                "name": f"bookstore-{env}",
                "rollout": "bookstore",
                "namespace": f"bookstore-{env}",
                "values": {"image": {"tag": tag}},
                "path": f"envs/{env}",
            }
            for env, tag in (("dev", "green"), ("staging", "blue"), ("prod", "blue"))
        ],
        "events": [
            {
                "at": 3,
                "commit": {
                    "app": "bookstore-staging",
                    "message": "staging: green",
                    "values": {"image": {"tag": "green"}},
                },
            },
            {
                "at": 3,
                "commit": {
                    "app": "bookstore-dev",
                    "message": "dev: yellow",
                    "values": {"image": {"tag": "yellow"}},
                },
            },
        ],
    },
]


ROUTER_SCENARIOS: list[Obj] = [
    {
        "name": "alb-canary",
        "description": "An AWS ALB-routed canary: the rollouts controller writes the forward action "
        "annotation alb.ingress.kubernetes.io/actions.catalog-api-root on the Ingress "
        "catalog-api-ingress (target groups catalog-api-canary and catalog-api-stable on port 80, "
        "weights 20 then 50) and lists it in rollouts.argoproj.io/managed-alb-annotations. Ends "
        "Paused at step 3/4 (indefinite pause) with the action's weights 50/50.",
        "pod_ready_seconds": 2,
        "rollouts": [
            {
                "name": "catalog-api",
                "namespace": "aws-edge",
                "replicas": 4,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": {
                    "canary": {
                        "canaryService": "catalog-api-canary",
                        "stableService": "catalog-api-stable",
                        "trafficRouting": {
                            "alb": {
                                "ingress": "catalog-api-ingress",
                                "rootService": "catalog-api-root",
                                "servicePort": 80,
                            }
                        },
                        "steps": [
                            {"setWeight": 20},
                            {"pause": {"duration": "20s"}},
                            {"setWeight": 50},
                            {"pause": {}},
                        ],
                    }
                },
            }
        ],
        "objects": [
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {
                    "name": "catalog-api-root",
                    "namespace": "aws-edge",
                    "labels": {"app": "catalog-api"},
                },
                "spec": {
                    "type": "NodePort",
                    "selector": {"app": "catalog-api"},
                    "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
                },
            },
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "Ingress",
                "metadata": {
                    "name": "catalog-api-ingress",
                    "namespace": "aws-edge",
                    "annotations": {
                        "alb.ingress.kubernetes.io/scheme": "internet-facing",
                        "alb.ingress.kubernetes.io/target-type": "ip",
                    },
                },
                "spec": {
                    "ingressClassName": "alb",
                    "rules": [
                        {
                            "host": "catalog.example.com",
                            "http": {
                                "paths": [
                                    {
                                        "path": "/",
                                        "pathType": "Prefix",
                                        "backend": {
                                            "service": {
                                                "name": "catalog-api-root",
                                                "port": {"name": "use-annotation"},
                                            }
                                        },
                                    }
                                ]
                            },
                        }
                    ],
                },
            },
        ],
        "events": [
            {"at": 5, "set_image": {"rollout": "catalog-api", "image": "argoproj/rollouts-demo:green"}}
        ],
    },
    {
        "name": "istio-header-route",
        "description": "Subset-level Istio routing (DestinationRule canary/stable subsets labelled with "
        "the pod template hashes) with managed routes: after setWeight 10 the controller adds a "
        "header route (X-Canary: true, all to the canary) and a mirror route (25 % of GETs "
        "mirrored to the canary), ordered first as managedRoutes lists them. Ends Paused at "
        "step 3/4 (indefinite pause) with the VirtualService routes mirror-gets, canary-header "
        "and primary (90/10).",
        "pod_ready_seconds": 2,
        "rollouts": [
            {
                "name": "ratings",
                "namespace": "mesh-istio",
                "replicas": 4,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": {
                    "canary": {
                        "trafficRouting": {
                            "managedRoutes": [{"name": "mirror-gets"}, {"name": "canary-header"}],
                            "istio": {
                                "virtualService": {"name": "ratings", "routes": ["primary"]},
                                "destinationRule": {
                                    "name": "ratings",
                                    "canarySubsetName": "canary",
                                    "stableSubsetName": "stable",
                                },
                            },
                        },
                        "steps": [
                            {"setWeight": 10},
                            {
                                "setHeaderRoute": {
                                    "name": "canary-header",
                                    "match": [{"headerName": "X-Canary", "headerValue": {"exact": "true"}}],
                                }
                            },
                            {
                                "setMirrorRoute": {
                                    "name": "mirror-gets",
                                    "percentage": 25,
                                    "match": [{"method": {"exact": "GET"}}],
                                }
                            },
                            {"pause": {}},
                        ],
                    }
                },
            }
        ],
        "objects": [
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "ratings", "namespace": "mesh-istio", "labels": {"app": "ratings"}},
                "spec": {
                    "type": "ClusterIP",
                    "selector": {"app": "ratings"},
                    "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
                },
            },
            {
                "apiVersion": "networking.istio.io/v1beta1",
                "kind": "DestinationRule",
                "metadata": {"name": "ratings", "namespace": "mesh-istio"},
                "spec": {
                    "host": "ratings",
                    "subsets": [
                        {"name": "canary", "labels": {"app": "ratings"}},
                        {"name": "stable", "labels": {"app": "ratings"}},
                    ],
                },
            },
            {
                "apiVersion": "networking.istio.io/v1beta1",
                "kind": "VirtualService",
                "metadata": {"name": "ratings", "namespace": "mesh-istio"},
                "spec": {
                    "hosts": ["ratings"],
                    "http": [
                        {
                            "name": "primary",
                            "route": [
                                {
                                    "destination": {
                                        "host": "ratings",
                                        "subset": "stable",
                                        "port": {"number": 80},
                                    },
                                    "weight": 100,
                                },
                                {
                                    "destination": {
                                        "host": "ratings",
                                        "subset": "canary",
                                        "port": {"number": 80},
                                    },
                                    "weight": 0,
                                },
                            ],
                        }
                    ],
                },
            },
        ],
        "events": [{"at": 5, "set_image": {"rollout": "ratings", "image": "argoproj/rollouts-demo:green"}}],
    },
    {
        "name": "traffic-ahead-of-capacity",
        "description": "A routed canary pinned to one pod by setCanaryScale (replicas: 1) then given "
        "setWeight 60: the NGINX canary Ingress sends 60 % of the traffic to 1 canary pod while "
        "10 stable pods serve the other 40 %. Ends Paused at step 2/3 (indefinite pause) with "
        'canary-weight "60", the canary ReplicaSet at 1 available replica and the stable at 10.',
        "pod_ready_seconds": 2,
        "rollouts": [
            {
                "name": "quotes",
                "namespace": "capacity",
                "replicas": 10,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": {
                    "canary": {
                        "canaryService": "quotes-canary",
                        "stableService": "quotes-stable",
                        "trafficRouting": {"nginx": {"stableIngress": "quotes"}},
                        "steps": [{"setCanaryScale": {"replicas": 1}}, {"setWeight": 60}, {"pause": {}}],
                    }
                },
            }
        ],
        "events": [{"at": 5, "set_image": {"rollout": "quotes", "image": "argoproj/rollouts-demo:purple"}}],
    },
    {
        "name": "smi-canary",
        "description": "An SMI-routed canary: the rollouts controller creates the TrafficSplit "
        "ledger (split.smi-spec.io/v1alpha3, root service ledger, owned by the Rollout) and moves "
        "its backends' weights 10 then 40; the analysis after 40 % fails (error rate 0.2) and "
        "the rollout aborts. Ends Degraded (aborted) with the TrafficSplit back at canary 0 / "
        "stable 100.",
        "pod_ready_seconds": 2,
        "analysis_templates": [_error_rate(interval="10s", count=2)],
        "metrics": {"error-rate": [0.2]},
        "rollouts": [
            {
                "name": "ledger",
                "namespace": "mesh-smi",
                "replicas": 5,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": {
                    "canary": {
                        "canaryService": "ledger-canary",
                        "stableService": "ledger-stable",
                        "trafficRouting": {"smi": {"rootService": "ledger"}},
                        "steps": [
                            {"setWeight": 10},
                            {"pause": {"duration": "10s"}},
                            {"setWeight": 40},
                            _analysis("ledger-canary"),
                            {"setWeight": 80},
                        ],
                    }
                },
            }
        ],
        "objects": [
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "ledger", "namespace": "mesh-smi", "labels": {"app": "ledger"}},
                "spec": {
                    "type": "ClusterIP",
                    "selector": {"app": "ledger"},
                    "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
                },
            }
        ],
        "events": [{"at": 5, "set_image": {"rollout": "ledger", "image": "argoproj/rollouts-demo:red"}}],
    },
    {
        "name": "gateway-api-canary",
        "description": "A canary routed by the Argo Rollouts Gateway API plugin "
        '(trafficRouting.plugins["argoproj-labs/gatewayAPI"].httpRoute): the plugin (field manager '
        "gatewayAPI) moves the HTTPRoute's backendRefs weights 30 then 60 and labels the route "
        "rollouts.argoproj.io/gatewayapi-canary: in-progress meanwhile. Ends Healthy on revision 2 "
        "with the HTTPRoute back at 100/0 (stable/canary) and the label removed.",
        "pod_ready_seconds": 2,
        "rollouts": [
            {
                "name": "payments",
                "namespace": "gateway-demo",
                "replicas": 4,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": {
                    "canary": {
                        "canaryService": "payments-canary",
                        "stableService": "payments-stable",
                        "trafficRouting": {
                            "plugins": {"argoproj-labs/gatewayAPI": {"httpRoute": "payments"}}
                        },
                        "steps": [
                            {"setWeight": 30},
                            {"pause": {"duration": "15s"}},
                            {"setWeight": 60},
                            {"pause": {"duration": "15s"}},
                        ],
                    }
                },
            }
        ],
        "objects": [
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "HTTPRoute",
                "metadata": {"name": "payments", "namespace": "gateway-demo"},
                "spec": {
                    "parentRefs": [{"name": "public", "namespace": "gateway-system"}],
                    "hostnames": ["payments.example.com"],
                    "rules": [
                        {
                            "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                            "backendRefs": [
                                {"name": "payments-stable", "port": 80, "weight": 100},
                                {"name": "payments-canary", "port": 80, "weight": 0},
                            ],
                        }
                    ],
                },
            }
        ],
        "events": [{"at": 5, "set_image": {"rollout": "payments", "image": "argoproj/rollouts-demo:orange"}}],
    },
    {
        "name": "nginx-canary",
        "description": "An NGINX-routed canary: the rollouts controller creates the canary Ingress "
        "storefront-storefront-canary from the stable Ingress (its rules sent to the canary Service, "
        "canary and canary-weight annotations, a canary-by-header route for X-Canary: always) and "
        "moves its canary-weight 25 then 50. Ends Paused at step 3/4 (indefinite pause) with "
        'canary-weight "50" and status.canary.weights 50/50.',
        "pod_ready_seconds": 2,
        "rollouts": [
            {
                "name": "storefront",
                "namespace": "edge",
                "replicas": 4,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": {
                    "canary": {
                        "canaryService": "storefront-canary",
                        "stableService": "storefront-stable",
                        "trafficRouting": {
                            "nginx": {
                                "stableIngress": "storefront",
                                "additionalIngressAnnotations": {
                                    "canary-by-header": "X-Canary",
                                    "canary-by-header-value": "always",
                                },
                            }
                        },
                        "steps": [
                            {"setWeight": 25},
                            {"pause": {"duration": "20s"}},
                            {"setWeight": 50},
                            {"pause": {}},
                        ],
                    }
                },
            }
        ],
        "events": [
            {"at": 5, "set_image": {"rollout": "storefront", "image": "argoproj/rollouts-demo:green"}}
        ],
    },
    {
        "name": "istio-weight-fight",
        "description": "Argo CD self-heal restores the repository's VirtualService weights (stable 100, "
        "canary 0) every 5 s while the rollouts controller re-applies its step weight (20) "
        "to the named route. Cycles: Paused at step 1/2 while the VirtualService's route "
        "weights flip between 20/80 and 0/100, written alternately by rollouts-controller and "
        "argocd-controller.",
        "pod_ready_seconds": 2,
        "rollouts": [
            {
                "name": "reviews",
                "namespace": "bookinfo",
                "replicas": 5,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": {
                    "canary": {
                        "canaryService": "reviews-canary",
                        "stableService": "reviews-stable",
                        "trafficRouting": {
                            "istio": {"virtualService": {"name": "reviews", "routes": ["primary"]}}
                        },
                        "steps": [{"setWeight": 20}, {"pause": {}}],
                    }
                },
            }
        ],
        "objects": [
            {
                "apiVersion": "networking.istio.io/v1beta1",
                "kind": "VirtualService",
                "metadata": {"name": "reviews", "namespace": "bookinfo"},
                "spec": {"hosts": ["reviews"], "http": _istio_routes("reviews", 0)},
            }
        ],
        "events": [{"at": 5, "set_image": {"rollout": "reviews", "image": "argoproj/rollouts-demo:yellow"}}],
        "writers": [
            {
                "object": {"kind": "VirtualService", "name": "reviews", "namespace": "bookinfo"},
                "every": 5,
                "manager": "argocd-controller",
                "spec": {"http": _istio_routes("reviews", 0)},
            }
        ],
    },
]


BUILTIN: list[Obj] = [
    {
        "name": "healthy-canary",
        "description": "A canary with traffic routing goes 10% -> 50% -> 100% with a passing analysis after "
        "each pause. Ends Healthy on revision 2 (stableRS == currentPodHash, 2 Successful "
        "AnalysisRuns); a new image every 15 min repeats the cycle.",
        "pod_ready_seconds": 3,
        # A threshold derived from the measured ~1 % baseline, so a long run never looks stale.
        "analysis_templates": [_error_rate(threshold=0.03)],
        "metrics": {"error-rate": [0.01, 0.012, 0.009]},
        "rollouts": [
            {
                "name": "checkout",
                "namespace": "shop",
                "replicas": 5,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": _routed(
                    "checkout",
                    [
                        {"setWeight": 10},
                        {"pause": {"duration": "30s"}},
                        _analysis("checkout"),
                        {"setWeight": 50},
                        {"pause": {"duration": "30s"}},
                        _analysis("checkout"),
                    ],
                ),
            }
        ],
        "events": [
            {
                "at": 10,
                "every": 900,
                "set_image": {
                    "rollout": "checkout",
                    "images": [
                        "argoproj/rollouts-demo:green",
                        "argoproj/rollouts-demo:yellow",
                        "argoproj/rollouts-demo:blue",
                    ],
                },
            }
        ],
    },
    {
        "name": "failed-analysis-abort",
        "description": "The step analysis of a basic canary fails its second measurement (error rate 0.2). "
        "Ends Degraded with status.abort true (RolloutAborted), the canary ReplicaSet scaled "
        "to 0 and the stable one serving all 4 replicas.",
        "pod_ready_seconds": 3,
        "analysis_templates": [_error_rate(interval="20s")],
        "metrics": {"error-rate": [0.01, 0.2, 0.2]},
        "rollouts": [
            {
                "name": "payments",
                "namespace": "billing",
                "replicas": 4,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": {
                    "canary": {
                        "canaryService": "payments-canary",
                        "stableService": "payments-stable",
                        "steps": [
                            {"setWeight": 25},
                            {"pause": {"duration": "20s"}},
                            _analysis("payments"),
                            {"setWeight": 75},
                            {"pause": {"duration": "20s"}},
                        ],
                    }
                },
            }
        ],
        "events": [{"at": 10, "set_image": {"rollout": "payments", "image": "argoproj/rollouts-demo:red"}}],
    },
    {
        "name": "rerender-race",
        "description": "Argo CD renders the Rollout twice 30 s apart: the inline values (new image) apply at "
        "once, the values file comes from a checkout that lags 30 s. The second render changes "
        "checksum/config, so a new hash (revision 3) restarts the canary at step 0. Ends Paused "
        "(CanaryPauseStep) on revision 3; revisions 2 and 3 differ only in checksum/config.",
        "pod_ready_seconds": 3,
        "rollouts": [
            {
                "name": "frontend",
                "namespace": "web",
                "replicas": 4,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": _routed(
                    "frontend",
                    [{"setWeight": 25}, {"pause": {"duration": "10s"}}, {"setWeight": 50}, {"pause": {}}],
                ),
            }
        ],
        "applications": [
            {
                "name": "frontend",
                "rollout": "frontend",
                "checkout_lag_seconds": 30,
                "self_heal": True,
                "values": {"image": {"tag": "blue"}, "config": {"timeout": 30, "featureFlags": "a"}},
            }
        ],
        "events": [
            {
                "at": 20,
                "commit": {
                    "app": "frontend",
                    "author": "release-bot <release-bot@example.com>",
                    "message": "release 2.4.0: image green, timeout 45",
                    "inline_values": {"image": {"tag": "green"}},
                    "values": {"config": {"timeout": 45, "featureFlags": "a"}},
                },
            }
        ],
    },
    {
        "name": "paused-reads-degraded",
        "description": "A GitOps canary waits at an indefinite pause. Argo CD reports the Rollout (and the "
        "app) Suspended and, because the app has a PostSync hook, the sync stays Running "
        "'waiting for healthy state'. Ends Paused (CanaryPauseStep) at step 1/2, app health "
        "Suspended, operationState Running.",
        "pod_ready_seconds": 3,
        "rollouts": [
            {
                "name": "search",
                "namespace": "search",
                "replicas": 4,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": _routed("search", [{"setWeight": 25}, {"pause": {}}]),
            }
        ],
        "applications": [
            {
                "name": "search",
                "rollout": "search",
                "hooks": True,
                "values": {"image": {"tag": "blue"}, "config": {"replicas": 4}},
            }
        ],
        "events": [
            {
                "at": 10,
                "commit": {
                    "app": "search",
                    "author": "dev <dev@example.com>",
                    "message": "search: new ranking (image green)",
                    "values": {"image": {"tag": "green"}},
                },
            }
        ],
    },
    {
        "name": "orphaned-canary",
        "description": "A traffic-routed canary with abortScaleDownDelaySeconds: 0 fails its analysis and "
        "aborts: the weight returns to stable but the canary ReplicaSet keeps its replicas. "
        "Ends Degraded (aborted) with a non-stable ReplicaSet still holding 2 replicas.",
        "pod_ready_seconds": 3,
        "analysis_templates": [_error_rate(interval="20s", count=2)],
        "metrics": {"error-rate": [0.3]},
        "rollouts": [
            {
                "name": "inventory",
                "namespace": "warehouse",
                "replicas": 4,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": _routed(
                    "inventory",
                    [{"setWeight": 50}, _analysis("inventory"), {"pause": {}}],
                    abortScaleDownDelaySeconds=0,
                ),
            }
        ],
        "events": [
            {"at": 10, "set_image": {"rollout": "inventory", "image": "argoproj/rollouts-demo:orange"}}
        ],
    },
    {
        "name": "weight-fight",
        "description": "A second writer (Argo CD self-heal) keeps resetting the canary weight the rollouts "
        "controller set, every 5 s. Cycles: Paused at step 1/2 while status.canary.weights "
        "flips between 30 and 0, written alternately by rollouts-controller and argocd-controller.",
        "pod_ready_seconds": 2,
        "rollouts": [
            {
                "name": "recommendations",
                "namespace": "ml",
                "replicas": 10,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": _routed("recommendations", [{"setWeight": 30}, {"pause": {}}]),
            }
        ],
        "events": [
            {"at": 5, "set_image": {"rollout": "recommendations", "image": "argoproj/rollouts-demo:purple"}}
        ],
        "writers": [
            {
                "rollout": "recommendations",
                "every": 5,
                "manager": "argocd-controller",
                "status": {"canary": {"weights": {"canary": {"weight": 0}, "stable": {"weight": 100}}}},
            }
        ],
    },
    {
        "name": "blue-green",
        "description": "Blue-green with a preview service, a passing pre-promotion analysis and manual "
        "promotion: Paused (BlueGreenPause) with preview on the new hash until a user promotes "
        "at 120 s. Ends Healthy on revision 2 with activeSelector == stableRS == currentPodHash "
        "and the old ReplicaSet scaled to 0 after its 30 s scale-down delay.",
        "pod_ready_seconds": 3,
        "analysis_templates": [_error_rate(interval="10s", count=2)],
        "metrics": {"error-rate": [0.01]},
        "rollouts": [
            {
                "name": "accounts",
                "namespace": "identity",
                "replicas": 3,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": {
                    "blueGreen": {
                        "activeService": "accounts",
                        "previewService": "accounts-preview",
                        "autoPromotionEnabled": False,
                        "prePromotionAnalysis": {
                            "templates": [{"templateName": "error-rate"}],
                            "args": [{"name": "service-name", "value": "accounts-preview"}],
                        },
                    }
                },
            }
        ],
        "events": [
            {"at": 10, "set_image": {"rollout": "accounts", "image": "argoproj/rollouts-demo:green"}},
            {"at": 120, "action": {"rollout": "accounts", "name": "promote"}},
        ],
    },
    {
        "name": "progress-deadline",
        "description": "The new image cannot be pulled, so the canary pods never become ready and nothing "
        "progresses for progressDeadlineSeconds (60). Ends Degraded with a Progressing "
        "condition ProgressDeadlineExceeded ('ReplicaSet \"...\" has timed out progressing.').",
        "pod_ready_seconds": 3,
        "rollouts": [
            {
                "name": "orders",
                "namespace": "fulfilment",
                "replicas": 5,
                "image": "argoproj/rollouts-demo:blue",
                "spec": {"progressDeadlineSeconds": 60},
                "unpullable_images": ["argoproj/rollouts-demo:does-not-exist"],
                "strategy": {"canary": {"steps": [{"setWeight": 20}, {"pause": {}}, {"setWeight": 60}]}},
            }
        ],
        "events": [
            {"at": 10, "set_image": {"rollout": "orders", "image": "argoproj/rollouts-demo:does-not-exist"}}
        ],
    },
    {
        "name": "metrics-provider-down",
        "description": "The metrics provider is unreachable: every measurement is an Error, and after more "
        "than consecutiveErrorLimit (4) the AnalysisRun ends Error. Ends with the AnalysisRun "
        "phase Error and the rollout Degraded (aborted on the analysis error).",
        "pod_ready_seconds": 3,
        "analysis_templates": [_error_rate()],
        "metrics": {"error-rate": {"down": True}},
        "rollouts": [
            {
                "name": "catalog",
                "namespace": "catalog",
                "replicas": 3,
                "image": "argoproj/rollouts-demo:blue",
                "strategy": _routed("catalog", [{"setWeight": 34}, _analysis("catalog"), {"setWeight": 67}]),
            }
        ],
        "events": [{"at": 10, "set_image": {"rollout": "catalog", "image": "argoproj/rollouts-demo:green"}}],
    },
    {
        "name": "fleet",
        "description": "Many generated canaries (default 100 in 5 namespaces) with steady churn: a new image "
        "on a random rollout every second. Cycles: most rollouts Healthy, a changing few "
        "Progressing or Paused.",
        "fleet": {"rollouts": 100, "namespaces": 5, "replicas": 1, "churn_per_second": 1},
    },
    *PROMETHEUS_SCENARIOS,
    *FLAGGER_SCENARIOS,
    *ROUTER_SCENARIOS,
    *AUTOSCALING_SCENARIOS,
    *ENVIRONMENT_SCENARIOS,
]
