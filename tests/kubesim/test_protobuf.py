"""The protobuf bodies kubectl 1.32 sends for `kubectl create namespace|deployment|service|job`."""

from __future__ import annotations

import pytest

from kubesim import protobuf


def _field(number: int, payload: bytes) -> bytes:
    return bytes([number << 3 | 2, len(payload)]) + payload


def _namespace_body(name: str, labels: dict[str, str]) -> bytes:
    meta = _field(1, name.encode())
    for key, value in labels.items():
        meta += _field(11, _field(1, key.encode()) + _field(2, value.encode()))
    raw = _field(1, meta) + _field(2, b"") + _field(3, b"")
    type_meta = _field(1, b"v1") + _field(2, b"Namespace")
    return (
        protobuf.MAGIC
        + _field(1, type_meta)
        + _field(2, raw)
        + _field(4, b"application/vnd.kubernetes.protobuf")
    )


def test_it_decodes_a_namespace() -> None:
    obj = protobuf.decode(_namespace_body("demo", {"team": "a"}))
    assert obj == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "demo", "labels": {"team": "a"}},
    }


def test_pointer_fields_keep_zero_and_others_drop_it() -> None:
    spec = bytes([1 << 3, 0]) + bytes([5 << 3, 0])  # replicas: 0 (a pointer), minReadySeconds: 0
    assert protobuf.message("DeploymentSpec", spec) == {"replicas": 0}
    port = _field(1, b"http") + bytes([3 << 3, 80]) + _field(4, bytes([1 << 3, 1]) + _field(3, b"web"))
    assert protobuf.message("ServicePort", port) == {"name": "http", "port": 80, "targetPort": "web"}


def test_other_kinds_and_garbage_are_refused() -> None:
    with pytest.raises(protobuf.ProtobufError):
        protobuf.decode(b'{"kind":"Namespace"}')
    pod = protobuf.MAGIC + _field(1, _field(1, b"v1") + _field(2, b"Pod")) + _field(2, b"")
    with pytest.raises(protobuf.ProtobufError, match="cannot decode v1/Pod"):
        protobuf.decode(pod)
