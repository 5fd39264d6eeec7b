"""kubesim's object store: what etcd plus the API server's registry would do for the kinds we serve.

One global, monotonically increasing resourceVersion; objects kept as plain dicts per kind keyed by
(namespace, name); a bounded history of events for watches (older versions answer `Gone`); `generation`
bumped only by spec changes; status/scale subresource semantics; no-op writes that change nothing;
optimistic concurrency on resourceVersion; managedFields per field manager; owner-reference garbage
collection; an audit log of writes made on behalf of a user.

Stored dicts are never mutated in place (every write builds a new dict, sharing unchanged sub-trees), so
history entries and in-flight watch events stay valid. Public read methods return copies; `list_raw`,
`get_raw` and `add_listener` hand out the stored objects for the server's hot paths, read-only.

Writes take `dry_run` (the API's `dryRun=All`): everything is checked and computed, nothing is stored.

Non-goals: finalizers and graceful deletion (delete removes at once), admission, defaulting, multiple
versions per kind (schema validation of HTTP writes is the server's, see `kubesim.validation`). The store
is not thread-safe: use it from one event loop.
"""

from __future__ import annotations

import functools
import random
import re
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from kubesim import apply as ssa
from kubesim import patching, validation
from kubesim.resources import BY_KEY, CRD_KEY, RESOURCES, ResourceType, crd_object, json_path_get

Obj = dict[str, Any]
ObjList = list[Obj]
EventList = list[tuple[str, Obj]]
Callback = Callable[[str, str, Obj], None]
Listener = Callable[[str, str, Obj, "Obj | None"], None]


class StoreError(Exception):
    """An error a real API server answers with a `Status` body."""

    code = 500
    reason = "InternalError"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}

    def status(self) -> Obj:
        """The Kubernetes `Status` object for this error."""
        body: Obj = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


class BadRequest(StoreError):
    code, reason = 400, "BadRequest"


class NotFound(StoreError):
    code, reason = 404, "NotFound"


class AlreadyExists(StoreError):
    code, reason = 409, "AlreadyExists"


class Conflict(StoreError):
    code, reason = 409, "Conflict"


class Gone(StoreError):
    code, reason = 410, "Expired"


class Invalid(StoreError):
    code, reason = 422, "Invalid"


class MethodNotAllowed(StoreError):
    code, reason = 405, "MethodNotAllowed"


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- selectors -------------------------------------------------------------------------------------------

Requirement = tuple[str, str, frozenset[str]]
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_SET_RE = re.compile(r"^(\S+)\s+(in|notin)\s*\(([^)]*)\)$")


