"""Single sign-on with OpenID Connect: the authorization-code flow with PKCE (RFC 7636, S256).

Configured from the environment: ``OIDC_ISSUER``, ``OIDC_CLIENT_ID``, ``OIDC_CLIENT_SECRET`` (optional
for public clients), ``OIDC_SCOPES``, ``OIDC_USERNAME_CLAIM`` and ``OIDC_GROUPS_CLAIM``. The redirect URI
to register at the provider is ``https://<this host>/accounts/oidc/callback/``.

The ID token comes straight from the token endpoint over TLS in exchange for the code, the PKCE
verifier and the client's credentials, so, as OpenID Connect Core §3.1.3.7 (6) allows, the TLS server
validation stands in for the token's signature; issuer, audience, expiry and nonce are checked. The
groups claim is stored on the user's ``SingleSignOnIdentity`` at every login and feeds the grants. A
first login creates a local user (without a usable password); an existing local account is never taken
over by name — a clash gets a suffixed name.

Non-goals: refresh tokens, logout at the provider, userinfo-only providers without an ID token.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from dashboard import jsonbody

TIMEOUT = 10.0
CLOCK_SKEW = 120


class OidcError(Exception):
    """The provider or its answer is not usable; the message says what, for the login page."""


@dataclass(frozen=True)
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str


def enabled() -> bool:
    return bool(settings.OIDC_ISSUER and settings.OIDC_CLIENT_ID)


_discovered: dict[str, tuple[float, Provider]] = {}


def _fetch_json(request: urllib.request.Request | str) -> Any:
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return jsonbody.loads(response.read(), what="the identity provider's answer")
    except urllib.error.HTTPError as error:
        raise OidcError(f"the identity provider answered {error.code}: {error.read()[:300]!r}") from None
    except (OSError, ValueError) as error:
        raise OidcError(f"the identity provider could not be reached: {error}") from None


def provider() -> Provider:
    issuer = settings.OIDC_ISSUER.rstrip("/")
    cached = _discovered.get(issuer)
    if cached is not None and time.monotonic() - cached[0] < 3600:
        return cached[1]
    document = _fetch_json(f"{issuer}/.well-known/openid-configuration")
    try:
        found = Provider(
            str(document["issuer"]), str(document["authorization_endpoint"]), str(document["token_endpoint"])
        )
    except (KeyError, TypeError):
        raise OidcError("the provider's discovery document lacks issuer or endpoints") from None
    if found.issuer.rstrip("/") != issuer:
        raise OidcError(f"the discovery document names issuer {found.issuer!r}, not {issuer!r}")
    _discovered[issuer] = (time.monotonic(), found)
    return found


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def begin(redirect_uri: str, next_url: str) -> tuple[str, dict[str, str]]:
    """(URL to send the browser to, state to keep in the session)."""
    verifier = _b64url(secrets.token_bytes(48))
    state = {
        "state": secrets.token_urlsafe(24),
        "nonce": secrets.token_urlsafe(24),
        "verifier": verifier,
        "next": next_url,
        "redirect_uri": redirect_uri,
    }
    query = {
        "response_type": "code",
        "client_id": settings.OIDC_CLIENT_ID,
        "redirect_uri": redirect_uri,
        "scope": settings.OIDC_SCOPES,
        "state": state["state"],
        "nonce": state["nonce"],
        "code_challenge": _b64url(hashlib.sha256(verifier.encode()).digest()),
        "code_challenge_method": "S256",
    }
    return f"{provider().authorization_endpoint}?{urllib.parse.urlencode(query)}", state


def exchange(code: str, saved: Mapping[str, str]) -> dict[str, Any]:
    """Trade the code for tokens and return the verified ID token claims."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": saved["redirect_uri"],
        "client_id": settings.OIDC_CLIENT_ID,
        "code_verifier": saved["verifier"],
    }
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    if settings.OIDC_CLIENT_SECRET:
        pair = (
            f"{urllib.parse.quote(settings.OIDC_CLIENT_ID)}:{urllib.parse.quote(settings.OIDC_CLIENT_SECRET)}"
        )
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    request = urllib.request.Request(
        provider().token_endpoint, data=urllib.parse.urlencode(form).encode(), headers=headers, method="POST"
    )
    tokens = _fetch_json(request)
    id_token = tokens.get("id_token") if isinstance(tokens, dict) else None
    if not isinstance(id_token, str):
        raise OidcError("the token endpoint returned no id_token (is the 'openid' scope requested?)")
    return check_claims(decode_payload(id_token), saved["nonce"])


def decode_payload(token: str) -> dict[str, Any]:
    try:
        payload = token.split(".")[1]
        claims = jsonbody.loads(
            base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)), what="the id_token"
        )
    except (IndexError, ValueError):
        raise OidcError("the id_token is not a JWT") from None
    if not isinstance(claims, dict):
        raise OidcError("the id_token's payload is not an object")
    return claims


def check_claims(claims: Mapping[str, Any], nonce: str, now: float | None = None) -> dict[str, Any]:
    now = time.time() if now is None else now
    if str(claims.get("iss", "")).rstrip("/") != settings.OIDC_ISSUER.rstrip("/"):
        raise OidcError(f"the id_token was issued by {claims.get('iss')!r}, not {settings.OIDC_ISSUER!r}")
    audience = claims.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    if settings.OIDC_CLIENT_ID not in audiences:
        raise OidcError("the id_token is not meant for this client (aud)")
    try:
        expires = float(claims["exp"])
    except (KeyError, TypeError, ValueError):
        raise OidcError("the id_token has no valid exp") from None
    if expires + CLOCK_SKEW < now:
        raise OidcError("the id_token has expired")
    if not secrets.compare_digest(str(claims.get("nonce", "")), nonce):
        raise OidcError("the id_token's nonce does not match this login")
    if not claims.get("sub"):
        raise OidcError("the id_token has no subject (sub)")
    return dict(claims)


def groups_from(claims: Mapping[str, Any]) -> list[str]:
    value = claims.get(settings.OIDC_GROUPS_CLAIM)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return sorted({str(g) for g in value if isinstance(g, (str, int)) and str(g)})


def user_for(claims: Mapping[str, Any]) -> Any:
    """The local user for these claims (created on first login), with the groups claim stored."""
    from django.contrib.auth.models import User
    from django.db import transaction

    from dashboard.access.models import SingleSignOnIdentity

    issuer, subject = str(claims["iss"]).rstrip("/"), str(claims["sub"])
    groups = groups_from(claims)
    with transaction.atomic():
        identity = (
            SingleSignOnIdentity.objects.select_related("user").filter(issuer=issuer, subject=subject).first()
        )
        if identity is None:
            wanted = str(claims.get(settings.OIDC_USERNAME_CLAIM) or subject)[:140] or subject[:140]
            username, n = wanted, 1
            while User.objects.filter(username=username).exists():
                n += 1
                username = f"{wanted}-sso{n if n > 2 else ''}"
            user = User(username=username, email=str(claims.get("email") or "")[:254])
            user.set_unusable_password()
            user.save()
            identity = SingleSignOnIdentity(user=user, issuer=issuer, subject=subject)
        identity.groups = groups
        identity.save()
    return identity.user
