"""kubesim's Kubernetes API server over HTTP (aiohttp), in front of a `Store`.

Serves what the official `kubernetes` client (sync and `kubernetes.aio`) and `kubectl` 1.32 need: discovery
(`/version`, `/api`, `/apis`, per group/version resource lists), OpenAPI v2/v3 (`kubesim.openapi`),
list/get/create/update/patch/delete and server-side apply on the kinds in `kubesim.resources` (schema and
`fieldValidation` checks, `dryRun=All`), the `status` and `scale` subresources, paginated lists served from
a snapshot, watches (newline-delimited JSON events streamed in chunks, with bookmarks, timeouts and 410
Gone), `Table` output for kubectl, `Status` error bodies, bearer-token authentication and impersonation
headers. Request bodies are JSON, YAML, or the protobuf kubectl's typed `create` commands send
(`kubesim.protobuf`); anything else is 415. Admin endpoints under `/kubesim/` inject faults and expose the
audit log.

Each store event is encoded to JSON once and fanned out to every matching watch. Non-goals: protobuf
responses (JSON is answered whatever `Accept` says), aggregated discovery, RBAC. See kubesim/README.md for
the known differences from a real API server.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
import yaml
from aiohttp import web

from kubesim import openapi, podlogs, protobuf, validation
from kubesim.faults import FaultError, Faults
from kubesim.kubeconfig import self_signed_certificate, server_ssl_context
from kubesim.resources import CRD_KEY, RESOURCES, Column, ResourceType, json_path_get, lookup
from kubesim.store import (
    BadRequest,
    Check,
    FieldRequirement,
    Gone,
    MethodNotAllowed,
    NotFound,
    Obj,
    Requirement,
    Store,
    StoreError,
    fields_match,
    invalid,
    labels_match,
    parse_field_selector,
    parse_label_selector,
)

log = logging.getLogger("kubesim.server")

KUBERNETES_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-kubesim",
    "gitCommit": "kubesim",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.23.4",
    "compiler": "gc",
    "platform": "linux/amd64",
}
ADMIN_USER = "kubesim-admin"
ADMIN_GROUPS = ("system:masters", "system:authenticated")
DEFAULT_WATCH_TIMEOUT = 1800.0  # real servers pick 30-60 minutes when the client sets no timeoutSeconds
MAX_PENDING = 50_000  # events queued for one watch before it is closed as unresponsive, like real servers
PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
}
CUSTOM_PATCH_TYPES = "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"


class HTTPStatusError(StoreError):
    """An error with an arbitrary status code (401, 403, 415, 500…)."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason = code, reason


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON. orjson (a 10,000-rollout list is ~150 MB of it, and every watch event is
    encoded), else the standard library for what orjson refuses — integers beyond 64 bits, non-string
    keys, nesting deeper than 254 — so that such a value is encoded (or rejected) as it always was.
    Datetimes and dataclasses are left to the standard library too, which rejects them: a Kubernetes
    object holds neither. (A NaN, which no API server can hold, becomes null rather than invalid JSON.)"""
    try:
        return orjson.dumps(value, option=_ORJSON_STRICT)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


_ORJSON_STRICT = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def status_response(error: StoreError) -> web.Response:
    return web.Response(status=error.code, body=dumps(error.status()), content_type="application/json")


def json_response(value: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=dumps(value), content_type="application/json")


# ---- tables (kubectl's default output) -------------------------------------------------------------------


def human_duration(seconds: float) -> str:
    """Kubernetes' duration.HumanDuration, as in the AGE column."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    if h < 24 * 365 * 8:
        return f"{h // (24 * 365)}y{(h // 24) % 365}d"
    return f"{h // (24 * 365)}y"


NAME_COLUMN = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "priority": 0,
    "description": "Name must be unique within a namespace.",
}


def column_definitions(rt: ResourceType) -> list[Obj]:
    cols = [NAME_COLUMN]
    for c in rt.columns:
        cols.append(
            {
                "name": c.name,
                "type": c.type,
                "format": c.format,
                "description": c.description,
                "priority": c.priority,
            }
        )
    return cols


def _cell(obj: Obj, column: Column, now: datetime) -> Any:
    value = json_path_get(obj, column.json_path)
    if column.type == "date" and isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        return human_duration((now - moment).total_seconds())
    return value


def table_row(rt: ResourceType, obj: Obj, include: str, now: datetime) -> Obj:
    row: Obj = {"cells": [obj["metadata"]["name"], *(_cell(obj, c, now) for c in rt.columns)]}
    if include == "Object":
        row["object"] = obj
    elif include != "None":
        row["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj["metadata"],
        }
    return row


def table(
    rt: ResourceType, objs: list[Obj], include: str, now: datetime, meta: Obj, headers: bool = True
) -> Obj:
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": column_definitions(rt) if headers else [],
        "rows": [table_row(rt, o, include, now) for o in objs],
    }


# ---- watches ---------------------------------------------------------------------------------------------

_CLOSE = object()