def parse_label_selector(selector: str) -> list[Requirement]:
    """Parse `a=b,c!=d,e in (x,y),f notin (z),g,!h` into (key, op, values) requirements."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(selector):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(selector[start:i])
            start = i + 1
    parts.append(selector[start:])
    reqs: list[Requirement] = []
    for raw in parts:
        part = raw.strip()
        if not part:
            if raw or len(parts) > 1:
                raise BadRequest(
                    f"unable to parse requirement: found '', expected: identifier in {selector!r}"
                )
            continue
        if m := _SET_RE.match(part):
            key, op = m.group(1), m.group(2)
            values = frozenset(v.strip() for v in m.group(3).split(",") if v.strip())
        elif "!=" in part:
            key, value = (s.strip() for s in part.split("!=", 1))
            op, values = "!=", frozenset({value})
        elif "=" in part:
            key, value = (s.strip() for s in part.split("==" if "==" in part else "=", 1))
            op, values = "=", frozenset({value})
        elif part.startswith("!"):
            key, op, values = part[1:].strip(), "!", frozenset()
        else:
            key, op, values = part, "exists", frozenset()
        if not _LABEL_KEY.match(key):
            raise BadRequest(
                f"unable to parse requirement: invalid label key {key!r} in selector {selector!r}"
            )
        reqs.append((key, op, values))
    return reqs


def labels_match(labels: dict[str, str], reqs: Sequence[Requirement]) -> bool:
    for key, op, values in reqs:
        if op == "=":
            if labels.get(key) not in values:
                return False
        elif op == "!=" or op == "notin":
            if key in labels and labels[key] in values:
                return False
        elif op == "in":
            if labels.get(key) not in values:
                return False
        elif op == "exists":
            if key not in labels:
                return False
        elif op == "!" and key in labels:
            return False
    return True


_FIELDS = {"metadata.name", "metadata.namespace"}
_EXTRA_FIELDS = {
    "pods": {"status.phase", "spec.nodeName"},
    "events": {
        "involvedObject.kind",
        "involvedObject.name",
        "involvedObject.namespace",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "type",
        "source",
        "reportingComponent",
    },
}
FieldRequirement = tuple[str, bool, str]


def parse_field_selector(resource: str, selector: str) -> list[FieldRequirement]:
    """Parse `metadata.name=x,metadata.namespace!=y` into (path, equal, value)."""
    reqs: list[FieldRequirement] = []
    supported = _FIELDS | _EXTRA_FIELDS.get(resource, set())
    for raw in selector.split(","):
        part = raw.strip()
        if not part:
            continue
        if "!=" in part:
            path, value = part.split("!=", 1)
            equal = False
        elif "=" in part:
            path, value = part.split("==", 1) if "==" in part else part.split("=", 1)
            equal = True
        else:
            raise BadRequest(f"invalid selector: '{selector}'; can't understand '{part}'")
        path = path.strip()
        if path not in supported:
            raise BadRequest(f"field label not supported: {path}")
        reqs.append((path, equal, value.strip()))
    return reqs


def fields_match(obj: Obj, reqs: Sequence[FieldRequirement]) -> bool:
    for path, equal, value in reqs:
        actual = json_path_get(obj, path)
        if ((actual if actual is not None else "") == value) != equal:
            return False
    return True


def selector_string(selector: Any) -> str:
    """A label selector object as the string form used by `Scale.status.selector`."""
    if not isinstance(selector, dict):
        return selector if isinstance(selector, str) else ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        op, key, values = expr.get("operator"), expr.get("key"), expr.get("values") or []
        if op in ("In", "NotIn"):
            parts.append(f"{key} {op.lower()} ({','.join(sorted(values))})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


DEFAULT_WATCH_WINDOW = 5_000  # events a watch can resume from, like a real server's bounded watch cache
Check = Callable[[Obj], None]


def invalid(rt: ResourceType, name: str, errors: Sequence[validation.FieldError]) -> Invalid:
    """The 422 a real server answers: `Kind.group "name" is invalid: [field: message, ...]`."""
    qualified = f"{rt.kind}.{rt.group}" if rt.group else rt.kind
    parts = [f"{e.field}: {e.message}" for e in errors]
    listed = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return Invalid(
        f'{qualified} "{name}" is invalid: {listed}',
        details={"name": name, "group": rt.group, "kind": rt.kind, "causes": [e.cause() for e in errors]},
    )


@functools.cache
def _installed_crd(rt: ResourceType) -> tuple[Obj, patching.FieldSet]:
    obj = crd_object(rt)
    return obj, patching.fields_v1(obj)


_GENERATE_CHARS = "bcdfghjklmnpqrstvwxz2456789"


# ---- the store -----------------------------------------------------------------------------------------


class Store:
    """In-memory objects, history and write semantics of a small Kubernetes API server."""

    def __init__(
        self,
        *,
        now: Callable[[], datetime] | None = None,
        seed: int = 0,
        history_limit: int = DEFAULT_WATCH_WINDOW,
        audit_limit: int = 10_000,
        crds: Sequence[str] | None = None,
        implicit_namespaces: bool = True,
    ) -> None:
        """`crds`: the resource keys whose CRD is installed (default: every custom kind kubesim knows).
        `implicit_namespaces`: whether in-process creates may create a missing namespace (see create)."""
        self.implicit_namespaces = implicit_namespaces
        self.now: Callable[[], datetime] = now or (lambda: datetime.now(UTC))
        self.resource_version = 0
        self._rng = random.Random(seed)
        self._objects: dict[str, dict[tuple[str, str], Obj]] = {rt.key: {} for rt in RESOURCES}
        # (resourceVersion, event type, resource, object, previous state): the watch window, and what
        # lets a paginated list be served as of its first page.
        self._history: deque[tuple[int, str, str, Obj, Obj | None]] = deque(maxlen=max(1, history_limit))
        self._compacted = 0  # events with a resourceVersion <= this are no longer in the history
        # Recent lists by (resource, version, namespace, selectors): stored objects are replaced, never
        # changed in place, so a list at a version stays true (``_listed``).
        self._lists: OrderedDict[tuple[str, int, str, str, str], ObjList] = OrderedDict()
        self._by_uid: dict[str, tuple[str, str, str]] = {}
        self._dependents: dict[str, set[str]] = {}  # owner uid -> dependent uids
        self._callbacks: list[Callback] = []
        self._listeners: list[Listener] = []
        self._pending: deque[tuple[str, str, Obj, Obj | None]] = deque()
        self._notifying = False
        self.audit: deque[Obj] = deque(maxlen=audit_limit)
        # The error rate of each rollout's canary pods' logs, by (namespace, rollout): set by a scenario,
        # read by the pods/log subresource (kubesim.podlogs).
        self.log_error_rates: dict[tuple[str, str], float] = {}
        for ns in ("default", "kube-system"):
            self.create("namespaces", {"metadata": {"name": ns}})
        wanted = [rt.key for rt in RESOURCES if rt.custom] if crds is None else crds
        for key in wanted:
            rt = self.resource_type(key, require_served=False)
            if not rt.custom:
                raise ValueError(f"{key} is not a custom resource")
            self._install_crd(rt)

    def _install_crd(self, rt: ResourceType) -> None:
        """Install `rt`'s CRD like `create` would, sharing the (large, immutable) upstream schema between
        stores instead of copying it for each."""
        crd_rt = BY_KEY[CRD_KEY]
        obj, fields = _installed_crd(rt)
        meta = {
            **obj["metadata"],
            "uid": self._uid(),
            "creationTimestamp": rfc3339(self.now()),
            "generation": 1,
        }
        meta["managedFields"] = [self._managed_entry(crd_rt, "kubesim", "Update", None, fields)]
        meta["resourceVersion"] = self._next_rv()
        stored = {**obj, "metadata": meta}
        self._objects[CRD_KEY][("", meta["name"])] = stored
        self._index(stored, None, crd_rt)
        self._emit("ADDED", crd_rt, stored, None)

    # ---- types -------------------------------------------------------------------------------------------

    def resource_type(self, resource: str, *, require_served: bool = True) -> ResourceType:
        rt = BY_KEY.get(resource)
        if rt is None:
            raise NotFound(f"the server could not find the requested resource ({resource})")
        if require_served and rt.custom and ("", rt.crd_name) not in self._objects[CRD_KEY]:
            raise NotFound(f"the server could not find the requested resource ({rt.group_resource})")
        return rt

    def served(self) -> list[ResourceType]:
        """The resource types currently served (custom kinds only while their CRD exists)."""
        crds = self._objects[CRD_KEY]
        return [rt for rt in RESOURCES if not rt.custom or ("", rt.crd_name) in crds]

    def _key(self, rt: ResourceType, namespace: str | None, name: str) -> tuple[str, str]:
        return ((namespace or "") if rt.namespaced else "", name)

    # ---- reads -------------------------------------------------------------------------------------------

    def get_raw(self, resource: str, namespace: str | None, name: str) -> Obj:
        rt = self.resource_type(resource)
        obj = self._objects[rt.key].get(self._key(rt, namespace, name))
        if obj is None:
            raise NotFound(
                f'{rt.group_resource} "{name}" not found',
                details={"name": name, "group": rt.group, "kind": rt.plural},
            )
        return obj

    def get(self, resource: str, namespace: str | None, name: str) -> Obj:
        return patching.copy_json(self.get_raw(resource, namespace, name))

    def try_get(self, resource: str, namespace: str | None, name: str) -> Obj | None:
        try:
            return self.get(resource, namespace, name)
        except NotFound:
            return None

    def list_raw(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> tuple[ObjList, int]:
        """Matching stored objects in etcd's key order, and the list's version (read-only objects)."""
        rt = self.resource_type(resource)
        items = self._listed(rt, self.resource_version, self._objects[rt.key], namespace,
                             label_selector, field_selector)
        return items, self.resource_version

    def list(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> tuple[ObjList, int]:
        items, rv = self.list_raw(
            resource, namespace, label_selector=label_selector, field_selector=field_selector
        )
        return [patching.copy_json(o) for o in items], rv

    def list_at(
        self,
        resource: str,
        resource_version: int,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> ObjList:
        """The list as it was at `resource_version` (read-only objects), rebuilt from the history; Gone
        when the history no longer reaches back that far (like etcd after compaction)."""
        rt = self.resource_type(resource)
        if resource_version < self._compacted:
            raise Gone(f"too old resource version: {resource_version} ({self._compacted + 1})")
        remembered = _list_key(rt, resource_version, namespace, label_selector, field_selector)
        if remembered in self._lists:  # a continue chain's next page: not even a copy of the state to make
            self._lists.move_to_end(remembered)
            return self._lists[remembered]
        state = dict(self._objects[rt.key])
        for rv, event_type, res, obj, old in reversed(self._history):
            if rv <= resource_version:
                break
            if res != rt.key:
                continue
            key = self._key(rt, obj["metadata"].get("namespace"), obj["metadata"]["name"])
            if event_type == "ADDED":
                state.pop(key, None)
            elif old is not None:
                state[key] = old
        return self._listed(rt, resource_version, state, namespace, label_selector, field_selector)

    def _listed(
        self,
        rt: ResourceType,
        resource_version: int,
        state: dict[tuple[str, str], Obj],
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
    ) -> ObjList:
        """``state``'s matching objects in etcd's key order (``<namespace>/<name>``, byte order: a namespace
        ``a-b`` sorts before ``a``). Remembered for the pages of a continue chain, which all read the list
        at its first page's version: each page then costs a lookup, not a rebuild and sort of the whole
        list (70,000 Events took 40 s to page through)."""
        remembered = _list_key(rt, resource_version, namespace, label_selector, field_selector)
        items = self._lists.get(remembered)
        if items is not None:
            self._lists.move_to_end(remembered)
            return items
        labels = parse_label_selector(label_selector) if label_selector else []
        fields = parse_field_selector(rt.key, field_selector) if field_selector else []
        items = []
        for key in sorted(state, key=_etcd_key):
            if namespace and rt.namespaced and key[0] != namespace:
                continue
            obj = state[key]
            if labels and not labels_match(obj["metadata"].get("labels") or {}, labels):
                continue
            if fields and not fields_match(obj, fields):
                continue
            items.append(obj)
        self._lists[remembered] = items
        if len(self._lists) > LISTS_REMEMBERED:
            self._lists.popitem(last=False)
        return items

    def count(self, resource: str) -> int:
        return len(self._objects[self.resource_type(resource, require_served=False).key])

    def events_since(self, resource: str, resource_version: int) -> EventList:
        """Stored events of `resource` after `resource_version`, oldest first; Gone if history lost them."""
        rt = self.resource_type(resource)
        if resource_version < self._compacted:
            raise Gone(f"too old resource version: {resource_version} ({self._compacted + 1})")
        found = []
        for rv, event_type, res, obj, _ in reversed(self._history):
            if rv <= resource_version:
                break
            if res == rt.key:
                found.append((event_type, obj))
        found.reverse()
        return found

    @property
    def oldest_resource_version(self) -> int:
        """The oldest resourceVersion a watch can still start from."""
        return self._compacted

    def compact(self) -> None:
        """Forget all history, as after an API server restart: older watches must relist."""
        self._history.clear()
        self._compacted = self.resource_version

    # ---- notifications -----------------------------------------------------------------------------------

    def subscribe(self, callback: Callback) -> Callable[[], None]:
        """Call `callback(event_type, resource, copy_of_object)` after every write; returns an unsubscribe."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Like subscribe, but with the stored (read-only!) object and the previous state; for the server."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, event_type: str, rt: ResourceType, obj: Obj, old: Obj | None) -> None:
        self._history.append((self.resource_version, event_type, rt.key, obj, old))
        if len(self._history) == self._history.maxlen:
            self._compacted = max(self._compacted, self._history[0][0] - 1)
        # Writes made by callbacks queue behind the current event so everyone sees events in order.
        self._pending.append((event_type, rt.key, obj, old))
        if self._notifying:
            return
        self._notifying = True
        try:
            while self._pending:
                etype, key, stored, previous = self._pending.popleft()
                for listener in list(self._listeners):
                    listener(etype, key, stored, previous)
                for callback in list(self._callbacks):
                    callback(etype, key, patching.copy_json(stored))
        finally:
            self._notifying = False

    def _audit(
        self,
        verb: str,
        rt: ResourceType,
        obj: Obj,
        subresource: str | None,
        manager: str,
        user: str | None,
        groups: Sequence[str],
    ) -> None:
        if user is None:
            return
        meta = obj.get("metadata", {})
        self.audit.append(
            {
                "time": rfc3339(self.now()),
                "user": user,
                "groups": list(groups),
                "verb": verb,
                "resource": rt.key,
                "namespace": meta.get("namespace"),
                "name": meta.get("name"),
                "subresource": subresource,
                "fieldManager": manager,
                "resourceVersion": meta.get("resourceVersion"),
            }
        )

    # ---- writes ------------------------------------------------------------------------------------------

    def _next_rv(self) -> str:
        self.resource_version += 1
        return str(self.resource_version)

    def _uid(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def create(
        self,
        resource: str,
        obj: Obj,
        *,
        manager: str = "kubesim",
        user: str | None = None,
        groups: Sequence[str] = (),
        drop_status: bool = False,
        implicit_namespace: bool | None = None,
        check: Check | None = None,
        operation: str = "Update",
        dry_run: bool = False,
    ) -> Obj:
        """Create `obj`. `drop_status` resets status like a real server does for kinds with a status
        subresource (the HTTP server sets it; trusted in-process writers may create with status).

        `implicit_namespace` (default: the store's `implicit_namespaces`): in-process writers (tests) may
        create into a namespace that does not exist yet and get it created first; the HTTP server passes
        False and gets 404 like a real server.
        `check` sees the object about to be stored and may raise (schema validation of HTTP writes)."""
        rt = self.resource_type(resource)
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata", {}), dict):
            raise BadRequest(f"the body of the request is not a valid {rt.kind} object")
        obj = patching.copy_json(obj)
        meta: Obj = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(self._rng.choice(_GENERATE_CHARS) for _ in range(5))
        name = meta.get("name")
        if not name:
            raise Invalid(
                f"{rt.kind}.{rt.group or 'core'} is invalid: metadata.name: Required value: name or "
                "generateName is required",
                details={"group": rt.group, "kind": rt.kind},
            )
        self._validate_name(rt, name)
        namespace = ""
        if rt.namespaced:
            namespace = meta.get("namespace") or "default"
            meta["namespace"] = namespace
            self._validate_name(rt, namespace, field="metadata.namespace")
            if ("", namespace) not in self._objects["namespaces"]:
                if not (self.implicit_namespaces if implicit_namespace is None else implicit_namespace):
                    raise NotFound(
                        f'namespaces "{namespace}" not found',
                        details={"name": namespace, "kind": "namespaces"},
                    )
                self.create("namespaces", {"metadata": {"name": namespace}}, manager=manager)
        else:
            meta.pop("namespace", None)
        key = (namespace, name)
        if key in self._objects[rt.key]:
            raise AlreadyExists(
                f'{rt.group_resource} "{name}" already exists',
                details={"name": name, "group": rt.group, "kind": rt.plural},
            )
        obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
        if drop_status and rt.status_subresource:
            obj.pop("status", None)
        if rt.key == "namespaces":
            obj.setdefault("spec", {"finalizers": ["kubernetes"]})
            obj["status"] = {"phase": "Active"}
        meta.pop("resourceVersion", None)
        meta.pop("managedFields", None)
        self._validate_metadata(rt, meta)
        if check is not None:
            check(obj)
        meta["uid"] = self._uid()
        meta["creationTimestamp"] = rfc3339(self.now())
        if rt.has_generation:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        fields = patching.fields_v1(obj)
        if operation == "Apply" and drop_status and rt.status_subresource:
            fields.pop("f:status", None)
        meta["managedFields"] = [self._managed_entry(rt, manager, operation, None, fields)]
        if dry_run:  # everything a create would do but storing it (no resourceVersion, no event)
            return obj
        meta["resourceVersion"] = self._next_rv()
        self._objects[rt.key][key] = obj
        self._index(obj, None, rt)
        self._audit("create", rt, obj, None, manager, user, groups)
        self._emit("ADDED", rt, obj, None)
        return patching.copy_json(obj)

    def _validate_name(self, rt: ResourceType, name: Any, field: str = "metadata.name") -> None:
        errors = validation.name_errors(rt.kind, name, field)
        if errors:
            raise invalid(rt, str(name), errors)

    def _validate_metadata(self, rt: ResourceType, meta: Obj) -> None:
        errors = validation.metadata_errors(meta)
        if errors:
            raise invalid(rt, str(meta.get("name", "")), errors)

    def replace(
        self,
        resource: str,
        obj: Obj,
        *,
        subresource: str | None = None,
        manager: str = "kubesim",
        user: str | None = None,
        groups: Sequence[str] = (),
        require_version: bool = False,
        check: Check | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """PUT: 409 Conflict when `obj.metadata.resourceVersion` is set and stale. With `require_version`
        (custom resources over HTTP) an update without a resourceVersion is rejected like a real server."""
        rt = self.resource_type(resource)
        self._check_subresource(rt, subresource)
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            raise BadRequest(f"the body of the request is not a valid {rt.kind} object")
        meta = obj["metadata"]
        name = meta.get("name")
        if not name:
            raise Invalid(f"{rt.kind} is invalid: metadata.name: Required value: name is required")
        old = self.get_raw(rt.key, meta.get("namespace"), name)
        wanted_rv = meta.get("resourceVersion")
        if wanted_rv in (None, "") and require_version:
            raise Invalid(
                f'{rt.kind}.{rt.group} "{name}" is invalid: metadata.resourceVersion: Invalid value: '
                "0x0: must be specified for an update",
                details={"name": name, "group": rt.group, "kind": rt.kind},
            )
        if wanted_rv not in (None, "") and str(wanted_rv) != old["metadata"]["resourceVersion"]:
            raise self._conflict(rt, name)
        if subresource == "scale":
            new = self._apply_scale(rt, old, obj)
        else:
            new = self._merge_write(rt, old, patching.copy_json(obj), subresource)
        if check is not None:
            check(new)
        result = self._update(rt, old, new, subresource, manager, "update", user, groups, dry_run=dry_run)
        return self.scale_of(rt, result) if subresource == "scale" else result

    def patch(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        body: Any,
        *,
        patch_type: str = "merge",
        subresource: str | None = None,
        manager: str = "kubesim",
        user: str | None = None,
        groups: Sequence[str] = (),
        check: Check | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """Apply a `merge`, `json` or `strategic` patch to the object or its `status`/`scale` subresource."""
        rt = self.resource_type(resource)
        self._check_subresource(rt, subresource)
        old = self.get_raw(rt.key, namespace, name)
        target = self.scale_of(rt, old) if subresource == "scale" else old
        body = patching.copy_json(body)
        try:
            if patch_type == "merge":
                if not isinstance(body, dict):
                    raise patching.PatchError("merge patch must be a JSON object", 400)
                patched = patching.merge_patch(target, body)
            elif patch_type == "strategic":
                if not isinstance(body, dict):
                    raise patching.PatchError("strategic merge patch must be a JSON object", 400)
                patched = patching.strategic_merge_patch(target, body)
            elif patch_type == "json":
                patched = patching.json_patch(target, body)
            else:
                raise BadRequest(f"unknown patch type {patch_type!r}")
        except patching.PatchError as error:
            cls = BadRequest if error.code == 400 else Invalid
            raise cls(error.message) from None
        if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
            raise Invalid(f"the patch made the {rt.kind} object invalid")
        wanted_rv = patched["metadata"].get("resourceVersion")
        if wanted_rv not in (None, "") and str(wanted_rv) != old["metadata"]["resourceVersion"]:
            raise self._conflict(rt, name)
        if subresource == "scale":
            new = self._apply_scale(rt, old, patched)
        else:
            new = self._merge_write(rt, old, patched, subresource)
        if check is not None:
            check(new)
        result = self._update(rt, old, new, subresource, manager, "patch", user, groups, dry_run=dry_run)
        return self.scale_of(rt, result) if subresource == "scale" else result

    def apply(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        applied: Obj,
        *,
        manager: str,
        force: bool = False,
        subresource: str | None = None,
        user: str | None = None,
        groups: Sequence[str] = (),
        implicit_namespace: bool | None = None,
        check: Check | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """Server-side apply of `applied` (a partial object) by field manager `manager`: creates the object
        if missing; 409 with every conflicting field unless `force`; see `kubesim.apply`."""
        rt = self.resource_type(resource)
        self._check_subresource(rt, subresource)
        if subresource == "scale":
            raise BadRequest("kubesim does not support apply on the scale subresource")
        applied = patching.copy_json(applied)
        meta = applied.get("metadata")
        if not isinstance(meta, dict) or meta.get("name") != name:
            given = (meta or {}).get("name")
            raise BadRequest(f"the name of the object ({given}) does not match the name on the URL ({name})")
        for field in ("resourceVersion", "managedFields", "uid", "creationTimestamp", "generation"):
            meta.pop(field, None)
        old = self._objects[rt.key].get(self._key(rt, namespace, name))
        if old is None:
            if subresource:
                raise self.not_found(rt, name)
            if rt.namespaced:
                meta["namespace"] = namespace or meta.get("namespace")
            return self.create(
                rt.key,
                applied,
                manager=manager,
                user=user,
                groups=groups,
                drop_status=True,
                implicit_namespace=implicit_namespace,
                check=check,
                operation="Apply",
                dry_run=dry_run,
            )
        if subresource == "status":
            applied = {k: v for k, v in applied.items() if k in ("apiVersion", "kind", "metadata", "status")}
        elif rt.status_subresource:
            applied.pop("status", None)
        applied_fields = patching.fields_v1(applied)
        if subresource == "status":
            applied_fields = {k: v for k, v in applied_fields.items() if k == "f:status"}
        # Like the API server, an entry records the subresource it was written through (status, scale).
        sub = subresource if subresource in ("status", "scale") else None
        entries = list(old["metadata"].get("managedFields") or [])
        mine = next(
            (
                e
                for e in entries
                if e.get("manager") == manager
                and e.get("operation") == "Apply"
                and e.get("subresource") == sub
            ),
            None,
        )
        others = [e for e in entries if e is not mine]
        found = ssa.conflicts(
            old, applied, applied_fields, [(ssa.describe_manager(e), e.get("fieldsV1") or {}) for e in others]
        )
        if found and not force:
            raise Conflict(
                ssa.conflict_message(found),
                details={
                    "name": name,
                    "group": rt.group,
                    "kind": rt.plural,
                    "causes": [
                        {
                            "reason": "FieldManagerConflict",
                            "message": f"conflict with {c.manager}",
                            "field": c.path,
                        }
                        for c in found
                    ],
                },
            )
        merged = ssa.merge(old, {k: v for k, v in applied.items() if k not in ("apiVersion", "kind")})
        # Fields this manager applied before and applies no more are removed, unless someone else owns them.
        dropped = patching.subtract((mine or {}).get("fieldsV1") or {}, applied_fields)
        for entry in others:
            dropped = patching.subtract(dropped, entry.get("fieldsV1") or {})
        merged = ssa.remove(merged, dropped)
        new = self._merge_write(rt, old, merged, subresource)
        if check is not None:
            check(new)
        taken = [p for p in ssa.leaves(applied_fields) if any(c.path == ssa.path_string(p) for c in found)]
        removed = patching.removed_fields(old, new)
        managed: ObjList = []
        for entry in entries:
            if entry is mine:
                continue
            fields = patching.subtract(ssa.strip_paths(entry.get("fieldsV1") or {}, taken), removed)
            if fields:
                managed.append(entry if fields == entry.get("fieldsV1") else {**entry, "fieldsV1": fields})
        managed.append(self._managed_entry(rt, manager, "Apply", sub, applied_fields))
        result = self._update(rt, old, new, subresource, manager, "patch", user, groups, managed, dry_run)
        return result

    def not_found(self, rt: ResourceType, name: str) -> NotFound:
        return NotFound(
            f'{rt.group_resource} "{name}" not found',
            details={"name": name, "group": rt.group, "kind": rt.plural},
        )

    def delete(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        *,
        user: str | None = None,
        groups: Sequence[str] = (),
        propagation: str = "Background",
        uid: str | None = None,
        resource_version: str | None = None,
        manager: str = "kubesim",
        dry_run: bool = False,
    ) -> Obj:
        """Remove at once and emit DELETED with the last state; dependents are garbage-collected unless
        `propagation` is Orphan. `uid`/`resource_version` are DeleteOptions preconditions."""
        rt = self.resource_type(resource)
        old = self.get_raw(rt.key, namespace, name)
        if uid and uid != old["metadata"]["uid"]:
            raise Conflict(
                f'Operation cannot be fulfilled on {rt.group_resource} "{name}": Precondition failed: '
                f"UID in precondition: {uid}, UID in object meta: {old['metadata']['uid']}",
                details={"name": name, "group": rt.group, "kind": rt.plural},
            )
        if resource_version and resource_version != old["metadata"]["resourceVersion"]:
            raise self._conflict(rt, name)
        if dry_run:
            return patching.copy_json(old)
        return self._delete(rt, old, propagation, manager, user, groups)

    def _delete(
        self,
        rt: ResourceType,
        old: Obj,
        propagation: str,
        manager: str,
        user: str | None,
        groups: Sequence[str],
    ) -> Obj:
        meta = old["metadata"]
        key = self._key(rt, meta.get("namespace"), meta["name"])
        if self._objects[rt.key].get(key) is not old:  # already removed by a cascade
            return patching.copy_json(old)
        del self._objects[rt.key][key]
        last = {**old, "metadata": {**meta, "resourceVersion": self._next_rv()}}
        self._index(None, old, rt)
        self._audit("delete", rt, last, None, manager, user, groups)
        self._emit("DELETED", rt, last, old)
        if propagation != "Orphan":
            self._collect(rt, old, manager)
        return patching.copy_json(last)

    def _collect(self, rt: ResourceType, deleted: Obj, manager: str) -> None:
        """Garbage collection: dependents whose owners are all gone; contents of namespaces and CRDs."""
        uid = deleted["metadata"]["uid"]
        for dep_uid in sorted(self._dependents.pop(uid, ())):
            where = self._by_uid.get(dep_uid)
            if where is None:
                continue
            dep_rt = BY_KEY[where[0]]
            dep = self._objects[dep_rt.key].get((where[1], where[2]))
            if dep is None:
                continue
            owners = [ref.get("uid") for ref in dep["metadata"].get("ownerReferences") or []]
            if all(o not in self._by_uid for o in owners):
                self._delete(dep_rt, dep, "Background", "generic-garbage-collector", None, ())
        if rt.key == "namespaces":
            ns = deleted["metadata"]["name"]
            for other in RESOURCES:
                if other.namespaced:
                    for key in [k for k in self._objects[other.key] if k[0] == ns]:
                        if key in self._objects[other.key]:
                            self._delete(
                                other,
                                self._objects[other.key][key],
                                "Background",
                                "namespace-controller",
                                None,
                                (),
                            )
        elif rt.key == CRD_KEY:
            for other in RESOURCES:
                if other.custom and other.crd_name == deleted["metadata"]["name"]:
                    for obj in list(self._objects[other.key].values()):
                        self._delete(other, obj, "Background", "apiextensions-controller", None, ())

    # ---- write helpers -----------------------------------------------------------------------------------

    def _conflict(self, rt: ResourceType, name: str) -> Conflict:
        return Conflict(
            f'Operation cannot be fulfilled on {rt.group_resource} "{name}": the object has been '
            "modified; please apply your changes to the latest version and try again",
            details={"name": name, "group": rt.group, "kind": rt.plural},
        )

    def _check_subresource(self, rt: ResourceType, subresource: str | None) -> None:
        if subresource is None:
            return
        if (subresource == "status" and rt.status_subresource) or (subresource == "scale" and rt.scale):
            return
        raise NotFound(
            f"the server could not find the requested resource ({rt.group_resource}/{subresource})"
        )

    def _merge_write(self, rt: ResourceType, old: Obj, new: Obj, subresource: str | None) -> Obj:
        """The object a write to the main resource or `/status` produces, from the requested object."""
        self._check_subresource(rt, subresource)
        if subresource == "status":
            # Writes to /status ignore everything but status.
            result = dict(old)
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
            return result
        meta = dict(new.get("metadata") or {})
        old_meta = old["metadata"]
        for field in (
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "generation",
            "resourceVersion",
            "managedFields",
        ):
            if field in old_meta:
                meta[field] = old_meta[field]
            else:
                meta.pop(field, None)
        result = {**new, "metadata": meta, "apiVersion": rt.api_version, "kind": rt.kind}
        if rt.status_subresource:  # the main resource keeps the stored status
            if "status" in old:
                result["status"] = old["status"]
            else:
                result.pop("status", None)
        return result

    def _apply_scale(self, rt: ResourceType, old: Obj, scale: Obj) -> Obj:
        assert rt.scale is not None
        replicas = (scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise Invalid(
                f'Scale.autoscaling "{old["metadata"]["name"]}" is invalid: spec.replicas: Invalid '
                f"value: {replicas!r}: must be greater than or equal to 0"
            )
        return {**old, "spec": {**(old.get("spec") or {}), "replicas": replicas}}

    def scale_of(self, rt: ResourceType, obj: Obj) -> Obj:
        """The autoscaling/v1 Scale view of `obj`."""
        if rt.scale is None:
            raise NotFound(f"the server could not find the requested resource ({rt.group_resource}/scale)")
        meta = obj["metadata"]
        scale_meta = {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        }
        status: Obj = {"replicas": json_path_get(obj, rt.scale.status_replicas) or 0}
        selector = selector_string(json_path_get(obj, rt.scale.selector))
        if selector:
            status["selector"] = selector
        spec_replicas = json_path_get(obj, rt.scale.spec_replicas)
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": scale_meta,
            "spec": {"replicas": spec_replicas if spec_replicas is not None else 1},
            "status": status,
        }

    def _update(
        self,
        rt: ResourceType,
        old: Obj,
        new: Obj,
        subresource: str | None,
        manager: str,
        verb: str,
        user: str | None,
        groups: Sequence[str],
        managed: ObjList | None = None,
        dry_run: bool = False,
    ) -> Obj:
        if rt.key == CRD_KEY and subresource is None and new.get("spec") != old.get("spec"):
            raise MethodNotAllowed("kubesim serves CustomResourceDefinitions read-only")
        new_meta = dict(new["metadata"])
        old_meta = old["metadata"]
        if rt.has_generation and new.get("spec") != old.get("spec"):
            new_meta["generation"] = int(old_meta.get("generation", 1)) + 1
        new_meta["resourceVersion"] = old_meta["resourceVersion"]
        new_meta["managedFields"] = old_meta.get("managedFields", [])
        new = {**new, "metadata": new_meta}
        if new_meta.get("labels") != old_meta.get("labels") or new_meta.get("annotations") != old_meta.get(
            "annotations"
        ):
            self._validate_metadata(rt, new_meta)
        if managed is not None:
            new_meta["managedFields"] = managed
        if new == old:  # a no-op write: no new resourceVersion, no event
            return patching.copy_json(old)
        if managed is None:
            new_meta["managedFields"] = self._managed_fields(rt, old, new, manager, subresource)
        if dry_run:  # everything an update would do but storing it
            return patching.copy_json(new)
        new_meta["resourceVersion"] = self._next_rv()
        key = self._key(rt, new_meta.get("namespace"), new_meta["name"])
        self._objects[rt.key][key] = new
        self._index(new, old, rt)
        self._audit(verb, rt, new, subresource, manager, user, groups)
        self._emit("MODIFIED", rt, new, old)
        return patching.copy_json(new)

    def _managed_entry(
        self,
        rt: ResourceType,
        manager: str,
        operation: str,
        subresource: str | None,
        fields: patching.FieldSet,
    ) -> Obj:
        entry: Obj = {
            "manager": manager,
            "operation": operation,
            "apiVersion": rt.api_version,
            "time": rfc3339(self.now()),
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
        }
        if subresource:
            entry["subresource"] = subresource
        return entry

    def _managed_fields(
        self, rt: ResourceType, old: Obj, new: Obj, manager: str, subresource: str | None
    ) -> ObjList:
        """The writer takes ownership of the fields it changed; others lose them; removed fields go."""
        changed = patching.fields_v1(new, old)
        removed = patching.removed_fields(old, new)
        # Like the API server, an entry records the subresource it was written through (status, scale).
        sub = subresource if subresource in ("status", "scale") else None
        entries: list[Obj] = []
        mine: Obj | None = None
        for entry in old["metadata"].get("managedFields") or []:
            if (
                entry.get("manager") == manager
                and entry.get("operation") == "Update"
                and entry.get("subresource") == sub
            ):
                mine = entry
                continue
            fields = patching.subtract(patching.subtract(entry.get("fieldsV1") or {}, changed), removed)
            if fields:
                entries.append(entry if fields == entry.get("fieldsV1") else {**entry, "fieldsV1": fields})
        owned = patching.subtract(patching.union((mine or {}).get("fieldsV1") or {}, changed), removed)
        if owned:
            entries.append(self._managed_entry(rt, manager, "Update", sub, owned))
        return entries

    def _index(self, new: Obj | None, old: Obj | None, rt: ResourceType) -> None:
        """Keep the uid and owner-reference indexes used by garbage collection up to date."""
        if old is not None:
            uid = old["metadata"]["uid"]
            if new is None:
                self._by_uid.pop(uid, None)
            for ref in old["metadata"].get("ownerReferences") or []:
                deps = self._dependents.get(ref.get("uid"))
                if deps is not None:
                    deps.discard(uid)
        if new is not None:
            meta = new["metadata"]
            self._by_uid[meta["uid"]] = (rt.key, meta.get("namespace", ""), meta["name"])
            for ref in meta.get("ownerReferences") or []:
                if isinstance(ref, dict) and ref.get("uid"):
                    self._dependents.setdefault(ref["uid"], set()).add(meta["uid"])

    def objects(self, resource: str) -> Iterator[Obj]:
        """Every stored object of a kind (read-only), in no particular order."""
        return iter(self._objects[self.resource_type(resource, require_served=False).key].values())


LISTS_REMEMBERED = 16  # lists kept for continue chains (references to stored objects: small)


def _etcd_key(key: tuple[str, str]) -> str:
    """A stored object's (namespace, name) as the tail of its etcd key, whose byte order lists follow."""
    return f"{key[0]}/{key[1]}"


def _list_key(
    rt: ResourceType,
    resource_version: int,
    namespace: str | None,
    label_selector: str | None,
    field_selector: str | None,
) -> tuple[str, int, str, str, str]:
    """What a list is remembered by (``Store._listed``)."""
    return (rt.key, resource_version, namespace or "", label_selector or "", field_selector or "")
