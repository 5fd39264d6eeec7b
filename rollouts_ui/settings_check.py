"""Start-up checks of every setting: a bad value stops the process with one line naming the variable.

``rollouts_ui.settings`` reads the environment with ``rollouts_ui.env``'s readers in collecting mode,
then calls ``finish(globals())``: the readers' problems plus ``problems()`` below (the values whose
meaning needs more than a type: files that must exist and parse, roles that must exist, URLs, lists
of ``name=value``) are printed, one line each, and the process exits 1 — no traceback. Every process
(ASGI server, ``manage.py`` commands such as ``watch`` and ``demo``, Celery) reads the settings first.

``require_database()`` is the other start-up check, for the processes that need the database (web,
watcher, Celery worker): it connects once with a short timeout and names ``DATABASE_URL`` when it
cannot, instead of a long wait and a driver traceback.

Non-goals: checking that Prometheus, OIDC or a cluster answer (that is readiness, ``/readyz``), defaults.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

PREFIX = "rollouts-ui: configuration error:"
DATABASE_CONNECT_TIMEOUT = 3  # seconds, at start-up and for every new connection (libpq connect_timeout)


def problems(values: Mapping[str, Any]) -> list[str]:
    """What is wrong with the settings in ``values`` (the settings module's globals), one line each."""
    found: list[str] = []
    found += _rbac(values)
    found += _prometheus(values)
    found += _oidc(values)
    found += _clusters(values)
    found += _gitops(values)
    return found


def _rbac(values: Mapping[str, Any]) -> list[str]:
    from dashboard.access.policy import BUILTIN_ROLES, PolicyError, parse_policy

    found = []
    role = str(values.get("RBAC_DEFAULT_ROLE") or "")
    if role and role not in BUILTIN_ROLES:
        found.append(f"RBAC_DEFAULT_ROLE={role!r} is not a built-in role (use one of: "
                     f"{', '.join(BUILTIN_ROLES)}; empty denies by default)")
    path = str(values.get("RBAC_POLICY_FILE") or "")
    if path:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            return [*found, f"RBAC_POLICY_FILE={path!r} cannot be read: {reason}"]
        try:
            parse_policy(text, source=path)
        except PolicyError as error:
            found.append(f"RBAC_POLICY_FILE: {_one_line(error)}")
    return found


def _prometheus(values: Mapping[str, Any]) -> list[str]:
    from dashboard.metrics.config import MetricsConfigError, parse_panel_queries, parse_urls

    found = []
    try:
        parse_urls(str(values.get("PROMETHEUS_URLS") or ""))
    except MetricsConfigError as error:
        found.append(f"{_one_line(error)} (expected cluster=http://host:9090,…)")
    try:
        parse_panel_queries(values.get("PROMETHEUS_PANEL_QUERIES") or {})
    except MetricsConfigError as error:
        found.append(_one_line(error))
    return found


def _oidc(values: Mapping[str, Any]) -> list[str]:
    issuer = str(values.get("OIDC_ISSUER") or "")
    if not issuer:
        return []
    parts = urlsplit(issuer)
    found = []
    if parts.scheme not in ("https", "http") or not parts.hostname:
        found.append(f"OIDC_ISSUER={issuer!r} is not an https:// URL (e.g. https://sso.example.com/realms/x)")
    if not values.get("OIDC_CLIENT_ID"):
        found.append("OIDC_CLIENT_ID must be set when OIDC_ISSUER is")
    return found


def _clusters(values: Mapping[str, Any]) -> list[str]:
    found = []
    for item in (part.strip() for part in str(values.get("CLUSTERS") or "").split(",")):
        if not item:
            continue
        name, sep, target = item.partition("=")
        path = target.partition("#")[0].strip()
        if not sep or not name.strip() or not path:
            found.append(f"CLUSTERS item {item!r} is not name=kubeconfig-path[#context]")
        elif not Path(path).is_file():
            found.append(f"CLUSTERS item {item!r}: the kubeconfig {path!r} does not exist")
    return found


def _gitops(values: Mapping[str, Any]) -> list[str]:
    from django.core.exceptions import ImproperlyConfigured

    from dashboard.gitops.config import parse_repositories

    try:
        parse_repositories(values.get("GITOPS_REPOSITORIES") or {})
    except ImproperlyConfigured as error:
        return [_one_line(error)]
    return []


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def finish(values: Mapping[str, Any], collected: list[str]) -> None:
    """Exit 1 with one line per problem when the settings are not usable."""
    found = [*collected, *problems(values)]
    if found:
        for line in found:
            print(f"{PREFIX} {line}", file=sys.stderr)
        raise SystemExit(1)


def require_database() -> None:
    """Connect to the database once, quickly; exit 1 naming ``DATABASE_URL`` when it does not answer.

    The check runs on a thread of its own: the ASGI module is also imported inside a running event loop
    (the demo), where Django refuses synchronous database calls."""
    import threading

    from django.conf import settings

    failure: list[BaseException] = []
    thread = threading.Thread(target=_connect_once, args=(failure,), name="require-database")
    thread.start()
    thread.join()
    if failure:
        from rollouts_ui.env import redact_url

        url = str(getattr(settings, "DATABASE_URL", "") or "")
        target = f"DATABASE_URL={redact_url(url)!r}" if url else "the database (DATABASE_URL unset: SQLite)"
        print(f"rollouts-ui: cannot connect to {target}: {_one_line(failure[0])[:300]}", file=sys.stderr)
        raise SystemExit(1)


def _connect_once(failure: list[BaseException]) -> None:
    from django.db import connection

    try:
        if connection.vendor == "postgresql":
            import psycopg

            # One direct connection: the pool would wait its whole queue timeout (20 s) for it.
            params = {k: v for k, v in connection.get_connection_params().items() if k != "cursor_factory"}
            psycopg.connect(**params).close()
        else:
            connection.ensure_connection()
    except Exception as error:  # any driver error: the caller says what and where
        failure.append(error)
    finally:
        connection.close()