@dataclass(eq=False)
class Watcher:
    rt: ResourceType
    namespace: str | None
    labels: list[Requirement]
    fields: list[FieldRequirement]
    table_include: str | None  # None: JSON events; else Table events with this includeObject
    items: deque[Any] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False
    sent_headers: bool = False

    def matches(self, obj: Obj) -> bool:
        if self.namespace and obj["metadata"].get("namespace") != self.namespace:
            return False
        if self.labels and not labels_match(obj["metadata"].get("labels") or {}, self.labels):
            return False
        return not self.fields or fields_match(obj, self.fields)

    def classify(self, event_type: str, obj: Obj, old: Obj | None) -> str | None:
        """The event this watch sees: objects moving in or out of its selectors are ADDED or DELETED."""
        if event_type == "DELETED":
            return "DELETED" if self.matches(old or obj) else None
        now_matches = self.matches(obj)
        if event_type == "ADDED" or old is None:
            return "ADDED" if now_matches else None
        before = self.matches(old)
        if now_matches:
            return "MODIFIED" if before else "ADDED"
        return "DELETED" if before else None

    def push(self, item: Any) -> None:
        if self.closed:
            return
        if len(self.items) >= MAX_PENDING:
            self.close()
            return
        self.items.append(item)
        self.wake.set()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.items.append(_CLOSE)
            self.wake.set()


