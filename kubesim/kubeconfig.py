"""The credentials of a kubesim server: its TLS certificate, and a kubeconfig that trusts it.

kubectl (client-go) only sends a bearer token over TLS, so kubesim serves HTTPS with a fresh self-signed
certificate for 127.0.0.1/localhost, and the kubeconfig carries it as `certificate-authority-data`.
The kubeconfig is written atomically (a temporary file renamed into place) with mode 0600, so a reader
polling for the file never sees a half-written one and the bearer token is not world-readable.
Non-goals: merging into an existing kubeconfig, client certificates.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import ssl
import tempfile
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def self_signed_certificate() -> tuple[bytes, bytes]:
    """A (certificate PEM, private key PEM) pair for 127.0.0.1 and localhost, valid for a year."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesim")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def server_ssl_context(cert_pem: bytes, key_pem: bytes) -> ssl.SSLContext:
    """A server-side SSL context for the pair (the ssl module only loads certificates from files)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.TemporaryDirectory(prefix="kubesim-tls-") as tmp:
        cert_file, key_file = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
        cert_file.write_bytes(cert_pem)
        key_file.write_bytes(key_pem)
        os.chmod(key_file, 0o600)
        context.load_cert_chain(cert_file, key_file)
    return context


def kubeconfig(
    url: str,
    token: str,
    *,
    context: str = "kubesim",
    cluster: str = "kubesim",
    namespace: str = "default",
    ca_pem: bytes | None = None,
) -> dict[str, Any]:
    server: dict[str, Any] = {"server": url}
    if ca_pem:
        server["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    user = f"{cluster}-admin"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster, "cluster": server}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [
            {"name": context, "context": {"cluster": cluster, "user": user, "namespace": namespace}}
        ],
        "current-context": context,
        "preferences": {},
    }


def write_kubeconfig(
    path: str | os.PathLike[str],
    url: str,
    token: str,
    context: str = "kubesim",
    cluster: str = "kubesim",
    *,
    ca_pem: bytes | None = None,
) -> Path:
    """Write the kubeconfig; `ca_pem` is the server certificate to trust (needed for an https URL)."""
    target = Path(path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    config = kubeconfig(url, token, context=context, cluster=cluster, ca_pem=ca_pem)
    text = yaml.safe_dump(config, sort_keys=False)
    fd, tmp = tempfile.mkstemp(prefix=".kubeconfig-", dir=target.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
