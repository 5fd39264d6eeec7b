"""The scenario file format, its validation, and the parsed ``Scenario``.

A scenario is a YAML (or JSON) mapping; the built-in ones are written in the same format. Every error names
the file and the path of the offending field, e.g. ``web.yaml: rollouts[0].replicas: expected an integer >=
0``.

Format (all times are simulated seconds since the scenario started)::

    name: my-canary                     # required; lowercase letters, digits and '-'
    description: one line, ending with the documented end state
    pod_ready_seconds: 3                # default delay before a new pod is ready
    analysis_templates:                 # AnalysisTemplate specs (namespace defaults to the first rollout's)
      - name: error-rate
        spec: {metrics: [{name: error-rate, interval: 30s, count: 3, successCondition: "result[0] < 0.05",
                          provider: {prometheus: {address: "http://prometheus:9090", query: "..."}}}]}
    metrics:                            # series for the simulated metric provider (see kubesim.metrics)
      error-rate: [0.01, 0.02]
    rollouts:
      - name: web
        namespace: demo                 # default "default"
        replicas: 5
        image: argoproj/rollouts-demo:blue
        strategy: {canary: {steps: [...]}}        # spec.strategy exactly as Argo Rollouts takes it
        spec: {progressDeadlineSeconds: 60}       # optional: more Rollout spec fields
        pod_ready_seconds: 3
        unpullable_images: ["argoproj/rollouts-demo:does-not-exist"]   # their pods stay ImagePullBackOff
    applications:                       # Argo CD Applications rendering a rollout above (see kubesim.gitops)
      - name: web
        rollout: web
        namespace: demo                 # optional: which namespace's rollout (a name in several namespaces)
        values: {image: {tag: blue}, config: {timeout: 30}}    # values file at the first commit
        inline_values: {}                                      # spec.source.helm.values
        checkout_lag_seconds: 30        # how far the repo-server's checkout lags behind git
        self_heal: true
        hooks: true                     # a PostSync hook: the sync waits for a healthy Rollout
    events:
      - {at: 30, set_image: {rollout: web, image: argoproj/rollouts-demo:green}}
      - {at: 30, every: 300, set_image: {rollout: web, images: [a:1, a:2]}}   # repeats, cycling images
      - {at: 30, set_image: {rollout: web, namespace: web-dev, image: a:3}}   # a name in several namespaces
      - {at: 60, commit: {app: web, message: "bump", values: {...}, inline_values: {...}}}
      - {at: 90, action: {rollout: web, name: promote}}     # promote, promote-full, skip-current-step,
                                                            # abort, retry, pause, resume, restart, undo
      - {at: 120, fault: {name: drop_watches}}              # expire_next_watch, hang {seconds},
                                                            # fail {count | seconds}, restart
    objects:                            # more objects to create at the start (routing objects, HPAs, ...):
      - {apiVersion: networking.istio.io/v1beta1, kind: VirtualService,   # any served kind; namespace
         metadata: {name: web}, spec: {...}}                              # defaults to the first rollout's
    load:                               # CPU demand the simulated HPA controller measures
      - {hpa: web, at: 0, pods: 2}      # from `at` on: `pods` pods' worth of CPU (kubesim.autoscaling)
    writers:                            # another writer fighting the rollouts controller
      - {rollout: web, every: 5, manager: argocd-controller,
         status: {canary: {weights: {canary: {weight: 0}, stable: {weight: 100}}}}}
      - {object: {kind: VirtualService, name: web}, every: 5, manager: argocd-controller,
         spec: {http: [...]}}           # the merge patch it keeps applying to one of the objects above
    fleet: {rollouts: 100, namespaces: 5, replicas: 1, churn_per_second: 2}   # generated rollouts
    traffic:                            # real Prometheus metrics for a rollout's pods (see kubesim.traffic)
      - {rollout: web, rps: 40, canary: {error_rate: 0.3}, changes: [{at: 60, canary: {latency_median: 0.4}}]}

Non-goals: templating, includes, conditionals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kubesim.metrics import MetricsError, Series, parse_series
from kubesim.resources import by_kind
from kubesim.traffic import TrafficError, TrafficProfile, parse_traffic

Obj = dict[str, Any]

ACTION_NAMES = (
    "promote",
    "promote-full",
    "skip-current-step",
    "abort",
    "retry",
    "pause",
    "resume",
    "restart",
    "undo",
)
FAULT_NAMES = ("drop_watches", "expire_next_watch", "hang", "fail", "restart")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class ScenarioError(ValueError):
    """A scenario could not be loaded; the message says where and why."""


@dataclass
class RolloutDef:
    name: str
    namespace: str
    replicas: int
    image: str
    strategy: Obj
    spec: Obj
    pod_ready_seconds: float
    unpullable_images: list[str]
    labels: Obj = field(default_factory=dict)


@dataclass
class AppDef:
    name: str
    rollout: str
    namespace: str
    values: Obj
    inline_values: Obj
    checkout_lag_seconds: float
    self_heal: bool
    hooks: bool
    repo_url: str
    path: str
    values_file: str


@dataclass
class Event:
    at: float
    every: float | None
    kind: str  # set_image | commit | action | fault
    params: Obj


@dataclass
class Writer:
    rollout: str  # the Rollout it writes, or "" when it writes `resource`
    namespace: str
    every: float
    manager: str
    status: Obj | None
    spec: Obj | None
    resource: str = ""  # the store key of the object it writes (kubesim.resources.ResourceType.key)
    name: str = ""


@dataclass
class Fleet:
    rollouts: int
    namespaces: int
    replicas: int
    churn_per_second: float


@dataclass
class Scenario:
    name: str
    description: str
    pod_ready_seconds: float
    analysis_templates: list[Obj]
    metrics: dict[str, Series]
    rollouts: list[RolloutDef]
    applications: list[AppDef]
    events: list[Event]
    writers: list[Writer]
    fleet: Fleet | None
    source: str = "built-in"
    traffic: list[TrafficProfile] = field(default_factory=list)
    canaries: list[Any] = field(default_factory=list)  # kubesim.flagger.CanaryDef
    objects: list[Obj] = field(default_factory=list)
    # (namespace, HPA name) -> [(from simulated second, CPU demand in pod requests)], sorted by time
    load: dict[tuple[str, str], list[tuple[float, float]]] = field(default_factory=dict)


class _Checker:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> ScenarioError:
        return ScenarioError(f"{self.source}: {path}: {message}" if path else f"{self.source}: {message}")

    def mapping(
        self, value: Any, path: str, allowed: set[str], required: frozenset[str] | set[str] = frozenset()
    ) -> Obj:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected a mapping, got {type(value).__name__}")
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise self.fail(
                path, f"unknown key(s) {', '.join(map(str, unknown))}; allowed: {', '.join(sorted(allowed))}"
            )
        missing = sorted(required - set(value))
        if missing:
            raise self.fail(path, f"missing required key(s) {', '.join(missing)}")
        return value

    def name(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not _NAME.match(value) or len(value) > 63:
            raise self.fail(path, f"expected a lowercase DNS-1123 name (a-z, 0-9, '-'), got {value!r}")
        return value

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(path, f"expected a non-empty string, got {value!r}")
        return value

    def number(self, value: Any, path: str, minimum: float = 0.0) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
            raise self.fail(path, f"expected a number >= {minimum:g}, got {value!r}")
        return float(value)

    def integer(self, value: Any, path: str, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(path, f"expected an integer >= {minimum}, got {value!r}")
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(path, f"expected true or false, got {value!r}")
        return value

    def items(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list, got {type(value).__name__}")
        return value


def _check_strategy(c: _Checker, strategy: Any, path: str) -> Obj:
    strategy = c.mapping(strategy, path, {"canary", "blueGreen"})
    if ("canary" in strategy) == ("blueGreen" in strategy):
        raise c.fail(path, "give exactly one of canary or blueGreen")
    if "canary" in strategy:
        canary = strategy["canary"] or {}
        if not isinstance(canary, dict):
            raise c.fail(f"{path}.canary", "expected a mapping")
        for i, step in enumerate(c.items(canary.get("steps"), f"{path}.canary.steps")):
            spath = f"{path}.canary.steps[{i}]"
            step = c.mapping(
                step,
                spath,
                {
                    "setWeight",
                    "pause",
                    "analysis",
                    "experiment",
                    "setCanaryScale",
                    "setHeaderRoute",
                    "setMirrorRoute",
                    "plugin",
                },
            )
            if len(step) != 1:
                raise c.fail(spath, "a step has exactly one of setWeight, pause, analysis, experiment, ...")
            if "setWeight" in step:
                weight = c.integer(step["setWeight"], f"{spath}.setWeight")
                if weight > 100:
                    raise c.fail(f"{spath}.setWeight", f"expected 0..100, got {weight}")
            if "pause" in step and step["pause"] is not None:
                c.mapping(step["pause"], f"{spath}.pause", {"duration"})
            if "analysis" in step:
                c.mapping(
                    step["analysis"],
                    f"{spath}.analysis",
                    {"templates", "args", "dryRun", "measurementRetention", "analysisRunMetadata"},
                    {"templates"},
                )
    else:
        bg = c.mapping(
            strategy["blueGreen"],
            f"{path}.blueGreen",
            {
                "activeService",
                "previewService",
                "autoPromotionEnabled",
                "autoPromotionSeconds",
                "prePromotionAnalysis",
                "postPromotionAnalysis",
                "scaleDownDelaySeconds",
                "previewReplicaCount",
                "abortScaleDownDelaySeconds",
                "previewMetadata",
                "activeMetadata",
                "antiAffinity",
                "scaleDownDelayRevisionLimit",
                "maxUnavailable",
            },
            {"activeService"},
        )
        if bg.get("previewService") == bg["activeService"]:
            raise c.fail(f"{path}.blueGreen.previewService", "must differ from activeService")
    return strategy


def parse_scenario(data: Any, source: str) -> Scenario:
    c = _Checker(source)
    top = c.mapping(
        data,
        "",
        {
            "name",
            "description",
            "pod_ready_seconds",
            "analysis_templates",
            "metrics",
            "rollouts",
            "applications",
            "events",
            "writers",
            "fleet",
            "traffic",
            "canaries",
            "objects",
            "load",
        },
        {"name", "description"},
    )
    name = c.name(top["name"], "name")
    description = c.string(top["description"], "description")
    ready = c.number(top.get("pod_ready_seconds", 2), "pod_ready_seconds")

    metrics: dict[str, Series] = {}
    raw_metrics = top.get("metrics") or {}
    if not isinstance(raw_metrics, dict):
        raise c.fail("metrics", "expected a mapping of metric name to series")
    for mname, spec in raw_metrics.items():
        try:
            metrics[str(mname)] = parse_series(str(mname), spec)
        except MetricsError as error:
            raise c.fail("", str(error)) from error

    rollouts: list[RolloutDef] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(c.items(top.get("rollouts"), "rollouts")):
        path = f"rollouts[{i}]"
        item = c.mapping(
            item,
            path,
            {
                "name",
                "namespace",
                "replicas",
                "image",
                "strategy",
                "spec",
                "pod_ready_seconds",
                "unpullable_images",
                "labels",
            },
            {"name", "image", "strategy"},
        )
        rname = c.name(item["name"], f"{path}.name")
        ns = c.name(item.get("namespace", "default"), f"{path}.namespace")
        if (ns, rname) in seen:
            raise c.fail(f"{path}.name", f"duplicate rollout {ns}/{rname}")
        seen.add((ns, rname))
        extra = item.get("spec") or {}
        if not isinstance(extra, dict):
            raise c.fail(f"{path}.spec", "expected a mapping of Rollout spec fields")
        unpullable = c.items(item.get("unpullable_images"), f"{path}.unpullable_images")
        rollouts.append(
            RolloutDef(
                name=rname,
                namespace=ns,
                replicas=c.integer(item.get("replicas", 3), f"{path}.replicas"),
                image=c.string(item["image"], f"{path}.image"),
                strategy=_check_strategy(c, item["strategy"], f"{path}.strategy"),
                spec=extra,
                pod_ready_seconds=c.number(item.get("pod_ready_seconds", ready), f"{path}.pod_ready_seconds"),
                unpullable_images=[
                    c.string(u, f"{path}.unpullable_images[{j}]") for j, u in enumerate(unpullable)
                ],
                labels=c.mapping(item.get("labels") or {}, f"{path}.labels", set(item.get("labels") or {})),
            )
        )
    by_name = {r.name: r for r in rollouts}

    templates: list[Obj] = []
    default_ns = rollouts[0].namespace if rollouts else "default"
    for i, item in enumerate(c.items(top.get("analysis_templates"), "analysis_templates")):
        path = f"analysis_templates[{i}]"
        item = c.mapping(item, path, {"name", "namespace", "spec"}, {"name", "spec"})
        spec = c.mapping(
            item["spec"], f"{path}.spec", {"metrics", "args", "dryRun", "measurementRetention"}, {"metrics"}
        )
        for j, metric in enumerate(c.items(spec["metrics"], f"{path}.spec.metrics")):
            c.mapping(
                metric,
                f"{path}.spec.metrics[{j}]",
                set(metric) if isinstance(metric, dict) else set(),
                {"name", "provider"},
            )
        templates.append(
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "AnalysisTemplate",
                "metadata": {
                    "name": c.name(item["name"], f"{path}.name"),
                    "namespace": c.name(item.get("namespace", default_ns), f"{path}.namespace"),
                },
                "spec": spec,
            }
        )

    apps: list[AppDef] = []
    for i, item in enumerate(c.items(top.get("applications"), "applications")):
        path = f"applications[{i}]"
        item = c.mapping(
            item,
            path,
            {
                "name",
                "rollout",
                "values",
                "inline_values",
                "checkout_lag_seconds",
                "self_heal",
                "hooks",
                "repo_url",
                "path",
                "values_file",
                "namespace",
            },
            {"name", "rollout"},
        )
        target = by_name.get(item["rollout"])
        if "namespace" in item:  # a rollout name repeated in several namespaces (one app, many environments)
            target = next(
                (r for r in rollouts if (r.namespace, r.name) == (item["namespace"], item["rollout"])), None
            )
        if target is None:
            raise c.fail(f"{path}.rollout", f"no rollout named {item['rollout']!r} in this scenario")
        apps.append(
            AppDef(
                name=c.name(item["name"], f"{path}.name"),
                rollout=target.name,
                namespace=target.namespace,
                values=c.mapping(item.get("values") or {}, f"{path}.values", set(item.get("values") or {})),
                inline_values=c.mapping(
                    item.get("inline_values") or {},
                    f"{path}.inline_values",
                    set(item.get("inline_values") or {}),
                ),
                checkout_lag_seconds=c.number(
                    item.get("checkout_lag_seconds", 0), f"{path}.checkout_lag_seconds"
                ),
                self_heal=c.boolean(item.get("self_heal", True), f"{path}.self_heal"),
                hooks=c.boolean(item.get("hooks", False), f"{path}.hooks"),
                repo_url=c.string(
                    item.get("repo_url", f"https://git.example.com/platform/{item['name']}-deploy.git"),
                    f"{path}.repo_url",
                ),
                path=c.string(item.get("path", f"charts/{target.name}"), f"{path}.path"),
                values_file=c.string(item.get("values_file", "values.yaml"), f"{path}.values_file"),
            )
        )
    app_names = {a.name for a in apps}

    events: list[Event] = []
    for i, item in enumerate(c.items(top.get("events"), "events")):
        path = f"events[{i}]"
        kinds = {"set_image", "commit", "action", "fault"}
        item = c.mapping(item, path, {"at", "every", *kinds}, {"at"})
        present = [k for k in kinds if k in item]
        if len(present) != 1:
            raise c.fail(path, "an event has exactly one of set_image, commit, action, fault")
        kind = present[0]
        params = c.mapping(
            item[kind], f"{path}.{kind}", set(item[kind]) if isinstance(item[kind], dict) else set()
        )
        if kind in ("set_image", "action") and params.get("rollout") not in by_name:
            raise c.fail(
                f"{path}.{kind}.rollout", f"no rollout named {params.get('rollout')!r} in this scenario"
            )
        if (
            kind == "set_image"
            and "namespace" in params
            and (params["namespace"], params["rollout"]) not in seen
        ):
            # A rollout name may repeat across namespaces (one app in several environments).
            raise c.fail(
                f"{path}.set_image.namespace",
                f"no rollout {params['rollout']!r} in namespace {params['namespace']!r} in this scenario",
            )
        if kind == "set_image" and not (params.get("image") or params.get("images")):
            raise c.fail(f"{path}.set_image", "give image or images")
        if kind == "action" and params.get("name") not in ACTION_NAMES:
            raise c.fail(
                f"{path}.action.name",
                f"expected one of {', '.join(ACTION_NAMES)}, got {params.get('name')!r}",
            )
        if kind == "commit" and params.get("app") not in app_names:
            raise c.fail(f"{path}.commit.app", f"no application named {params.get('app')!r} in this scenario")
        if kind == "fault" and params.get("name") not in FAULT_NAMES:
            raise c.fail(
                f"{path}.fault.name", f"expected one of {', '.join(FAULT_NAMES)}, got {params.get('name')!r}"
            )
        every = item.get("every")
        events.append(
            Event(
                at=c.number(item["at"], f"{path}.at"),
                every=None if every is None else c.number(every, f"{path}.every", 1e-3),
                kind=kind,
                params=params,
            )
        )

    default_ns = rollouts[0].namespace if rollouts else "default"
    objects: list[Obj] = []
    for i, item in enumerate(c.items(top.get("objects"), "objects")):
        path = f"objects[{i}]"
        item = c.mapping(
            item,
            path,
            {"apiVersion", "kind", "metadata", "spec", "status"},
            {"apiVersion", "kind", "metadata"},
        )
        rt = by_kind(str(item["apiVersion"]), str(item["kind"]))
        if rt is None:
            raise c.fail(path, f"kubesim does not serve {item['kind']} in {item['apiVersion']}")
        meta = item["metadata"]
        if not isinstance(meta, dict) or "name" not in meta:
            raise c.fail(f"{path}.metadata", "expected a mapping with a name")
        c.name(meta["name"], f"{path}.metadata.name")
        if rt.namespaced:
            meta.setdefault("namespace", default_ns)
        objects.append(item)
    load: dict[tuple[str, str], list[tuple[float, float]]] = {}
    hpas = {
        str(o["metadata"]["name"]): str(o["metadata"]["namespace"])
        for o in objects
        if o["kind"] == "HorizontalPodAutoscaler"
    }
    for i, item in enumerate(c.items(top.get("load"), "load")):
        path = f"load[{i}]"
        item = c.mapping(item, path, {"hpa", "at", "pods"}, {"hpa", "at", "pods"})
        if item["hpa"] not in hpas:
            raise c.fail(
                f"{path}.hpa", f"no HorizontalPodAutoscaler {item['hpa']!r} among this scenario's objects"
            )
        key = (hpas[item["hpa"]], str(item["hpa"]))
        load.setdefault(key, []).append(
            (c.number(item["at"], f"{path}.at"), c.number(item["pods"], f"{path}.pods"))
        )
    for points in load.values():
        points.sort()
    writers: list[Writer] = []
    for i, item in enumerate(c.items(top.get("writers"), "writers")):
        path = f"writers[{i}]"
        item = c.mapping(item, path, {"rollout", "object", "every", "manager", "status", "spec"}, {"every"})
        if ("status" in item) == ("spec" in item):
            raise c.fail(
                path, "give exactly one of status or spec (the merge patch the writer keeps applying)"
            )
        manager = c.string(item.get("manager", "argocd-controller"), f"{path}.manager")
        every = c.number(item["every"], f"{path}.every", 0.1)
        if ("rollout" in item) == ("object" in item):
            raise c.fail(path, "give exactly one of rollout or object (what the writer writes)")
        if "object" in item:
            ref = c.mapping(item["object"], f"{path}.object", {"kind", "name", "namespace"}, {"kind", "name"})
            found = next(
                (
                    o
                    for o in objects
                    if o["kind"] == ref["kind"]
                    and o["metadata"]["name"] == ref["name"]
                    and o["metadata"].get("namespace", "")
                    == ref.get("namespace", o["metadata"].get("namespace", ""))
                ),
                None,
            )
            if found is None:
                raise c.fail(
                    f"{path}.object", f"no {ref['kind']} {ref['name']!r} among this scenario's objects"
                )
            rt = by_kind(found["apiVersion"], found["kind"])
            assert rt is not None  # checked with the objects
            writers.append(
                Writer(
                    rollout="",
                    namespace=str(found["metadata"].get("namespace", "")),
                    every=every,
                    manager=manager,
                    status=item.get("status"),
                    spec=item.get("spec"),
                    resource=rt.key,
                    name=str(found["metadata"]["name"]),
                )
            )
            continue
        target = by_name.get(item["rollout"])
        if target is None:
            raise c.fail(f"{path}.rollout", f"no rollout named {item['rollout']!r} in this scenario")
        writers.append(
            Writer(
                rollout=target.name,
                namespace=target.namespace,
                every=every,
                manager=manager,
                status=item.get("status"),
                spec=item.get("spec"),
            )
        )

    fleet = None
    if top.get("fleet") is not None:
        f = c.mapping(top["fleet"], "fleet", {"rollouts", "namespaces", "replicas", "churn_per_second"})
        fleet = Fleet(
            rollouts=c.integer(f.get("rollouts", 100), "fleet.rollouts", 1),
            namespaces=c.integer(f.get("namespaces", 5), "fleet.namespaces", 1),
            replicas=c.integer(f.get("replicas", 1), "fleet.replicas", 1),
            churn_per_second=c.number(f.get("churn_per_second", 1), "fleet.churn_per_second"),
        )
    traffic: list[TrafficProfile] = []
    namespaces = {r.name: r.namespace for r in rollouts}
    for i, item in enumerate(c.items(top.get("traffic"), "traffic")):
        try:
            traffic.append(parse_traffic(item, f"traffic[{i}]", namespaces))
        except TrafficError as error:
            raise c.fail("", str(error)) from error
    from kubesim.flagger import parse_canaries  # here: kubesim.flagger is imported by the builtins

    canaries = parse_canaries(top.get("canaries"), c.fail, ready)
    return Scenario(
        traffic=traffic,
        canaries=canaries,
        name=name,
        description=description,
        pod_ready_seconds=ready,
        analysis_templates=templates,
        metrics=metrics,
        rollouts=rollouts,
        applications=apps,
        events=events,
        writers=writers,
        objects=objects,
        load=load,
        fleet=fleet,
        source=source,
    )
