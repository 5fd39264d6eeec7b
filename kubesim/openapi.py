"""The OpenAPI documents of the kinds kubesim serves, built the way a real API server builds them.

- Custom kinds: from the `openAPIV3Schema` of the CRD installed in the store (upstream's schema, see
  `kubesim/crds/SOURCE`), named like apiextensions-apiserver names them (`io.argoproj.v1alpha1.Rollout`), with
  `metadata` pointing at ObjectMeta and `x-kubernetes-group-version-kind`.
- Core kinds (Namespace, Pod, Service, Event, ReplicaSet, Deployment, Job, Ingress, HorizontalPodAutoscaler):
  generated from the models of the
  official `kubernetes` Python client, which are themselves generated from the Kubernetes OpenAPI document
  (types, descriptions, required fields), under the Kubernetes definition names (`io.k8s.api.core.v1.Pod`).
- v3: `/openapi/v3` lists one document per group-version; each has paths (with the PATCH parameters kubectl's
  query-parameter verifier looks for, `fieldValidation` among them) and `components.schemas`.
- v2: one Swagger 2.0 document with every path and definition, served as JSON.

Non-goals: the protobuf encodings of either document, `x-kubernetes-patch-merge-key` and list-map markers on
core kinds, every operation parameter of a real server (only those kubesim honours are declared).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import re
from typing import Any

from kubesim.resources import ResourceType

Obj = dict[str, Any]
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
REF3 = "#/components/schemas/"
REF2 = "#/definitions/"

# Python client model name -> Kubernetes definition package, for the models that are not core/v1.
_META_MODELS = {
    "ObjectMeta",
    "ListMeta",
    "OwnerReference",
    "ManagedFieldsEntry",
    "LabelSelector",
    "LabelSelectorRequirement",
    "Condition",
    "Status",
    "StatusDetails",
    "StatusCause",
}
_APPS_PREFIXES = ("Deployment", "ReplicaSet", "RollingUpdateDeployment", "DaemonSet", "StatefulSet")
_BATCH_PREFIXES = ("Job", "CronJob", "PodFailurePolicy", "SuccessPolicy", "UncountedTerminatedPods")
_APIEXTENSIONS_PREFIXES = (
    "CustomResource",
    "JSONSchemaProps",
    "ExternalDocumentation",
    "ServiceReference",
    "WebhookC",
    "ValidationRule",
    "SelectableField",
)
_NETWORKING_PREFIXES = ("Ingress", "HTTPIngress", "ServiceBackendPort")
_INT_OR_STRING = {"targetPort", "maxSurge", "maxUnavailable", "port"}

CORE_MODELS = {
    ("", "v1", "Namespace"): "V1Namespace",
    ("", "v1", "Pod"): "V1Pod",
    ("", "v1", "Service"): "V1Service",
    ("", "v1", "Event"): "CoreV1Event",
    ("apps", "v1", "ReplicaSet"): "V1ReplicaSet",
    ("apps", "v1", "Deployment"): "V1Deployment",
    ("batch", "v1", "Job"): "V1Job",
    ("networking.k8s.io", "v1", "Ingress"): "V1Ingress",
    ("autoscaling", "v2", "HorizontalPodAutoscaler"): "V2HorizontalPodAutoscaler",
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"): "V1CustomResourceDefinition",
}


def definition_name(model: str) -> str:
    """`V1PodSpec` -> `io.k8s.api.core.v1.PodSpec`, `V1ObjectMeta` -> `io.k8s.apimachinery…ObjectMeta`."""
    if model.startswith("CoreV1"):
        return "io.k8s.api.core.v1." + model.removeprefix("CoreV1")
    if model.startswith("EventsV1"):
        return "io.k8s.api.events.v1." + model.removeprefix("EventsV1")
    match = re.match(r"^V(\d+(?:alpha\d+|beta\d+)?)", model)
    version = f"v{match.group(1)}" if match else "v1"
    base = model[match.end() :] if match else model
    if base in _META_MODELS:
        return META + base
    if base.startswith(_APPS_PREFIXES):
        return f"io.k8s.api.apps.{version}.{base}"
    if version == "v2":  # the client's only v2 models are autoscaling/v2's
        return f"io.k8s.api.autoscaling.v2.{base}"
    if base.startswith(_NETWORKING_PREFIXES):
        return f"io.k8s.api.networking.{version}.{base}"
    if base.startswith(_BATCH_PREFIXES):
        return f"io.k8s.api.batch.{version}.{base}"
    if base.startswith(_APIEXTENSIONS_PREFIXES):
        return f"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{base}"
    return f"io.k8s.api.core.{version}.{base}"


def _model_schema(model: str, out: dict[str, Obj]) -> None:
    """Add the schema of a Python client model (and every model it uses) to `out`."""
    from kubernetes.client import models  # imported lazily: it is large

    name = definition_name(model)
    if name in out:
        return
    cls = getattr(models, model)
    out[name] = {}  # reserve first: models refer to themselves (JSONSchemaProps)
    doc = (cls.__doc__ or "").strip().split("\n\n")[0].strip()
    fields = getattr(cls, "model_fields", {})
    props: dict[str, Obj] = {}
    required: list[str] = []
    for attr, kind in cls.openapi_types.items():
        json_name = cls.attribute_map[attr]
        prop = _type_schema(kind, json_name, out)
        info = fields.get(attr)
        description = getattr(info, "description", None)
        if description:
            prop = (
                {**prop, "description": description}
                if "$ref" not in prop
                else {
                    "allOf": [prop],
                    "description": description,
                }
            )
        if info is not None and info.is_required():
            required.append(json_name)
        props[json_name] = prop
    schema: Obj = {"type": "object", "properties": props}
    if doc and not doc.startswith("NOTE:"):
        schema["description"] = " ".join(doc.split())
    if required:
        schema["required"] = sorted(required)
    out[name] = schema


def _type_schema(kind: str, json_name: str, out: dict[str, Obj]) -> Obj:
    if kind == "str":
        return {"type": "string"}
    if kind in ("bytes", "bytearray"):
        return {"type": "string", "format": "byte"}
    if kind == "int":
        return {"type": "integer", "format": "int64"}
    if kind == "float":
        return {"type": "number", "format": "double"}
    if kind == "bool":
        return {"type": "boolean"}
    if kind in ("datetime", "date"):
        return {"type": "string", "format": "date-time"}
    if kind == "object":
        if json_name in _INT_OR_STRING:
            return {"x-kubernetes-int-or-string": True}
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if kind.startswith(("list[", "List[")):
        return {"type": "array", "items": _type_schema(kind[5:-1], "", out)}
    if kind.startswith(("dict(", "Dict[")):
        inner = kind[5:-1].split(",", 1)[1].strip()
        return {"type": "object", "additionalProperties": _type_schema(inner, "", out)}
    from kubernetes.client import models

    if not hasattr(models, kind):  # a type this generator does not know: accept anything
        return {}
    _model_schema(kind, out)
    return {"$ref": REF3 + definition_name(kind)}


@functools.cache
def core_components() -> dict[str, Obj]:
    """Schemas of the core kinds kubesim serves and everything they refer to (built once per process)."""
    out: dict[str, Obj] = {}
    for (group, version, kind), model in CORE_MODELS.items():
        _model_schema(model, out)
        out[definition_name(model)]["x-kubernetes-group-version-kind"] = [
            {"group": group, "kind": kind, "version": version}
        ]
    for name in ("V1ListMeta", "V1Status"):
        _model_schema(name, out)
    return out


def _reversed_group(group: str) -> str:
    return ".".join(reversed(group.split(".")))


def custom_definition(rt: ResourceType) -> str:
    return f"{_reversed_group(rt.group)}.{rt.version}.{rt.kind}"


def custom_schema(rt: ResourceType, crd: Obj) -> Obj:
    """The component a real server publishes for a CRD version's schema."""
    schema: Obj = {"type": "object"}
    for version in crd.get("spec", {}).get("versions") or []:
        if version.get("name") == rt.version:
            schema = copy.deepcopy((version.get("schema") or {}).get("openAPIV3Schema") or schema)
    props = dict(schema.get("properties") or {})
    open_schema = schema.get("x-kubernetes-preserve-unknown-fields") and not props
    props["apiVersion"] = {"type": "string", "description": _DESCRIPTIONS["apiVersion"]}
    props["kind"] = {"type": "string", "description": _DESCRIPTIONS["kind"]}
    props["metadata"] = {
        "allOf": [{"$ref": REF3 + META + "ObjectMeta"}],
        "description": _DESCRIPTIONS["metadata"],
    }
    schema["properties"] = props
    if open_schema:
        schema["x-kubernetes-preserve-unknown-fields"] = True
    schema["x-kubernetes-group-version-kind"] = [{"group": rt.group, "kind": rt.kind, "version": rt.version}]
    return schema


