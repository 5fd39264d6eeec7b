"""The resource types kubesim serves, described once for the store, discovery and tables.

Each `ResourceType` says what a real API server would advertise for the kind (group, version, names, scope,
verbs, short names, categories, subresources, printer columns), mirroring the upstream CRDs for the Argo
kinds. The CRDs kubesim installs carry the upstream schemas copied into `kubesim/crds/` (see its SOURCE);
kinds without a copy get an open schema. Non-goals: conversion between versions — one served version per kind.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

WRITE_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
READ_VERBS = ("get", "list", "watch")


@dataclass(frozen=True)
class Column:
    """One printer column: `json_path` is a simple dotted path like `.status.phase`."""

    name: str
    type: str
    json_path: str
    description: str = ""
    priority: int = 0
    format: str = ""


@dataclass(frozen=True)
class ScaleSpec:
    """Where the `scale` subresource reads and writes its fields on the main object."""

    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    selector: str = ".status.selector"


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = WRITE_VERBS
    status_subresource: bool = False
    scale: ScaleSpec | None = None
    has_generation: bool = True
    # Served only while its CustomResourceDefinition exists in the store.
    custom: bool = False
    columns: tuple[Column, ...] = field(default=())

    @property
    def key(self) -> str:
        """The store's name for it: the plural, prefixed by the group unless core."""
        return f"{self.group}/{self.plural}" if self.group else self.plural

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """How real servers name the resource in error messages: `rollouts.argoproj.io`, `pods`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"


AGE = Column("Age", "date", ".metadata.creationTimestamp", "Time since resource was created")

RESOURCES: tuple[ResourceType, ...] = (
    ResourceType(
        "",
        "v1",
        "namespaces",
        "namespace",
        "Namespace",
        namespaced=False,
        short_names=("ns",),
        has_generation=False,
        status_subresource=True,
        columns=(Column("Status", "string", ".status.phase"), AGE),
    ),
    ResourceType(
        "",
        "v1",
        "pods",
        "pod",
        "Pod",
        short_names=("po",),
        categories=("all",),
        status_subresource=True,
        has_generation=False,
        columns=(Column("Status", "string", ".status.phase"), Column("IP", "string", ".status.podIP"), AGE),
    ),
    ResourceType(
        "",
        "v1",
        "services",
        "service",
        "Service",
        short_names=("svc",),
        categories=("all",),
        status_subresource=True,
        has_generation=False,
        columns=(
            Column("Type", "string", ".spec.type"),
            Column("Cluster-IP", "string", ".spec.clusterIP"),
            AGE,
        ),
    ),
    ResourceType(
        "",
        "v1",
        "events",
        "event",
        "Event",
        short_names=("ev",),
        has_generation=False,
        columns=(
            Column("Type", "string", ".type"),
            Column("Reason", "string", ".reason"),
            Column("Message", "string", ".message"),
            AGE,
        ),
    ),
    ResourceType(
        "apps",
        "v1",
        "replicasets",
        "replicaset",
        "ReplicaSet",
        short_names=("rs",),
        categories=("all",),
        status_subresource=True,
        scale=ScaleSpec(selector=".spec.selector"),
        columns=(
            Column("Desired", "integer", ".spec.replicas"),
            Column("Current", "integer", ".status.replicas"),
            Column("Ready", "integer", ".status.readyReplicas"),
            AGE,
        ),
    ),
    ResourceType(
        "apps",
        "v1",
        "deployments",
        "deployment",
        "Deployment",
        short_names=("deploy",),
        categories=("all",),
        status_subresource=True,
        scale=ScaleSpec(selector=".spec.selector"),
        columns=(
            Column("Ready", "integer", ".status.readyReplicas"),
            Column("Up-to-date", "integer", ".status.updatedReplicas"),
            Column("Available", "integer", ".status.availableReplicas"),
            AGE,
        ),
    ),
    ResourceType(
        "batch",
        "v1",
        "jobs",
        "job",
        "Job",
        categories=("all",),
        status_subresource=True,
        columns=(Column("Succeeded", "integer", ".status.succeeded"), AGE),
    ),
    # The NGINX router's kind; the server's table columns are computed, these approximate them.
    ResourceType(
        "networking.k8s.io",
        "v1",
        "ingresses",
        "ingress",
        "Ingress",
        short_names=("ing",),
        status_subresource=True,
        columns=(Column("Class", "string", ".spec.ingressClassName"), AGE),
    ),
    ResourceType(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "horizontalpodautoscaler",
        "HorizontalPodAutoscaler",
        short_names=("hpa",),
        categories=("all",),
        status_subresource=True,
        columns=(
            Column("Reference", "string", ".spec.scaleTargetRef.name"),
            Column("MinPods", "integer", ".spec.minReplicas"),
            Column("MaxPods", "integer", ".spec.maxReplicas"),
            Column("Replicas", "integer", ".status.currentReplicas"),
            AGE,
        ),
    ),
    # As in the upstream CRDs: only Rollout has status (and scale) subresources.
    ResourceType(
        "argoproj.io",
        "v1alpha1",
        "rollouts",
        "rollout",
        "Rollout",
        short_names=("ro",),
        custom=True,
        status_subresource=True,
        scale=ScaleSpec(status_replicas=".status.HPAReplicas", selector=".status.selector"),
        columns=(
            Column("Desired", "integer", ".spec.replicas", "Number of desired pods"),
            Column(
                "Current",
                "integer",
                ".status.replicas",
                "Total number of non-terminated pods targeted by this rollout",
            ),
            Column(
                "Up-to-date",
                "integer",
                ".status.updatedReplicas",
                "Total number of non-terminated pods targeted by this rollout that have the "
                "desired template spec",
            ),
            Column(
                "Available",
                "integer",
                ".status.availableReplicas",
                "Total number of available pods (ready for at least minReadySeconds) targeted "
                "by this rollout",
            ),
            AGE,
        ),
    ),
    ResourceType(
        "argoproj.io",
        "v1alpha1",
        "analysisruns",
        "analysisrun",
        "AnalysisRun",
        short_names=("ar",),
        custom=True,
        columns=(Column("Status", "string", ".status.phase", "AnalysisRun status"), AGE),
    ),
    ResourceType(
        "argoproj.io",
        "v1alpha1",
        "analysistemplates",
        "analysistemplate",
        "AnalysisTemplate",
        short_names=("at",),
        custom=True,
        columns=(AGE,),
    ),
    ResourceType(
        "argoproj.io",
        "v1alpha1",
        "clusteranalysistemplates",
        "clusteranalysistemplate",
        "ClusterAnalysisTemplate",
        namespaced=False,
        short_names=("cat",),
        custom=True,
        columns=(AGE,),
    ),
    ResourceType(
        "argoproj.io",
        "v1alpha1",
        "experiments",
        "experiment",
        "Experiment",
        short_names=("exp",),
        custom=True,
        columns=(Column("Status", "string", ".status.phase", "Experiment status"), AGE),
    ),
    ResourceType(
        "argoproj.io",
        "v1alpha1",
        "applications",
        "application",
        "Application",
        short_names=("app", "apps"),
        custom=True,
        columns=(
            Column("Sync Status", "string", ".status.sync.status"),
            Column("Health Status", "string", ".status.health.status"),
            Column("Revision", "string", ".status.sync.revision", priority=10),
            Column("Project", "string", ".spec.project", priority=10),
        ),
    ),
    # Flagger's Canary as in its CRD (artifacts/flagger/crd.yaml): status subresource, no AGE column.
    ResourceType(
        "flagger.app",
        "v1beta1",
        "canaries",
        "canary",
        "Canary",
        categories=("all",),
        custom=True,
        status_subresource=True,
        columns=(
            Column("Status", "string", ".status.phase"),
            Column("Weight", "string", ".status.canaryWeight"),
            Column("Suspended", "boolean", ".spec.suspend", priority=1),
            Column("FailedChecks", "string", ".status.failedChecks", priority=1),
            Column("Interval", "string", ".spec.analysis.interval", priority=1),
            Column("Mirror", "boolean", ".spec.analysis.mirror", priority=1),
            Column("StepWeight", "string", ".spec.analysis.stepWeight", priority=1),
            Column("StepWeights", "string", ".spec.analysis.stepWeights", priority=1),
            Column("MaxWeight", "string", ".spec.analysis.maxWeight", priority=1),
            Column("LastTransitionTime", "string", ".status.lastTransitionTime"),
        ),
    ),
    # The Gateway API route Flagger's gatewayapi provider and the Argo Rollouts gatewayAPI plugin shift
    # traffic with (schema: the standard-channel CRD).
    ResourceType(
        "gateway.networking.k8s.io",
        "v1",
        "httproutes",
        "httproute",
        "HTTPRoute",
        categories=("gateway-api",),
        custom=True,
        status_subresource=True,
        columns=(Column("Hostnames", "string", ".spec.hostnames"), AGE),
    ),
    # Istio's routing kinds, served at the version argo-rollouts' istio router writes (v1beta1 by default).
    ResourceType(
        "networking.istio.io",
        "v1beta1",
        "virtualservices",
        "virtualservice",
        "VirtualService",
        short_names=("vs",),
        categories=("istio-io", "networking-istio-io"),
        custom=True,
        status_subresource=True,
        columns=(
            Column(
                "Gateways",
                "string",
                ".spec.gateways",
                "The names of gateways and sidecars that should apply these routes",
            ),
            Column("Hosts", "string", ".spec.hosts", "The destination hosts to which traffic is being sent"),
            AGE,
        ),
    ),
    ResourceType(
        "networking.istio.io",
        "v1beta1",
        "destinationrules",
        "destinationrule",
        "DestinationRule",
        short_names=("dr",),
        categories=("istio-io", "networking-istio-io"),
        custom=True,
        status_subresource=True,
        columns=(
            Column("Host", "string", ".spec.host", "The name of a service from the service registry"),
            AGE,
        ),
    ),
    # SMI's TrafficSplit at the version the rollouts controller is told to write (no status, no Age column).
    ResourceType(
        "split.smi-spec.io",
        "v1alpha3",
        "trafficsplits",
        "trafficsplit",
        "TrafficSplit",
        short_names=("ts",),
        custom=True,
        columns=(Column("Service", "string", ".spec.service", "The apex service of this split."),),
    ),
    ResourceType(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "customresourcedefinition",
        "CustomResourceDefinition",
        namespaced=False,
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        verbs=READ_VERBS,
        status_subresource=True,
        columns=(Column("Created At", "date", ".metadata.creationTimestamp"),),
    ),
)

BY_KEY: dict[str, ResourceType] = {rt.key: rt for rt in RESOURCES}
CRD_KEY = "apiextensions.k8s.io/customresourcedefinitions"


def resource_type(key: str) -> ResourceType | None:
    return BY_KEY.get(key)


def by_kind(api_version: str, kind: str) -> ResourceType | None:
    """The served type of a manifest's `apiVersion` and `kind`, or None."""
    return next((rt for rt in RESOURCES if rt.api_version == api_version and rt.kind == kind), None)


