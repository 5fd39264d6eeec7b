"""Static credentials — a kubeconfig's token, token file or client certificate, or the pod's service
account — read without the official client.

Importing the official loader (``kubernetes.aio.config``) imports the whole ``kubernetes`` package, both
generated clients included: ~0.25 s of CPU and ~18 MB at every start of a watcher, whose own client
(``connection.KubeApi``) reads only the server, the CA, the client certificate and the ``Authorization``
header. ``read`` follows the official loader step by step for those. It declines (returns None) exec
plugins, auth providers and basic auth, and anything the official loader would reject or read in a way
not followed here; the caller then runs the official loader, which reads it or reports what is wrong. So
a configuration read here is exactly what the official loader would give.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import os
import tempfile
import time
from dataclasses import dataclass
from typing import Any

SERVICE_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"
SERVICE_CA = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
TOKEN_REREAD_SECONDS = 60.0  # the official client re-reads the service account's token once a minute


class ConfigError(Exception):
    """The kubeconfig or in-cluster configuration is missing or wrong; the message says what."""


class Declined(Exception):
    """Not read here: the official loader's to read, or to report."""


@dataclass
class StaticConfiguration:
    """What ``KubeApi`` reads of the official ``Configuration``, with the same defaults."""

    host: str = ""
    ssl_ca_cert: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify_ssl: bool = True
    authorization: str | None = None
    token_file: str | None = None  # the service account's, which the kubelet rotates: re-read now and then
    token_read_at: float = float("-inf")

    async def auth_settings(self) -> dict[str, dict[str, str]]:
        """As the official ``Configuration.auth_settings()``."""
        if self.token_file is not None and time.monotonic() - self.token_read_at >= TOKEN_REREAD_SECONDS:
            self.authorization = "bearer " + _service_token(self.token_file)
            self.token_read_at = time.monotonic()
        if not self.authorization:
            return {}
        header = {"type": "api_key", "in": "header", "key": "authorization", "value": self.authorization}
        return {"BearerToken": header}


def read(path: str | None, context: str | None) -> StaticConfiguration | None:
    """The configuration from the kubeconfig ``path`` (its ``context``), or from the pod's service account
    when ``path`` is None; None when the official loader must read it."""
    try:
        return from_service_account() if path is None else from_kubeconfig(path, context)
    except Exception:  # declined, or anything unexpected: the official loader reads it, or says what is wrong
        return None


def from_service_account() -> StaticConfiguration:
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise Declined
    with open(SERVICE_CA) as f:
        if not f.read():
            raise Declined
    address = f"[{host}]:{port}" if ":" in host or "%" in host else f"{host}:{port}"
    config = StaticConfiguration(host="https://" + address, ssl_ca_cert=SERVICE_CA, token_file=SERVICE_TOKEN)
    config.authorization = "bearer " + _service_token(SERVICE_TOKEN)
    config.token_read_at = time.monotonic()
    return config


def _service_token(path: str) -> str:
    with open(path) as f:
        token = f.read()
    if not token:
        raise ConfigError("Token file exists but empty.")
    return token


def from_kubeconfig(path: str, context: str | None) -> StaticConfiguration:
    import yaml  # here: a pod's service account needs none (~15 ms of each start)

    # The official loader splits a path at ':' and expands '~'; a path that is not a file is its error.
    if ":" in path or path.startswith("~") or not os.path.isfile(path):
        raise Declined
    with open(path) as f:
        config = yaml.safe_load(f)
    if not isinstance(config, dict):
        raise Declined
    named = {item: _by_name(config.get(item)) for item in ("clusters", "contexts", "users")}
    current = config.get("current-context")
    if context is not None:
        _select(named, current)  # the official check that the context exists reads the current one too
    cluster, user = _select(named, current if context is None else context)
    base = os.path.abspath(os.path.dirname(path))  # relative file names are relative to the kubeconfig

    result = StaticConfiguration()
    if user:
        if "exec" in user:
            raise Declined
        token = _token(user, base)
        if token:
            result.authorization = f"Bearer {token}"
        elif "username" in user and "password" in user:
            raise Declined
    if "server" in cluster:
        server = cluster["server"]
        if not isinstance(server, str):
            raise Declined
        result.host = server.rstrip("/")
        if result.host.startswith("https"):
            if user is None:
                raise Declined  # the official loader fails reading the user's certificate
            result.ssl_ca_cert = _file(cluster, "certificate-authority", base)
            result.cert_file = _file(user, "client-certificate", base)
            result.key_file = _file(user, "client-key", base)
    if "insecure-skip-tls-verify" in cluster:
        result.verify_ssl = not _present(cluster["insecure-skip-tls-verify"])
    # Read by the official loader into fields KubeApi does not use; an empty one is its error.
    for key in ("tls-server-name", "proxy-url"):
        if key in cluster:
            _present(cluster[key])
    return result


def _by_name(entries: Any) -> dict[str, dict[str, Any]]:
    entries = entries or []
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and isinstance(e.get("name"), str) for e in entries
    ):
        raise Declined
    by_name = {e["name"]: e for e in entries}
    if len(by_name) != len(entries):
        raise Declined  # the official loader keeps the first of a name
    return by_name


def _select(named: dict[str, dict[str, dict[str, Any]]], name: Any) -> tuple[dict[str, Any], Any]:
    """The cluster and user (None if the context names none that exists) of the context ``name``."""
    context = named["contexts"].get(name)
    body = context.get("context") if context is not None else None
    if not isinstance(body, dict):
        raise Declined
    user = None
    if body.get("user") and named["users"]:
        entry = named["users"].get(body["user"])
        if entry is not None:
            user = entry.get("user")
            if not isinstance(user, dict) or "auth-provider" in user:
                raise Declined
    entry = named["clusters"].get(_present(body.get("cluster")))
    cluster = entry.get("cluster") if entry is not None else None
    if not isinstance(cluster, dict):
        raise Declined
    return cluster, user


def _token(user: dict[str, Any], base: str) -> str | None:
    """``token``, else the content of ``tokenFile`` (as is)."""
    if "token" in user:
        return _string(user["token"])
    if "tokenFile" in user:
        with open(os.path.normpath(os.path.join(base, _string(user["tokenFile"])))) as f:
            return f.read()
    return None


def _file(entry: dict[str, Any], key: str, base: str) -> str | None:
    """The file named by ``key``, else a temporary file holding the base64 ``key-data`` (which wins)."""
    if f"{key}-data" in entry:
        data = _string(entry[f"{key}-data"])
        if not data:
            return None
        path = _temporary_file(base64.standard_b64decode(data.encode()))
    elif key in entry:
        path = os.path.normpath(os.path.join(base, _string(entry[key])))
    else:
        return None
    if not os.path.isfile(path):
        raise Declined
    return path


def _present(value: Any) -> Any:
    if value is None:
        raise Declined  # the official loader takes a key given no value for a missing key
    return value


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise Declined
    return value


_temporary_files: dict[bytes, str] = {}


def _temporary_file(content: bytes) -> str:
    """A file holding ``content`` for the process's life (one per content), as the official loader keeps
    inline certificates and keys: the SSL context reads files."""
    if content not in _temporary_files:
        if not _temporary_files:
            atexit.register(_remove_temporary_files)
        fd, name = tempfile.mkstemp()
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        _temporary_files[content] = name
    return _temporary_files[content]


def _remove_temporary_files() -> None:
    for name in _temporary_files.values():
        with contextlib.suppress(OSError):
            os.remove(name)
    _temporary_files.clear()