_DESCRIPTIONS = {
    "apiVersion": "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject unrecognized values. "
    "More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
    "kind": "Kind is a string value representing the REST resource this object represents. Servers may infer "
    "this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
    "metadata": "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
}


def _list_schema(rt: ResourceType, item_ref: str) -> Obj:
    return {
        "type": "object",
        "description": f"{rt.kind}List is a list of {rt.kind}",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string", "description": _DESCRIPTIONS["apiVersion"]},
            "kind": {"type": "string", "description": _DESCRIPTIONS["kind"]},
            "metadata": {"allOf": [{"$ref": REF3 + META + "ListMeta"}]},
            "items": {"type": "array", "items": {"$ref": REF3 + item_ref}},
        },
        "x-kubernetes-group-version-kind": [
            {"group": rt.group, "kind": f"{rt.kind}List", "version": rt.version}
        ],
    }


def _collect_refs(value: Any, components: dict[str, Obj], into: dict[str, Obj]) -> None:
    """Copy into `into` every component `value` refers to, transitively."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                name = ref.rsplit("/", 1)[-1]
                if name not in into and name in components:
                    into[name] = components[name]
                    stack.append(components[name])
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, dict | list))


def kind_definition(rt: ResourceType, crds: dict[str, Obj]) -> str:
    """The component name of `rt`'s schema."""
    if rt.custom:
        return custom_definition(rt)
    model = CORE_MODELS.get((rt.group, rt.version, rt.kind))
    return definition_name(model) if model else custom_definition(rt)


