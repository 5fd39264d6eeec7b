"""Which repositories may send webhooks, and with which secret: ``settings.GITOPS_REPOSITORIES``.

The setting maps a repository URL to ``{"provider": "github" | "gitlab" | "gitea", "secret": "...",
"ci_token": "..."}``. ``secret`` verifies the provider's webhooks (HMAC key for GitHub and Gitea, the
``X-Gitlab-Token`` value for GitLab); ``ci_token`` (optional) is the bearer token a CI system sends to the
plain JSON pipeline receiver. URLs are compared by ``repo_key`` — host and path, lower-cased, without scheme,
user, port or ``.git`` — so the https, ssh and scp-like forms of one repository are the same repository
(and match Argo CD's ``spec.source.repoURL`` whichever form it uses).

Non-goals: no per-branch filtering, no secrets in the database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

PROVIDERS = ("github", "gitlab", "gitea")
_SCP_LIKE = re.compile(r"^(?:[\w.-]+@)?([\w.-]+):(?!//)(.+)$")  # git@github.com:org/repo.git
_MIN_SECRET = 16


@dataclass(frozen=True)
class RepositoryConfig:
    key: str
    url: str
    provider: str
    secret: str
    ci_token: str = ""

    def __repr__(self) -> str:  # never print secrets into logs or tracebacks
        return f"RepositoryConfig({self.key!r}, provider={self.provider!r})"


def repo_key(url: Any) -> str | None:
    """``host/owner/name`` for any usual form of a git URL, or None when it is not one."""
    if not isinstance(url, str) or not url.strip():
        return None
    text = url.strip()
    scp = _SCP_LIKE.match(text) if "://" not in text else None
    if scp:
        host, path = scp.group(1), scp.group(2)
    else:
        parsed = urlparse(text)
        if not parsed.hostname or parsed.scheme not in ("http", "https", "ssh", "git"):
            return None
        host, path = parsed.hostname, parsed.path
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    if not path:
        return None
    return f"{host.lower()}/{path.lower()}"


def parse_repositories(raw: Any, *, setting: str = "GITOPS_REPOSITORIES") -> dict[str, RepositoryConfig]:
    """Validate the setting's value; raises ImproperlyConfigured naming the bad entry."""
    if not isinstance(raw, Mapping):
        raise ImproperlyConfigured(f"{setting} must be a JSON object mapping repository URL to its settings")
    found: dict[str, RepositoryConfig] = {}
    for url, entry in raw.items():
        where = f"{setting}[{url!r}]"
        key = repo_key(url)
        if key is None:
            raise ImproperlyConfigured(f"{where}: not a repository URL (e.g. https://github.com/org/repo)")
        if not isinstance(entry, Mapping):
            raise ImproperlyConfigured(f"{where}: expected an object with provider and secret")
        unknown = sorted(set(entry) - {"provider", "secret", "ci_token"})
        if unknown:
            raise ImproperlyConfigured(
                f"{where}: unknown key(s) {', '.join(unknown)}; allowed: provider, secret, ci_token"
            )
        provider = entry.get("provider")
        if provider not in PROVIDERS:
            raise ImproperlyConfigured(
                f"{where}.provider: expected one of {', '.join(PROVIDERS)}, got {provider!r}"
            )
        secret = entry.get("secret")
        if not isinstance(secret, str) or len(secret) < _MIN_SECRET:
            raise ImproperlyConfigured(
                f"{where}.secret: expected a string of at least {_MIN_SECRET} characters"
            )
        ci_token = entry.get("ci_token", "")
        if not isinstance(ci_token, str) or (ci_token and len(ci_token) < _MIN_SECRET):
            raise ImproperlyConfigured(
                f"{where}.ci_token: expected a string of at least {_MIN_SECRET} characters"
            )
        if key in found:
            raise ImproperlyConfigured(f"{where}: the same repository as {found[key].url!r}")
        found[key] = RepositoryConfig(
            key=key, url=str(url), provider=provider, secret=secret, ci_token=ci_token
        )
    return found


def repositories() -> dict[str, RepositoryConfig]:
    return parse_repositories(getattr(settings, "GITOPS_REPOSITORIES", {}) or {})


def find_repository(urls: Iterable[Any]) -> RepositoryConfig | None:
    """The configured repository any of ``urls`` names (a payload carries several forms of its URL)."""
    configured = repositories()
    for url in urls:
        key = repo_key(url)
        if key is not None and key in configured:
            return configured[key]
    return None
