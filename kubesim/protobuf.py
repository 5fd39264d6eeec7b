"""Decoding the Kubernetes protobuf request bodies kubectl 1.32 sends for the core kinds it creates typed.

kubectl's typed clients (`kubectl create namespace`) send `application/vnd.kubernetes.protobuf`: the `k8s\\0`
magic, then a `runtime.Unknown` envelope (TypeMeta, raw bytes) whose raw bytes are the object's message. Only
the messages kubectl creates that way for kinds kubesim serves are decoded — Namespace, with ObjectMeta's
name, generateName, namespace, labels, annotations and finalizers — into the JSON form the store keeps.

Non-goals: encoding responses (kubesim answers JSON, which kubectl accepts), any other kind (the server
answers
415 for those, and its discovery offers only JSON).
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


def _map_entry(value: int | bytes) -> tuple[str, str]:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a map entry")
    entry = dict(fields(value))
    return _text(entry.get(1, b"")), _text(entry.get(2, b""))


def object_meta(data: bytes) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    names = {1: "name", 2: "generateName", 3: "namespace", 6: "resourceVersion"}
    for number, value in fields(data):
        if number in names:
            meta[names[number]] = _text(value)
        elif number in (11, 12):
            key, text = _map_entry(value)
            meta.setdefault("labels" if number == 11 else "annotations", {})[key] = text
        elif number == 14:
            meta.setdefault("finalizers", []).append(_text(value))
    return meta


def _namespace(raw: bytes) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace"}
    for number, value in fields(raw):
        if number == 1 and isinstance(value, bytes):
            obj["metadata"] = object_meta(value)
        elif number == 2 and isinstance(value, bytes):
            finalizers = [_text(v) for n, v in fields(value) if n == 1]
            obj["spec"] = {"finalizers": finalizers} if finalizers else {}
    return obj


DECODERS = {("v1", "Namespace"): _namespace}


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
    decoder = DECODERS.get((api_version, kind))
    if decoder is None:
        raise ProtobufError(f"kubesim cannot decode {api_version}/{kind} from protobuf")
    return decoder(raw)