def components_for(served: list[ResourceType], crds: dict[str, Obj]) -> dict[str, Obj]:
    """Every schema for the served kinds (and their lists), with what they refer to, by definition name."""
    core = core_components()
    wanted: dict[str, Obj] = {}
    for rt in served:
        if rt.custom:
            crd = crds.get(rt.crd_name) or {}
            name = custom_definition(rt)
            wanted[name] = custom_schema(rt, crd)
        else:
            name = kind_definition(rt, crds)
            if name not in core:
                continue
            wanted[name] = core[name]
        wanted[f"{name}List"] = _list_schema(rt, name)
    result = dict(wanted)
    _collect_refs(list(wanted.values()), core, result)
    return result


# ---- paths -------------------------------------------------------------------------------------------------


def _param(name: str, description: str, kind: str = "string", where: str = "query") -> Obj:
    return {
        "name": name,
        "in": where,
        "description": description,
        "schema": {"type": kind},
        "required": where == "path",
    }


_FIELD_MANAGER = _param(
    "fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."
)
_FIELD_VALIDATION = _param(
    "fieldValidation",
    "fieldValidation instructs the server on how to handle objects in the request containing unknown or "
    "duplicate fields. Valid values are: Ignore, Warn (the default), Strict.",
)
_FORCE = _param("force", 'Force is going to "force" Apply requests.', "boolean")
_LIST_PARAMS = [
    _param("labelSelector", "A selector to restrict the list of returned objects by their labels."),
    _param("fieldSelector", "A selector to restrict the list of returned objects by their fields."),
    _param("limit", "limit is a maximum number of responses to return for a list call.", "integer"),
    _param("continue", "The continue option should be set when retrieving more results from the server."),
    _param(
        "resourceVersion",
        "resourceVersion sets a constraint on what resource versions a request may be served from.",
    ),
    _param("watch", "Watch for changes to the described resources.", "boolean"),
    _param(
        "allowWatchBookmarks", 'allowWatchBookmarks requests watch events with type "BOOKMARK".', "boolean"
    ),
    _param("timeoutSeconds", "Timeout for the list/watch call.", "integer"),
]
_PATCH_TYPES = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
]


def _op(
    rt: ResourceType, action: str, verb: str, ref: str, params: list[Obj], body: bool = False, sub: str = ""
) -> Obj:
    what = f"{rt.kind}{' ' + sub if sub else ''}"
    op: Obj = {
        "tags": [rt.group.replace(".", "") + "_" + rt.version if rt.group else "core_v1"],
        "description": f"{action} {what}",
        "operationId": f"{verb}{rt.kind}{sub.title()}",
        "parameters": params,
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": REF3 + ref}}}}
        },
        "x-kubernetes-action": verb,
        "x-kubernetes-group-version-kind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
    }
    if body:
        types = _PATCH_TYPES if verb == "patch" else ["application/json", "application/yaml"]
        if verb == "patch" and rt.custom:
            types = [t for t in types if "strategic" not in t]
        schema: Obj = {"type": "object"} if verb == "patch" else {"$ref": REF3 + ref}
        op["requestBody"] = {"content": {t: {"schema": schema} for t in types}, "required": True}
    return op