def lookup(group: str, version: str, plural: str) -> ResourceType | None:
    rt = BY_KEY.get(f"{group}/{plural}" if group else plural)
    return rt if rt is not None and rt.version == version else None


def json_path_get(obj: Any, path: str) -> Any:
    """Value at a simple dotted path (`.status.phase`), or None when any step is missing."""
    for part in path.strip(".").split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


CRD_DIR = Path(__file__).parent / "crds"
OPEN_SCHEMA: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


@functools.cache
def upstream_crds() -> dict[str, dict[str, Any]]:
    """The upstream CRDs copied into `kubesim/crds/`, by name (read once per process; never mutate)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(CRD_DIR.rglob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=loader):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                found[doc["metadata"]["name"]] = doc
    return found


def upstream_schema(rt: ResourceType) -> dict[str, Any]:
    """The openAPIV3Schema of `rt`'s served version in its upstream CRD, or an open schema without one."""
    crd = upstream_crds().get(rt.crd_name)
    for version in (crd or {}).get("spec", {}).get("versions") or []:
        if version.get("name") == rt.version:
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if isinstance(schema, dict):
                return schema
    return OPEN_SCHEMA


def crd_object(rt: ResourceType) -> dict[str, Any]:
    """The CustomResourceDefinition installed for `rt`, with the upstream schema when kubesim has a copy."""
    names: dict[str, Any] = {
        "kind": rt.kind,
        "listKind": f"{rt.kind}List",
        "plural": rt.plural,
        "singular": rt.singular,
    }
    if rt.short_names:
        names["shortNames"] = list(rt.short_names)
    if rt.categories:
        names["categories"] = list(rt.categories)
    subresources: dict[str, Any] = {}
    if rt.scale:
        subresources["scale"] = {
            "labelSelectorPath": rt.scale.selector,
            "specReplicasPath": rt.scale.spec_replicas,
            "statusReplicasPath": rt.scale.status_replicas,
        }
    if rt.status_subresource:
        subresources["status"] = {}
    columns = []
    for c in rt.columns:
        col: dict[str, Any] = {"jsonPath": c.json_path, "name": c.name, "type": c.type}
        if c.description:
            col["description"] = c.description
        if c.priority:
            col["priority"] = c.priority
        columns.append(col)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": rt.crd_name},
        "spec": {
            "group": rt.group,
            "names": names,
            "scope": "Namespaced" if rt.namespaced else "Cluster",
            "versions": [
                {
                    "name": rt.version,
                    "served": True,
                    "storage": True,
                    "additionalPrinterColumns": columns,
                    "schema": {"openAPIV3Schema": upstream_schema(rt)},
                    "subresources": subresources,
                }
            ],
        },
        "status": {
            "acceptedNames": names,
            "conditions": [
                {
                    "type": "NamesAccepted",
                    "status": "True",
                    "reason": "NoConflicts",
                    "message": "no conflicts found",
                },
                {
                    "type": "Established",
                    "status": "True",
                    "reason": "InitialNamesAccepted",
                    "message": "the initial names have been accepted",
                },
            ],
            "storedVersions": [rt.version],
        },
    }
