"""Static credentials read without the official client are exactly what the official loader reads, and
everything else is left to the official loader, errors included."""

from __future__ import annotations

import asyncio
import base64
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard.kube import static_config
from dashboard.kube.connection import ConfigError, KubeApi, load_configuration

CA, CERT, KEY = b"-- a CA --\n", b"-- a client certificate --\n", b"-- a client key --\n"


def b64(content: bytes) -> str:
    return base64.b64encode(content).decode()


@pytest.fixture(scope="module")
def files() -> Iterator[Path]:
    """A folder with a CA, a client certificate and key, and a token file, beside the kubeconfigs."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder)
        (path / "ca.pem").write_bytes(CA)
        (path / "client.crt").write_bytes(CERT)
        (path / "client.key").write_bytes(KEY)
        (path / "token").write_text("from-a-file")
        yield path


def write(folder: Path, config: Any, name: str = "kubeconfig") -> str:
    path = folder / name
    path.write_text(yaml.safe_dump(config))
    return str(path)


def kubeconfig(cluster: dict[str, Any], user: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    context = {"cluster": "c", "user": "u"} if user is not None else {"cluster": "c"}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "contexts": [{"name": "x", "context": context}],
        "users": [{"name": "u", "user": user}] if user is not None else [],
        "current-context": "x",
        **extra,
    }


def content(path: str | None) -> bytes | None:
    return None if path is None else Path(path).read_bytes()


async def assert_the_same(read: Any, official: Any) -> None:
    assert (read.host, read.verify_ssl) == (official.host, official.verify_ssl)
    for field in ("ssl_ca_cert", "cert_file", "key_file"):
        assert content(getattr(read, field)) == content(getattr(official, field)), field
    assert await read.auth_settings() == await official.auth_settings()


HTTPS = "https://127.0.0.1:6443/"
READ_HERE = {
    "a token and an inline CA": kubeconfig(
        {"server": HTTPS, "certificate-authority-data": b64(CA)}, {"token": "t"}
    ),
    "a token file and a CA file, named relative to the kubeconfig": kubeconfig(
        {"server": HTTPS, "certificate-authority": "ca.pem"}, {"tokenFile": "token"}
    ),
    "client certificate files": kubeconfig(
        {"server": HTTPS, "certificate-authority": "ca.pem"},
        {"client-certificate": "client.crt", "client-key": "./client.key"},
    ),
    "an inline client certificate": kubeconfig(
        {"server": HTTPS}, {"client-certificate-data": b64(CERT), "client-key-data": b64(KEY)}
    ),
    "insecure-skip-tls-verify": kubeconfig(
        {"server": HTTPS, "insecure-skip-tls-verify": True}, {"token": "t"}
    ),
    "plain http without a user": kubeconfig({"server": "http://127.0.0.1:8001"}),
    "inline data over a file": kubeconfig(
        {"server": HTTPS, "certificate-authority": "missing.pem", "certificate-authority-data": b64(CA)}, {}
    ),
    "an empty token": kubeconfig({"server": HTTPS}, {"token": "", "tokenFile": "token"}),
    "keys the loader ignores or the watcher does not use": kubeconfig(
        {
            "server": HTTPS,
            "tls-server-name": "api",
            "proxy-url": "http://proxy:3128",
            "extensions": [{"x": 1}],
        },
        {"token": "t", "as": "someone", "as-groups": ["g"]},
        preferences={},
    ),
    "a context that names a user nobody lists": {
        **kubeconfig({"server": "http://127.0.0.1:8001"}, {"token": "t"}),
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "ghost"}}],
    },
    "no server": kubeconfig({}, {"token": "t"}),
}


@pytest.mark.parametrize("config", READ_HERE.values(), ids=READ_HERE.keys())
async def test_static_credentials_are_read_as_the_official_loader_reads_them(
    files: Path, config: Any
) -> None:
    path = write(files, config)

    read = static_config.read(path, None)

    assert read is not None
    await assert_the_same(read, await load_configuration(path))


async def test_a_context_other_than_the_current_one_is_read_as_the_official_loader_reads_it(
    files: Path,
) -> None:
    config = kubeconfig({"server": "http://127.0.0.1:8001"})
    config["clusters"].append({"name": "d", "cluster": {"server": HTTPS, "insecure-skip-tls-verify": True}})
    config["contexts"].append({"name": "y", "context": {"cluster": "d", "user": "v"}})
    config["users"] = [{"name": "v", "user": {"token": "for-y"}}]
    path = write(files, config)

    read = static_config.read(path, "y")

    assert read is not None and read.host == HTTPS.rstrip("/")
    await assert_the_same(read, await load_configuration(path, "y"))


LEFT_TO_THE_OFFICIAL_LOADER = {
    "an exec plugin": kubeconfig({"server": HTTPS}, {"exec": {"command": "aws", "apiVersion": "v1"}}),
    "an auth provider": kubeconfig({"server": HTTPS}, {"auth-provider": {"name": "oidc", "config": {}}}),
    "basic auth": kubeconfig({"server": HTTPS}, {"username": "admin", "password": "secret"}),
    "a missing CA file": kubeconfig(
        {"server": HTTPS, "certificate-authority": "missing.pem"}, {"token": "t"}
    ),
    "a token without a value": kubeconfig({"server": HTTPS}, {"token": None}),
    "https without a user": kubeconfig({"server": HTTPS}),
    "inline data that is not base64": kubeconfig({"server": HTTPS, "certificate-authority-data": "a"}, {}),
    "two clusters of one name": {
        **kubeconfig({"server": HTTPS}, {}),
        "clusters": [{"name": "c", "cluster": {"server": HTTPS}}, {"name": "c", "cluster": {}}],
    },
    "no current context": {
        k: v for k, v in kubeconfig({"server": HTTPS}, {}).items() if k != "current-context"
    },
    "not a mapping": ["clusters"],
}


@pytest.mark.parametrize(
    "config", LEFT_TO_THE_OFFICIAL_LOADER.values(), ids=LEFT_TO_THE_OFFICIAL_LOADER.keys()
)
def test_anything_else_is_left_to_the_official_loader(files: Path, config: Any) -> None:
    assert static_config.read(write(files, config), None) is None


def test_a_path_the_official_loader_would_split_or_expand_is_left_to_it(files: Path) -> None:
    config = kubeconfig({"server": "http://127.0.0.1:8001"})
    assert static_config.read(write(files, config, "a:b"), None) is None
    assert static_config.read("~/kubeconfig", None) is None


@pytest.mark.parametrize(
    ("config", "context", "message"),
    [
        (kubeconfig({"server": HTTPS}, {}), "nope", r"context 'nope' is not in .* \(contexts: x\)"),
        (
            kubeconfig({"server": HTTPS, "certificate-authority": "missing.pem"}, {}),
            None,
            "File does not exist",
        ),
        (kubeconfig({"server": HTTPS, "certificate-authority-data": "a"}, {}), None, "could not be loaded"),
    ],
)
async def test_the_official_loader_says_what_is_wrong(
    files: Path, config: Any, context: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        await KubeApi.connect(write(files, config), context)


async def test_a_kubeconfig_that_does_not_exist_is_named() -> None:
    with pytest.raises(ConfigError, match="kubeconfig '/nonexistent' does not exist"):
        await KubeApi.connect("/nonexistent")


async def test_reload_reads_a_rotated_token_again(files: Path) -> None:
    path = write(files, kubeconfig({"server": HTTPS, "insecure-skip-tls-verify": True}, {"token": "old"}))
    api = await KubeApi.connect(path)
    write(files, kubeconfig({"server": HTTPS, "insecure-skip-tls-verify": True}, {"token": "new"}))

    assert await api.reload()

    assert (await api._headers())["authorization"] == "Bearer new"


# Any kubeconfig, odd ones included: what is read here is what the official loader reads. Each value is
# mostly one that works, sometimes one that does not.
def mostly(works: list[Any], odd: list[Any]) -> st.SearchStrategy[Any]:
    return st.sampled_from(works * 6 + odd)


NAMES = st.sampled_from(["a", "b"])
FILE_NAMES = mostly(["ca.pem", "client.crt", "client.key"], ["missing.pem", "", None, 3])
DATA = mostly([b64(CA), b64(KEY)], ["", "a", None, 3])
CLUSTERS = st.fixed_dictionaries(
    {},
    optional={
        "server": mostly([HTTPS, "http://127.0.0.1:8001/"], ["", None, 7]),
        "certificate-authority": FILE_NAMES,
        "certificate-authority-data": DATA,
        "insecure-skip-tls-verify": mostly([True, False], [None, "no"]),
        "tls-server-name": mostly(["api"], [None]),
    },
)
USERS = st.fixed_dictionaries(
    {},
    optional={
        "token": mostly(["t"], ["", None, 5]),
        "tokenFile": mostly(["token"], ["missing", "", None]),
        "client-certificate": FILE_NAMES,
        "client-certificate-data": DATA,
        "client-key": FILE_NAMES,
        "client-key-data": DATA,
        "username": st.just("admin"),
        "password": st.just("secret"),
    },
)
NAMED = st.fixed_dictionaries({"cluster": NAMES}, optional={"user": NAMES})
CONTEXTS = st.one_of(
    NAMED,
    NAMED,
    NAMED,
    st.fixed_dictionaries(
        {}, optional={"cluster": st.one_of(NAMES, st.none()), "user": st.one_of(NAMES, st.none())}
    ),
    st.sampled_from([None, "not a mapping"]),
)


def entries(key: str, bodies: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    both = st.tuples(bodies, bodies).map(lambda b: [{"name": "a", key: b[0]}, {"name": "b", key: b[1]}])
    any_names = st.lists(st.fixed_dictionaries({"name": NAMES, key: bodies}), max_size=3)
    return st.one_of(both, both, both, any_names, st.none())


SECTIONS = {
    "clusters": entries("cluster", CLUSTERS),
    "contexts": entries("context", CONTEXTS),
    "users": entries("user", st.one_of(USERS, USERS, USERS, st.none())),
    "current-context": mostly(["a", "b"], [None]),
}
KUBECONFIGS = st.one_of(
    st.fixed_dictionaries(SECTIONS),
    st.fixed_dictionaries(SECTIONS),
    st.fixed_dictionaries({}, optional=SECTIONS),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=KUBECONFIGS, context=st.sampled_from([None, "a", "b", "c"]))
def test_any_kubeconfig_read_here_is_read_the_same_by_the_official_loader(
    files: Path, config: dict[str, Any], context: str | None
) -> None:
    path = write(files, config)
    read = static_config.read(path, context)
    if read is None:
        return
    official = asyncio.run(load_configuration(path, context))  # raising here fails the test
    asyncio.run(assert_the_same(read, official))


@pytest.fixture
def pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pod's service account (token and CA) and environment, for both loaders; no kubeconfig anywhere."""
    from kubernetes.aio.config import incluster_config

    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_bytes(CA)
    for module, token, ca in (
        (static_config, "SERVICE_TOKEN", "SERVICE_CA"),
        (incluster_config, "SERVICE_TOKEN_FILENAME", "SERVICE_CERT_FILENAME"),
    ):
        monkeypatch.setattr(module, token, str(tmp_path / "token"))
        monkeypatch.setattr(module, ca, str(tmp_path / "ca.crt"))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("host", ["10.0.0.1", "fd00::1"])
