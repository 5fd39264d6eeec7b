"""Decoding the Kubernetes protobuf request bodies kubectl 1.32 sends for the core kinds it creates typed.

kubectl's typed clients (`kubectl create namespace|deployment|service|job`) send
`application/vnd.kubernetes.protobuf`: the `k8s\\0` magic, then a `runtime.Unknown` envelope (TypeMeta, raw
bytes) whose raw bytes are the object's message. The fields those commands set are decoded, by the field
numbers of Kubernetes' generated.proto, into the JSON form the store keeps.

Non-goals: encoding responses (kubesim answers JSON, which kubectl accepts); fields those commands do not set
(skipped); any other kind (the server answers 415 for those, and its discovery offers only JSON).
"""

from __future__ import annotations

from typing import Any

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


class ProtobufError(ValueError):
    pass


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) pairs of a message: ints for varints, bytes for length-delimited fields."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            out.append((number, value))
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ProtobufError("truncated field")
            out.append((number, data[pos : pos + length]))
            pos += length
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
    return out


def _text(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a string")
    return value.decode()


def _signed(value: int | bytes) -> int:
    if not isinstance(value, int):
        raise ProtobufError("expected an integer")
    return value - (1 << 64) if value >= 1 << 63 else value


# The messages kubectl's typed `create` subcommands send for kinds kubesim serves, from the field numbers of
# Kubernetes' generated.proto files. A field is (JSON name, type); types ending in "?" are pointers in the Go
# types (kept when zero), the others are omitted when empty, as their JSON `omitempty` does. "[]" repeats,
# "{}" is a map whose values have the given type. Fields not listed are skipped.
Field = tuple[str, str]
MESSAGES: dict[str, dict[int, Field]] = {
    "ObjectMeta": {
        1: ("name", "str"),
        2: ("generateName", "str"),
        3: ("namespace", "str"),
        11: ("labels", "{}str"),
        12: ("annotations", "{}str"),
        14: ("finalizers", "[]str"),
    },
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec")},
    "NamespaceSpec": {1: ("finalizers", "[]str")},
    "LabelSelector": {1: ("matchLabels", "{}str"), 2: ("matchExpressions", "[]LabelSelectorRequirement")},
    "LabelSelectorRequirement": {1: ("key", "str"), 2: ("operator", "str"), 3: ("values", "[]str")},
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec")},
    "PodSpec": {
        2: ("containers", "[]Container"),
        3: ("restartPolicy", "str"),
        4: ("terminationGracePeriodSeconds", "int?"),
        5: ("activeDeadlineSeconds", "int?"),
        6: ("dnsPolicy", "str"),
        7: ("nodeSelector", "{}str"),
        8: ("serviceAccountName", "str"),
        20: ("initContainers", "[]Container"),
    },
    "Container": {
        1: ("name", "str"),
        2: ("image", "str"),
        3: ("command", "[]str"),
        4: ("args", "[]str"),
        5: ("workingDir", "str"),
        6: ("ports", "[]ContainerPort"),
        7: ("env", "[]EnvVar"),
        8: ("resources", "ResourceRequirements"),
        13: ("terminationMessagePath", "str"),
        14: ("imagePullPolicy", "str"),
        20: ("terminationMessagePolicy", "str"),
    },
    "ContainerPort": {
        1: ("name", "str"),
        2: ("hostPort", "int"),
        3: ("containerPort", "int"),
        4: ("protocol", "str"),
        5: ("hostIP", "str"),
    },
    "EnvVar": {1: ("name", "str"), 2: ("value", "str")},
    "ResourceRequirements": {1: ("limits", "{}Quantity"), 2: ("requests", "{}Quantity")},
    "Deployment": {1: ("metadata", "ObjectMeta"), 2: ("spec", "DeploymentSpec")},
    "DeploymentSpec": {
        1: ("replicas", "int?"),
        2: ("selector", "LabelSelector"),
        3: ("template", "PodTemplateSpec"),
        4: ("strategy", "DeploymentStrategy"),
        5: ("minReadySeconds", "int"),
        6: ("revisionHistoryLimit", "int?"),
        7: ("paused", "bool"),
        9: ("progressDeadlineSeconds", "int?"),
    },
    "DeploymentStrategy": {1: ("type", "str"), 2: ("rollingUpdate", "RollingUpdateDeployment")},
    "RollingUpdateDeployment": {1: ("maxUnavailable", "IntOrString"), 2: ("maxSurge", "IntOrString")},
    "Service": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ServiceSpec")},
    "ServiceSpec": {
        1: ("ports", "[]ServicePort"),
        2: ("selector", "{}str"),
        3: ("clusterIP", "str"),
        4: ("type", "str"),
        5: ("externalIPs", "[]str"),
        7: ("sessionAffinity", "str"),
        10: ("externalName", "str"),
        18: ("clusterIPs", "[]str"),
    },
    "ServicePort": {
        1: ("name", "str"),
        2: ("protocol", "str"),
        3: ("port", "int"),
        4: ("targetPort", "IntOrString"),
        5: ("nodePort", "int"),
        6: ("appProtocol", "str?"),
    },
    "Job": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec")},
    "JobSpec": {
        1: ("parallelism", "int?"),
        2: ("completions", "int?"),
        3: ("activeDeadlineSeconds", "int?"),
        4: ("selector", "LabelSelector"),
        5: ("manualSelector", "bool?"),
        6: ("template", "PodTemplateSpec"),
        7: ("backoffLimit", "int?"),
        8: ("ttlSecondsAfterFinished", "int?"),
        9: ("completionMode", "str?"),
        10: ("suspend", "bool?"),
    },
}


def _scalar(kind: str, value: int | bytes) -> Any:
    base = kind.rstrip("?")
    if base == "str":
        return _text(value)
    if base == "int":
        return _signed(value)
    if base == "bool":
        return bool(_signed(value))
    if not isinstance(value, bytes):
        raise ProtobufError(f"expected a {base} message")
    if base == "IntOrString":
        parts = dict(fields(value))
        return _text(parts.get(3, b"")) if _signed(parts.get(1, 0)) == 1 else _signed(parts.get(2, 0))
    if base == "Quantity":
        return _text(dict(fields(value)).get(1, b""))
    return message(base, value)


def _empty(kind: str, value: Any) -> bool:
    return not kind.endswith("?") and value in ("", 0, False, {}, [])


def message(name: str, data: bytes) -> dict[str, Any]:
    """Decode message `name` of MESSAGES into its JSON form."""
    spec = MESSAGES[name]
    out: dict[str, Any] = {}
    for number, value in fields(data):
        if number not in spec:
            continue
        key, kind = spec[number]
        if kind.startswith("[]"):
            out.setdefault(key, []).append(_scalar(kind[2:], value))
        elif kind.startswith("{}"):
            if not isinstance(value, bytes):
                raise ProtobufError("expected a map entry")
            entry = dict(fields(value))
            out.setdefault(key, {})[_text(entry.get(1, b""))] = _scalar(kind[2:], entry.get(2, b""))
        else:
            decoded = _scalar(kind, value)
            if _empty(kind, decoded):
                out.pop(key, None)
            else:
                out[key] = decoded
    return out


KINDS = {
    ("v1", "Namespace"): "Namespace",
    ("v1", "Service"): "Service",
    ("apps/v1", "Deployment"): "Deployment",
    ("batch/v1", "Job"): "Job",
}


def decode(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object; ProtobufError for what kubesim cannot read."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf magic number")
    envelope = dict(fields(body[len(MAGIC) :]))
    type_meta = envelope.get(1)
    raw = envelope.get(2, b"")
    if not isinstance(type_meta, bytes) or not isinstance(raw, bytes):
        raise ProtobufError("the body has no runtime.Unknown envelope")
    tm = dict(fields(type_meta))
    api_version, kind = _text(tm.get(1, b"")), _text(tm.get(2, b""))
    name = KINDS.get((api_version, kind))
    if name is None:
        raise ProtobufError(f"kubesim cannot decode {api_version}/{kind} from protobuf")
    return {"apiVersion": api_version, "kind": kind, **message(name, raw)}