class WatchHub:
    """Every open watch, indexed by resource; receives store events and fans them out."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.by_resource: dict[str, set[Watcher]] = {}
        self._detach = store.add_listener(self._on_event)

    def add(self, watcher: Watcher) -> None:
        self.by_resource.setdefault(watcher.rt.key, set()).add(watcher)

    def remove(self, watcher: Watcher) -> None:
        self.by_resource.get(watcher.rt.key, set()).discard(watcher)

    def count(self) -> int:
        return sum(len(ws) for ws in self.by_resource.values())

    def drop_all(self) -> int:
        watchers = [w for ws in self.by_resource.values() for w in ws]
        for w in watchers:
            w.close()
        self.by_resource.clear()
        return len(watchers)

    def close(self) -> None:
        self._detach()
        self.drop_all()

    def _on_event(self, event_type: str, resource: str, obj: Obj, old: Obj | None) -> None:
        watchers = self.by_resource.get(resource)
        if not watchers:
            return
        encoded: dict[str, bytes] = {}
        for w in list(watchers):
            seen = w.classify(event_type, obj, old)
            if seen is None:
                continue
            if w.table_include is not None:
                w.push((seen, obj))
                continue
            data = encoded.get(seen)
            if data is None:
                data = encoded[seen] = b'{"type":"' + seen.encode() + b'","object":' + dumps(obj) + b"}\n"
            w.push(data)


# ---- the server ------------------------------------------------------------------------------------------


@dataclass
class RunningServer:
    url: str
    port: int
    runner: web.AppRunner
    hub: WatchHub
    detach_faults: Callable[[], None]
    ca_pem: bytes | None = None  # the certificate clients must trust (None when serving plain HTTP)

    async def close(self) -> None:
        self.detach_faults()
        self.hub.close()
        await self.runner.cleanup()


@dataclass
class Request:
    """What a resource request addresses."""

    rt: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None


class ApiServer:
    def __init__(self, store: Store, *, token: str, faults: Faults, bookmark_interval: float) -> None:
        self.store = store
        self.token = token
        self.faults = faults
        self.bookmark_interval = bookmark_interval
        self.hub = WatchHub(store)
        self.address = "127.0.0.1:0"
        self._openapi_cache: dict[str, bytes] = {}
        self._openapi_key: tuple[Any, ...] = ()
        self._schemas: dict[str, tuple[Obj, dict[str, Obj]]] = {}
        self._schema_key: tuple[Any, ...] = ()

    # ---- entry point -------------------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            path = request.path.rstrip("/") or "/"
            user, groups = self._authenticate(request, path)
            if path.startswith("/kubesim/"):
                return await self._admin(request, path)
            code = self.faults.take_failure()
            if code is not None:
                raise HTTPStatusError(
                    code,
                    "InternalError" if code == 500 else "ServiceUnavailable",
                    f"kubesim injected fault: this request fails with {code}",
                )
            while (wait := self.faults.hang_remaining()) > 0:
                await asyncio.sleep(wait)
            return await self._route(request, path, user, groups)
        except StoreError as error:
            return status_response(error)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.exception("kubesim: internal error on %s %s", request.method, request.path_qs)
            return status_response(HTTPStatusError(500, "InternalError", f"kubesim internal error: {error}"))

    def _authenticate(self, request: web.Request, path: str) -> tuple[str, list[str]]:
        auth = request.headers.get("Authorization", "")
        if auth:
            scheme, _, token = auth.partition(" ")
            if scheme.lower() != "bearer" or token.strip() != self.token:
                raise HTTPStatusError(401, "Unauthorized", "Unauthorized")
        elif path in ("/version", "/healthz", "/livez", "/readyz"):
            return "system:anonymous", ["system:unauthenticated"]
        else:
            raise HTTPStatusError(
                403,
                "Forbidden",
                f'forbidden: User "system:anonymous" cannot {request.method.lower()} path "{path}"',
            )
        impersonated = request.headers.get("Impersonate-User")
        groups = request.headers.getall("Impersonate-Group", [])
        if impersonated:
            return impersonated, list(groups)
        if groups:
            raise HTTPStatusError(
                500,
                "InternalError",
                "requested ["
                + ", ".join(f"{{Group {g}}}" for g in groups)
                + "] without impersonating a user",
            )
        return ADMIN_USER, list(ADMIN_GROUPS)

    async def _route(
        self, request: web.Request, path: str, user: str, groups: list[str]
    ) -> web.StreamResponse:
        if path == "/version":
            return json_response(KUBERNETES_VERSION)
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok")
        if path == "/api":
            return json_response(
                {
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": self.address}
                    ],
                }
            )
        if path == "/apis":
            return json_response(self._group_list())
        if path == "/openapi/v2" or path.startswith("/openapi/v3"):
            return self._openapi(request, path)
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        elif parts[0] == "apis" and len(parts) == 2:
            return json_response(self._group(parts[1]))
        else:
            raise NotFound("the server could not find the requested resource")
        if not rest:
            return json_response(self._resource_list(group, version))
        target = self._target(group, version, rest)
        return await self._resource(request, target, user, groups)

    # ---- discovery ---------------------------------------------------------------------------------------

    def _openapi_inputs(self) -> tuple[list[ResourceType], dict[str, Obj], tuple[Any, ...]]:
        served = self.store.served()
        crds = {o["metadata"]["name"]: o for o in self.store.objects(CRD_KEY)}
        key = tuple(sorted((n, o["metadata"]["resourceVersion"]) for n, o in crds.items()))
        return served, crds, key

    def _openapi(self, request: web.Request, path: str) -> web.Response:
        """OpenAPI documents as JSON; v2 only when the client accepts JSON (kubectl asks for protobuf and
        then falls back to v3, which it prefers anyway)."""
        served, crds, key = self._openapi_inputs()
        if self._openapi_key != key:
            self._openapi_cache.clear()
            self._openapi_key = key
        if path == "/openapi/v2":
            accept = request.headers.get("Accept", "")
            if accept and not any(t in accept for t in ("json", "*/*")):
                raise HTTPStatusError(
                    406, "NotAcceptable", "only the following media types are accepted: application/json"
                )
            document = self._openapi_cache.get(path)
            if document is None:
                document = self._openapi_cache[path] = dumps(openapi.v2_document(served, crds))
            return web.Response(body=document, content_type="application/json")
        if path == "/openapi/v3":
            document = self._openapi_cache.get(path)
            if document is None:
                document = self._openapi_cache[path] = dumps(openapi.v3_root(served, crds))
            return web.Response(body=document, content_type="application/json")
        gv = path.removeprefix("/openapi/v3/")
        document = self._openapi_cache.get(path)
        if document is None:
            found = openapi.v3_document(served, crds, gv)
            if found is None:
                raise NotFound("the server could not find the requested resource")
            document = self._openapi_cache[path] = dumps(found)
        return web.Response(
            body=document,
            content_type="application/json",
            headers={
                "Cache-Control": "public, immutable" if request.query.get("hash") else "no-cache, private"
            },
        )

    def _groups(self) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        for rt in self.store.served():
            if rt.group and rt.version not in groups.setdefault(rt.group, []):
                groups[rt.group].append(rt.version)
        return groups

    def _group(self, name: str) -> Obj:
        versions = self._groups().get(name)
        if not versions:
            raise NotFound("the server could not find the requested resource")
        entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
        return {
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": name,
            "versions": entries,
            "preferredVersion": entries[0],
        }

    def _group_list(self) -> Obj:
        return {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [self._group(name) for name in self._groups()],
        }

    def _resource_list(self, group: str, version: str) -> Obj:
        served = [rt for rt in self.store.served() if rt.group == group and rt.version == version]
        if not served:
            raise NotFound("the server could not find the requested resource")
        resources: list[Obj] = []
        for rt in served:
            entry: Obj = {
                "name": rt.plural,
                "singularName": rt.singular,
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": list(rt.verbs),
            }
            if rt.short_names:
                entry["shortNames"] = list(rt.short_names)
            if rt.categories:
                entry["categories"] = list(rt.categories)
            resources.append(entry)
            sub_verbs = ["get"] if "update" not in rt.verbs else ["get", "patch", "update"]
            if rt.status_subresource:
                resources.append(
                    {
                        "name": f"{rt.plural}/status",
                        "singularName": "",
                        "namespaced": rt.namespaced,
                        "kind": rt.kind,
                        "verbs": sub_verbs,
                    }
                )
            if rt.scale:
                resources.append(
                    {
                        "name": f"{rt.plural}/scale",
                        "singularName": "",
                        "namespaced": rt.namespaced,
                        "group": "autoscaling",
                        "version": "v1",
                        "kind": "Scale",
                        "verbs": sub_verbs,
                    }
                )
            if rt.key == "pods":
                resources.append(
                    {
                        "name": "pods/log",
                        "singularName": "",
                        "namespaced": True,
                        "kind": "Pod",
                        "verbs": ["get"],
                    }
                )
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": resources,
        }

    # ---- resources ---------------------------------------------------------------------------------------

    def _target(self, group: str, version: str, rest: list[str]) -> Request:
        def resolve(plural: str) -> ResourceType | None:
            rt = lookup(group, version, plural)
            return rt if rt is not None and rt in self.store.served() else None

        if rest[0] == "namespaces" and len(rest) >= 3 and (rt := resolve(rest[2])) and rt.namespaced:
            if len(rest) > 5:
                raise NotFound("the server could not find the requested resource")
            return Request(
                rt, rest[1], rest[3] if len(rest) > 3 else None, rest[4] if len(rest) > 4 else None
            )
        rt = resolve(rest[0])
        if rt is None or len(rest) > 3 or (rt.namespaced and len(rest) > 1):
            raise NotFound("the server could not find the requested resource")
        return Request(rt, None, rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None)

    async def _resource(
        self, request: web.Request, target: Request, user: str, groups: list[str]
    ) -> web.StreamResponse:
        q = request.query
        method = request.method
        rt = target.rt
        dry_run = _dry_run(q.getall("dryRun", []))
        if rt.key == "pods" and target.subresource == "log" and target.name:
            if method != "GET":
                raise MethodNotAllowed("the server does not allow this method on the requested resource")
            return await self._pod_log(request, target)
        if target.subresource not in (None, "status", "scale") or (target.subresource and not target.name):
            raise NotFound("the server could not find the requested resource")
        if (target.subresource == "status" and not rt.status_subresource) or (
            target.subresource == "scale" and not rt.scale
        ):
            raise NotFound("the server could not find the requested resource")
        manager = q.get("fieldManager") or request.headers.get("User-Agent", "unknown").split("/")[0][:128]
        writes = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
        if method in writes and writes[method] not in rt.verbs:
            raise MethodNotAllowed(
                f"the server does not allow this method on the requested resource "
                f"({rt.group_resource} is read-only in kubesim)"
            )
        if target.name is None:
            if method == "GET":
                if q.get("watch") in ("true", "1"):
                    return await self._watch(request, target)
                return self._list(request, target)
            if method == "POST":
                body = await self._body(request)
                if not isinstance(body, dict):
                    raise BadRequest(f"the body of the request is not a valid {rt.kind} object")
                self._check_identity(rt, body, target)
                check, warnings = self._checker(request, rt, body)
                obj = self.store.create(
                    rt.key,
                    self._with_namespace(body, target),
                    manager=manager,
                    user=user,
                    groups=groups,
                    drop_status=True,
                    implicit_namespace=False,
                    check=check,
                    dry_run=dry_run,
                )
                committed_at = time.time()  # the store has the write: the harness's time of it
                return _committed(_warned(json_response(obj, 201), warnings), committed_at)
            raise MethodNotAllowed("the server does not allow this method on the requested resource")
        if method == "GET":
            obj = self.store.get_raw(rt.key, target.namespace, target.name)
            if target.subresource == "scale":
                return json_response(self.store.scale_of(rt, obj))
            if _wants_table(request):
                return json_response(
                    table(
                        rt,
                        [obj],
                        q.get("includeObject", "Metadata"),
                        self.store.now(),
                        {"resourceVersion": obj["metadata"]["resourceVersion"]},
                    )
                )
            return json_response(obj)
        if method == "PUT":
            body = await self._body(request)
            if not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
                raise BadRequest(f"the body of the request is not a valid {rt.kind} object")
            if body["metadata"].get("name") != target.name:
                raise BadRequest(
                    f"the name of the object ({body['metadata'].get('name')}) does not match the "
                    f"name on the URL ({target.name})"
                )
            if target.subresource != "scale":
                self._check_identity(rt, body, target)
            check, warnings = (
                self._checker(request, rt, body) if target.subresource != "scale" else (None, [])
            )
            obj = self.store.replace(
                rt.key,
                self._with_namespace(body, target),
                subresource=target.subresource,
                manager=manager,
                user=user,
                groups=groups,
                require_version=rt.custom and target.subresource is None,
                check=check,
                dry_run=dry_run,
            )
            committed_at = time.time()  # the store has the write: the harness's time of it
            return _committed(_warned(json_response(obj), warnings), committed_at)
        if method == "PATCH":
            content_type = request.content_type
            if content_type == "application/apply-patch+yaml":
                return await self._apply(request, target, user, groups, dry_run)
            patch_type = PATCH_TYPES.get(content_type)
            if patch_type is None or (patch_type == "strategic" and rt.custom):
                accepted = (
                    CUSTOM_PATCH_TYPES
                    if rt.custom
                    else ", ".join([*PATCH_TYPES, "application/apply-patch+yaml"])
                )
                raise HTTPStatusError(
                    415,
                    "UnsupportedMediaType",
                    f"the body of the request was in an unknown format - accepted media types "
                    f"include: {accepted}",
                )
            body = await self._body(request)
            # Unknown fields are looked for in what the client sent (a JSON patch's result has only those).
            sent = None if patch_type == "json" else body
            check, warnings = (
                self._checker(request, rt, sent) if target.subresource != "scale" else (None, [])
            )
            obj = self.store.patch(
                rt.key,
                target.namespace,
                target.name,
                body,
                patch_type=patch_type,
                subresource=target.subresource,
                manager=manager,
                user=user,
                groups=groups,
                check=check,
                dry_run=dry_run,
            )
            committed_at = time.time()  # the store has the write: the harness's time of it
            return _committed(_warned(json_response(obj), warnings), committed_at)
        if method == "DELETE":
            if target.subresource:
                raise MethodNotAllowed("the server does not allow this method on the requested resource")
            options = await self._body(request) if request.can_read_body else {}
            options = options if isinstance(options, dict) else {}
            propagation = q.get("propagationPolicy") or options.get("propagationPolicy") or "Background"
            if propagation not in ("Background", "Foreground", "Orphan"):
                raise BadRequest(
                    f"propagationPolicy: Unsupported value: {propagation!r}: supported values: "
                    '"Foreground", "Background", "Orphan"'
                )
            # DeleteOptions may carry dryRun in the body, as kubectl sends it.
            dry_run = dry_run or _dry_run([str(v) for v in options.get("dryRun") or []])
            if options.get("orphanDependents") is True:
                propagation = "Orphan"
            pre = options.get("preconditions") or {}
            obj = self.store.delete(
                rt.key,
                target.namespace,
                target.name,
                user=user,
                groups=groups,
                propagation=propagation,
                uid=pre.get("uid"),
                resource_version=pre.get("resourceVersion"),
                manager=manager,
                dry_run=dry_run,
            )
            committed_at = time.time()  # the store has the write: the harness's time of it
            return _committed(json_response(obj), committed_at)
        raise MethodNotAllowed("the server does not allow this method on the requested resource")

    async def _body(self, request: web.Request) -> Any:
        raw = await request.read()
        if not raw:
            raise BadRequest("the request has no body")
        if request.content_type == protobuf.CONTENT_TYPE:
            try:
                return protobuf.decode(raw)
            except protobuf.ProtobufError as error:
                raise HTTPStatusError(
                    415,
                    "UnsupportedMediaType",
                    f"the body of the request was in an unknown format - accepted media types include: "
                    f"application/json, application/yaml ({error})",
                ) from None
        # No Content-Type at all is read as JSON, like a real server (its first supported type).
        if "Content-Type" in request.headers and not any(t in request.content_type for t in ("json", "yaml")):
            raise HTTPStatusError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json, application/yaml",
            )
        try:
            if "yaml" in request.content_type:
                return yaml.safe_load(raw)
            return json.loads(raw)
        except (ValueError, yaml.YAMLError) as error:
            raise BadRequest(f"the body of the request could not be decoded: {error}") from None

    async def _apply(
        self, request: web.Request, target: Request, user: str, groups: list[str], dry_run: bool
    ) -> web.Response:
        """Server-side apply (`application/apply-patch+yaml`)."""
        rt = target.rt
        assert target.name is not None
        manager = request.query.get("fieldManager", "")
        if not manager:
            raise invalid(
                rt,
                target.name,
                [
                    validation.FieldError(
                        "fieldManager", "Required value: is required for apply patch", "FieldValueRequired"
                    )
                ],
            )
        force = request.query.get("force") in ("true", "1")
        body = await self._body(request)
        if not isinstance(body, dict):
            raise BadRequest(f"the body of the request is not a valid {rt.kind} object")
        if not body.get("apiVersion") or not body.get("kind"):
            raise BadRequest("apiVersion and kind must be set in an applied configuration")
        self._check_identity(rt, body, target)
        check, warnings = self._checker(request, rt, body)
        existed = self.store.try_get(rt.key, target.namespace, target.name) is not None
        obj = self.store.apply(
            rt.key,
            target.namespace,
            target.name,
            body,
            manager=manager,
            force=force,
            subresource=target.subresource,
            user=user,
            groups=groups,
            implicit_namespace=False,
            check=check,
            dry_run=dry_run,
        )
        return _warned(json_response(obj, 200 if existed else 201), warnings)

    def _schema(self, rt: ResourceType) -> tuple[Obj, dict[str, Obj]]:
        """`rt`'s OpenAPI v3 schema and the components it refers to (cached with the OpenAPI documents)."""
        _, crds, key = self._openapi_inputs()
        if self._schema_key != key:
            self._schemas.clear()
            self._schema_key = key
        found = self._schemas.get(rt.key)
        if found is None:
            components = openapi.components_for([rt], crds)
            found = self._schemas[rt.key] = (
                components.get(openapi.kind_definition(rt, crds), {}),
                components,
            )
        return found

    def _checker(self, request: web.Request, rt: ResourceType, sent: Any) -> tuple[Check | None, list[str]]:
        """What a real server checks of a written object: its schema (422 for wrong types, as for custom
        resources) and, per `fieldValidation` (Ignore, Warn — the default —, Strict), unknown fields in what
        the client `sent` (None: in the resulting object)."""
        mode = request.query.get("fieldValidation", "Warn")
        if mode not in ("Ignore", "Warn", "Strict"):
            raise BadRequest(
                f'fieldValidation: Unsupported value: "{mode}": supported values: "Ignore", "Strict", "Warn"'
            )
        warnings: list[str] = []
        schema, components = self._schema(rt)
        if not schema:
            return None, warnings

        def without_status(value: Any) -> Any:
            if rt.status_subresource and isinstance(value, dict):
                return {k: v for k, v in value.items() if k != "status"}
            return value

        def check(obj: Obj) -> None:
            errors, unknown = validation.schema_errors(without_status(obj), schema, components)
            if sent is not None:
                _, unknown = validation.schema_errors(without_status(sent), schema, components)
            unknown = [
                u
                for u in unknown
                if not u.startswith("metadata.managedFields") and "$" not in u.rsplit(".", 1)[-1]
            ]
            if unknown and mode == "Strict":
                listed = ", ".join(f'unknown field "{u}"' for u in unknown)
                raise BadRequest(f"strict decoding error: {listed}")
            if unknown and mode == "Warn":
                warnings.extend(f'unknown field "{u}"' for u in unknown)
            if errors:
                raise invalid(rt, str(obj.get("metadata", {}).get("name", "")), errors)

        return check, warnings

    async def _pod_log(self, request: web.Request, target: Request) -> web.StreamResponse:
        """``pods/log`` (kubesim.podlogs): the log at once, or with ``follow`` a chunked stream of it that
        ends when the pod goes away or the client leaves."""
        name, namespace = str(target.name), str(target.namespace)
        options = podlogs.parse_options(name, request.query)
        pod = self.store.try_get("pods", namespace, name)
        if pod is None:
            raise podlogs.not_found(name)
        container = podlogs.choose_container(pod, options.container)
        start = podlogs.started_at(pod, container, options)
        rate = podlogs.error_rate(self.store, pod)
        now = self.store.now()
        budget = options.limit_bytes
        lines = podlogs.first_read(pod, container, start, now, rate, options)
        text = "".join(podlogs.render(at, line, options.timestamps) for at, line in lines).encode()
        if budget is not None:
            text = text[:budget]
        if not options.follow:
            return web.Response(body=text, content_type="text/plain", charset="utf-8")
        response = web.StreamResponse(headers={"Content-Type": "text/plain; charset=utf-8"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        sent = len(text)
        if text:
            await response.write(text)
        while budget is None or sent < budget:
            await asyncio.sleep(min(0.25, podlogs.LINE_SECONDS / 2))
            pod = self.store.try_get("pods", namespace, name)
            if pod is None or pod["metadata"].get("deletionTimestamp"):
                break
            later = self.store.now()
            chunk = "".join(
                podlogs.render(at, line, options.timestamps)
                for at, line in podlogs.lines_between(pod, container, start, now, later, rate)
            ).encode()
            now = later
            if budget is not None:
                chunk = chunk[: budget - sent]
            if chunk:
                await response.write(chunk)
                sent += len(chunk)
        await response.write_eof()
        return response

    def _check_identity(self, rt: ResourceType, body: Obj, target: Request) -> None:
        if body.get("kind") not in (None, "", rt.kind) or body.get("apiVersion") not in (
            None,
            "",
            rt.api_version,
        ):
            raise BadRequest(
                f"the API version in the data ({body.get('apiVersion')}) and kind "
                f"({body.get('kind')}) do not match {rt.api_version}, Kind={rt.kind}"
            )
        namespace = (body.get("metadata") or {}).get("namespace")
        if rt.namespaced and namespace and target.namespace and namespace != target.namespace:
            raise BadRequest(
                "the namespace of the provided object does not match the namespace sent on the request"
            )

    @staticmethod
    def _with_namespace(body: Obj, target: Request) -> Obj:
        if not target.rt.namespaced:
            return body
        if not target.namespace:
            raise NotFound("the server could not find the requested resource (a namespace is required)")
        meta = body.get("metadata")
        return {
            **body,
            "metadata": {**(meta if isinstance(meta, dict) else {}), "namespace": target.namespace},
        }

    def _list(self, request: web.Request, target: Request) -> web.Response:
        """A list, paginated like etcd-backed servers: every page of a `continue` chain is served from the
        snapshot at the first page's resourceVersion (410 Expired once the history no longer reaches it)."""
        q = request.query
        rt = target.rt
        rv = q.get("resourceVersion", "")
        at: int | None = None
        if rv not in ("", "0"):
            wanted = _parse_rv(rv)
            if wanted > self.store.resource_version:
                raise HTTPStatusError(
                    504,
                    "Timeout",
                    f"Too large resource version: {wanted}, current: {self.store.resource_version}",
                )
            if q.get("resourceVersionMatch") == "Exact":
                at = wanted
        after: str | None = None
        if q.get("continue"):
            at, after = _decode_continue(q["continue"])
        selectors = {"label_selector": q.get("labelSelector"), "field_selector": q.get("fieldSelector")}
        if at is None:
            items, list_rv = self.store.list_raw(rt.key, target.namespace, **selectors)
        else:
            try:
                items = self.store.list_at(rt.key, at, target.namespace, **selectors)
            except Gone:
                if q.get("continue"):
                    raise ContinueExpired(_encode_continue(-1, after or "")) from None
                raise
            list_rv = at
        meta: Obj = {"resourceVersion": str(list_rv)}
        limit = _parse_int("limit", q.get("limit"))
        scoped = rt.namespaced and not target.namespace
        start = 0
        if after is not None:  # the list is in key order: the page starts after the token's key
            start = bisect.bisect_right(items, after, key=lambda item: _start_key(item, scoped))
        if limit and limit > 0 and start + limit < len(items):
            last = items[start + limit - 1]
            meta["continue"] = _encode_continue(list_rv, _start_key(last, scoped))
            meta["remainingItemCount"] = len(items) - start - limit
            items = items[start : start + limit]
        else:
            items = items[start:]
        if _wants_table(request):
            return json_response(table(rt, items, q.get("includeObject", "Metadata"), self.store.now(), meta))
        head = dumps({"kind": f"{rt.kind}List", "apiVersion": rt.api_version, "metadata": meta})
        # The page's items in one call: per item, each result would hold the 4 KB+ orjson wrote it into.
        body = head[:-1] + b',"items":' + dumps(items) + b"}"
        return web.Response(body=body, content_type="application/json")

    # ---- watch -------------------------------------------------------------------------------------------

    async def _watch(self, request: web.Request, target: Request) -> web.StreamResponse:
        q = request.query
        rt = target.rt
        timeout = _parse_int("timeoutSeconds", q.get("timeoutSeconds"))
        bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
        labels = parse_label_selector(q["labelSelector"]) if q.get("labelSelector") else []
        fields = parse_field_selector(rt.key, q["fieldSelector"]) if q.get("fieldSelector") else []
        rv = q.get("resourceVersion", "")
        wanted = _parse_rv(rv) if rv not in ("", "0") else None
        if wanted is not None and wanted > self.store.resource_version:
            # Like an API server whose watch cache is fresh: a version it has not reached (another
            # server's, or one from before the store was replaced) is refused, not waited for.
            current = self.store.resource_version
            raise HTTPStatusError(504, "Timeout", f"Too large resource version: {wanted}, current: {current}")
        expire = self.faults.take_expire()
        if expire == "status":
            raise Gone(f"too old resource version: {rv or 0} ({self.store.resource_version + 1})")
        include = q.get("includeObject", "Metadata") if _wants_table(request) else None
        watcher = Watcher(rt, target.namespace, labels, fields, include)

        response = web.StreamResponse(
            headers={"Content-Type": "application/json", "Cache-Control": "no-cache, private"}
        )
        response.enable_chunked_encoding()
        if expire == "event":
            return await self._send_gone(request, response, wanted or 0, self.store.resource_version + 1)
        try:
            if wanted is None:
                initial = [("ADDED", o) for o in self.store.list_raw(rt.key, target.namespace)[0]]
            else:
                initial = list(self.store.events_since(rt.key, wanted))
        except Gone:
            return await self._send_gone(
                request, response, wanted or 0, self.store.oldest_resource_version + 1
            )
        # Registering and queueing the backlog happen without awaiting, so no event can fall in between.
        self.hub.add(watcher)
        try:
            for event_type, obj in initial:
                if watcher.matches(obj):
                    watcher.push(self._encode(watcher, event_type, obj))
            if wanted is None and q.get("sendInitialEvents") == "true":
                watcher.push(self._bookmark(rt, initial_end=True))
            await response.prepare(request)
            await self._stream(response, watcher, timeout, bookmarks)
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            self.hub.remove(watcher)
        with contextlib.suppress(ConnectionError, RuntimeError):
            await response.write_eof()
        return response

    async def _send_gone(
        self, request: web.Request, response: web.StreamResponse, wanted: int, oldest: int
    ) -> web.StreamResponse:
        gone = Gone(f"too old resource version: {wanted} ({oldest})")
        await response.prepare(request)
        await response.write(dumps({"type": "ERROR", "object": gone.status()}) + b"\n")
        await response.write_eof()
        return response

    def _encode(self, watcher: Watcher, event_type: str, obj: Obj) -> Any:
        if watcher.table_include is not None:
            return (event_type, obj)
        return b'{"type":"' + event_type.encode() + b'","object":' + dumps(obj) + b"}\n"

    def _bookmark(self, rt: ResourceType, initial_end: bool = False) -> bytes:
        meta: Obj = {"resourceVersion": str(self.store.resource_version)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return (
            dumps(
                {
                    "type": "BOOKMARK",
                    "object": {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta},
                }
            )
            + b"\n"
        )

    async def _stream(
        self, response: web.StreamResponse, watcher: Watcher, timeout: int | None, bookmarks: bool
    ) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (timeout if timeout and timeout > 0 else DEFAULT_WATCH_TIMEOUT)
        # Like real servers, bookmark periodically and just before a timeout closes the watch.
        next_bookmark = loop.time() + self.bookmark_interval
        while True:
            now = loop.time()
            if not watcher.items:
                watcher.wake.clear()
                wait = deadline - now
                if bookmarks:
                    wait = min(wait, next_bookmark - now, max(0.0, deadline - 1.0 - now))
                if wait > 0:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(wait):
                            await watcher.wake.wait()
            while (hold := self.faults.hang_remaining()) > 0:
                await asyncio.sleep(hold)
            now = loop.time()
            if bookmarks and not watcher.closed and (now >= next_bookmark or now >= deadline - 1.0):
                watcher.push(self._bookmark(watcher.rt))
                next_bookmark = now + self.bookmark_interval if now < deadline - 1.0 else deadline + 1.0
            chunk = []
            closing = False
            while watcher.items:
                item = watcher.items.popleft()
                if item is _CLOSE:
                    closing = True
                    break
                chunk.append(item if isinstance(item, bytes) else self._table_event(watcher, item))
            if chunk:
                await response.write(b"".join(chunk))
            if closing or loop.time() >= deadline:
                return

    def _table_event(self, watcher: Watcher, item: tuple[str, Obj]) -> bytes:
        event_type, obj = item
        rows = table(
            watcher.rt,
            [obj],
            watcher.table_include or "Metadata",
            self.store.now(),
            {"resourceVersion": obj["metadata"]["resourceVersion"]},
            headers=not watcher.sent_headers,
        )
        watcher.sent_headers = True
        return dumps({"type": event_type, "object": rows}) + b"\n"

    # ---- admin -------------------------------------------------------------------------------------------

    async def _admin(self, request: web.Request, path: str) -> web.StreamResponse:
        if path == "/kubesim/healthz" and request.method == "GET":
            return json_response(
                {"ok": True, "resourceVersion": self.store.resource_version, "watches": self.hub.count()}
            )
        if path == "/kubesim/audit" and request.method == "GET":
            user = request.query.get("user")
            items = [e for e in self.store.audit if user is None or e["user"] == user]
            return json_response({"items": items})
        if path == "/kubesim/faults" and request.method == "GET":
            return json_response({"state": self.faults.state(), "log": self.faults.log})
        if path.startswith("/kubesim/faults/") and request.method == "POST":
            name = path.removeprefix("/kubesim/faults/")
            params = await self._body(request) if request.can_read_body else {}
            if not isinstance(params, dict):
                raise BadRequest("the fault parameters must be a JSON object")
            actions: dict[str, Callable[..., Any]] = {
                "drop-watches": self.faults.drop_watches,
                "expire-next-watch": self.faults.expire_next_watch,
                "hang": self.faults.hang,
                "fail": self.faults.fail,
                "restart": self.faults.restart,
                "clear": self.faults.clear,
            }
            if name not in actions:
                raise NotFound(f"unknown fault {name!r}; known faults: {', '.join(actions)}")
            try:
                result = actions[name](**params)
            except TypeError:
                raise BadRequest(f"unexpected parameters for fault {name!r}: {sorted(params)}") from None
            except FaultError as error:
                raise BadRequest(f"fault {name!r}: {error}") from None
            return json_response({"fault": name, "result": result, "state": self.faults.state()})
        raise NotFound("the server could not find the requested resource")


def _dry_run(values: list[str]) -> bool:
    """`dryRun=All` (the only value real servers accept): check and compute the write, store nothing."""
    for value in values:
        if value != "All":
            raise BadRequest(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return bool(values)


def _committed(response: web.Response, at: float) -> web.Response:
    """A write's answer says when the store made it (``Kubesim-Committed-At``, Unix seconds): the
    benchmark measures write → page from there, not from sending a request the busy simulator may read
    late. Real API servers send no such header; clients ignore it."""
    response.headers["Kubesim-Committed-At"] = f"{at:.6f}"
    return response


def _warned(response: web.Response, warnings: list[str]) -> web.Response:
    """Warnings as real servers send them: one `Warning: 299 - "text"` header each."""
    for text in warnings:
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        response.headers.add("Warning", f'299 - "{escaped}"')
    return response


def _wants_table(request: web.Request) -> bool:
    return "as=Table" in request.headers.get("Accept", "")


def _start_key(obj: Obj, with_namespace: bool) -> str:
    """The etcd key of `obj` below the list's prefix, as continue tokens carry it."""
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}" if with_namespace else meta["name"]


def _encode_continue(rv: int, key: str) -> str:
    # The real token: base64 of {"v":"meta.k8s.io/v1","rv":…,"start":"<key>\u0000"} (start after <key>).
    token = {"v": "meta.k8s.io/v1", "rv": rv, "start": key + "\x00"}
    return base64.urlsafe_b64encode(dumps(token)).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, str]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode() + b"=" * (-len(token) % 4)))
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError
        rv, start = int(data["rv"]), str(data["start"])
        if rv <= 0:
            raise ValueError
    except (ValueError, KeyError, TypeError, AttributeError):
        raise BadRequest(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        ) from None
    return rv, start.removesuffix("\x00")


CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of "
    "the results. Continuing with the provided token results in an inconsistent list - objects that were "
    "created, modified, or deleted between the time the first chunk was returned and now may show up in the "
    "list."
)


class ContinueExpired(Gone):
    """410 for a continue token older than the history, with an inconsistent-continue token, like etcd."""

    def __init__(self, inconsistent: str) -> None:
        super().__init__(CONTINUE_EXPIRED)
        self.inconsistent = inconsistent

    def status(self) -> Obj:
        body = super().status()
        body["metadata"] = {"continue": self.inconsistent}
        return body


def _parse_int(name: str, value: str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise BadRequest(f"invalid value for {name}: {value!r} is not an integer") from None


def _parse_rv(value: str) -> int:
    try:
        rv = int(value)
        if rv < 0:
            raise ValueError
        return rv
    except ValueError:
        raise BadRequest(f'invalid resource version "{value}"') from None


async def start_server(
    store: Store,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str,
    faults: Faults,
    bookmark_interval: float = 60.0,
    tls: bool = True,
) -> RunningServer:
    """Serve `store` on host:port (0 picks a free port) behind `token`; faults are consulted per request.

    HTTPS by default with a fresh self-signed certificate (`RunningServer.ca_pem`): kubectl only sends a
    bearer token over TLS. `tls=False` serves plain HTTP for raw-HTTP tests.
    """
    # The core kinds' schemas, which every write is checked against, are built now (once per process), as
    # a real API server has its OpenAPI at start: built on the first write instead, they held up the
    # benchmark's first write for 0.4 s (importing the client's models) and every write queued behind it.
    openapi.core_components()
    api = ApiServer(store, token=token, faults=faults, bookmark_interval=bookmark_interval)
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", api.handle)
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=2.0)
    await runner.setup()
    ca_pem, ssl_context = None, None
    if tls:
        ca_pem, key_pem = self_signed_certificate()
        ssl_context = server_ssl_context(ca_pem, key_pem)
    site = web.TCPSite(runner, host, port, ssl_context=ssl_context)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        api.hub.close()
        raise
    bound = runner.addresses[0][1]
    api.address = f"{host}:{bound}"
    detach = faults.attach(api.hub.drop_all)
    scheme = "https" if tls else "http"
    return RunningServer(
        url=f"{scheme}://{host}:{bound}",
        port=bound,
        runner=runner,
        hub=api.hub,
        detach_faults=detach,
        ca_pem=ca_pem,
    )


__all__ = ["RESOURCES", "ApiServer", "RunningServer", "start_server"]