async def test_the_service_account_is_read_as_the_official_loader_reads_it(
    pod: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)

    read = static_config.read(None, None)

    assert read is not None
    await assert_the_same(read, await load_configuration())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("no host", "Service host/port is not set"),
        ("empty port", "Service host/port is set but empty"),
        ("empty token", "Token file exists but empty"),
        ("no CA", "Service certification file does not exist"),
    ],
)
async def test_outside_a_pod_the_official_loader_says_what_is_missing(
    pod: Path, monkeypatch: pytest.MonkeyPatch, change: str, message: str
) -> None:
    if change == "no host":
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    elif change == "empty port":
        monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "")
    elif change == "empty token":
        (pod / "token").write_text("")
    else:
        (pod / "ca.crt").unlink()

    assert static_config.read(None, None) is None
    with pytest.raises(ConfigError, match=f"not running in a cluster: {message}"):
        await KubeApi.connect()


async def test_the_service_account_token_is_read_again_once_a_minute(
    pod: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = static_config.read(None, None)
    assert read is not None
    (pod / "token").write_text("rotated")

    assert (await read.auth_settings())["BearerToken"]["value"] == "bearer sa-token"  # within the minute
    monkeypatch.setattr(static_config, "TOKEN_REREAD_SECONDS", 0.0)
    assert (await read.auth_settings())["BearerToken"]["value"] == "bearer rotated"