def paths_for(rt: ResourceType, definition: str) -> dict[str, Obj]:
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    ns = "/namespaces/{namespace}" if rt.namespaced else ""
    ns_params = [_param("namespace", "object name and auth scope", where="path")] if rt.namespaced else []
    name_param = _param("name", f"name of the {rt.kind}", where="path")
    write = [_FIELD_MANAGER, _FIELD_VALIDATION]
    collection: Obj = {
        "get": _op(rt, "list or watch objects of kind", "list", definition + "List", _LIST_PARAMS),
        "parameters": ns_params,
    }
    if "create" in rt.verbs:
        collection["post"] = _op(rt, "create a", "post", definition, write, body=True)
    item: Obj = {
        "get": _op(rt, "read the specified", "get", definition, []),
        "parameters": [name_param, *ns_params],
    }
    if "update" in rt.verbs:
        item["put"] = _op(rt, "replace the specified", "put", definition, write, body=True)
        item["patch"] = _op(
            rt, "partially update the specified", "patch", definition, [*write, _FORCE], body=True
        )
        item["delete"] = _op(rt, "delete a", "delete", META + "Status", [])
    paths = {f"{prefix}{ns}/{rt.plural}": collection, f"{prefix}{ns}/{rt.plural}/{{name}}": item}
    if rt.namespaced:
        paths[f"{prefix}/{rt.plural}"] = {
            "get": _op(rt, "list or watch objects of kind", "list", definition + "List", _LIST_PARAMS)
        }
    if rt.status_subresource:
        status: Obj = {
            "get": _op(rt, "read status of the specified", "get", definition, [], sub="status"),
            "parameters": [name_param, *ns_params],
        }
        if "update" in rt.verbs:
            status["put"] = _op(
                rt, "replace status of the specified", "put", definition, write, body=True, sub="status"
            )
            status["patch"] = _op(
                rt,
                "partially update status of the specified",
                "patch",
                definition,
                [*write, _FORCE],
                body=True,
                sub="status",
            )
        paths[f"{prefix}{ns}/{rt.plural}/{{name}}/status"] = status
    return paths


# ---- documents ---------------------------------------------------------------------------------------------


def group_version_path(rt: ResourceType) -> str:
    return f"apis/{rt.group}/{rt.version}" if rt.group else f"api/{rt.version}"


def v3_document(served: list[ResourceType], crds: dict[str, Obj], gv_path: str) -> Obj | None:
    """The OpenAPI 3.0 document of one group-version (`api/v1`, `apis/argoproj.io/v1alpha1`), or None."""
    kinds = [rt for rt in served if group_version_path(rt) == gv_path]
    if not kinds:
        return None
    components = components_for(kinds, crds)
    paths: dict[str, Obj] = {}
    for rt in kinds:
        paths.update(paths_for(rt, kind_definition(rt, crds)))
    _collect_refs(paths, core_components(), components)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": components},
    }


def v3_root(served: list[ResourceType], crds: dict[str, Obj]) -> Obj:
    """`/openapi/v3`: one entry per group-version, with a hash that changes when its document does."""
    paths: dict[str, Obj] = {}
    for gv in sorted({group_version_path(rt) for rt in served}):
        document = v3_document(served, crds, gv)
        digest = hashlib.sha512(json.dumps(document, sort_keys=True).encode()).hexdigest()[:128].upper()
        paths[gv] = {"serverRelativeURL": f"/openapi/v3/{gv}?hash={digest}"}
    return {"paths": paths}


def v2_document(served: list[ResourceType], crds: dict[str, Obj]) -> Obj:
    """The Swagger 2.0 document: every path and definition, refs rewritten to `#/definitions/`."""
    definitions = components_for(served, crds)
    paths: dict[str, Obj] = {}
    for rt in served:
        paths.update(paths_for(rt, kind_definition(rt, crds)))
    _collect_refs(paths, core_components(), definitions)
    document = {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": _v2_paths(paths),
        "definitions": definitions,
    }
    return dict(json.loads(json.dumps(document).replace(f'"{REF3}', f'"{REF2}')))


def _v2_paths(paths: dict[str, Obj]) -> dict[str, Obj]:
    """Swagger 2.0 puts parameter types on the parameter and bodies among the parameters."""
    out: dict[str, Obj] = {}
    for path, item in paths.items():
        new_item: Obj = {}
        for key, op in item.items():
            if key == "parameters":
                new_item[key] = [_v2_param(p) for p in op]
                continue
            new_op = {k: v for k, v in op.items() if k not in ("requestBody", "responses", "parameters")}
            params = [_v2_param(p) for p in op.get("parameters", [])]
            if "requestBody" in op:
                content = op["requestBody"]["content"]
                params.append(
                    {
                        "name": "body",
                        "in": "body",
                        "required": True,
                        "schema": next(iter(content.values()))["schema"],
                    }
                )
                new_op["consumes"] = list(content)
            new_op["parameters"] = params
            new_op["produces"] = ["application/json", "application/yaml"]
            new_op["responses"] = {
                "200": {
                    "description": "OK",
                    "schema": op["responses"]["200"]["content"]["application/json"]["schema"],
                }
            }
            new_item[key] = new_op
        out[path] = new_item
    return out


def _v2_param(param: Obj) -> Obj:
    out = {k: v for k, v in param.items() if k != "schema"}
    out["type"] = param["schema"]["type"]
    out["uniqueItems"] = True
    return out
