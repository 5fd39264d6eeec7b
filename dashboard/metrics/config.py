"""Where each cluster's Prometheus is, and which queries the standard canary-vs-stable panel runs.

``PROMETHEUS_URLS="prod=http://prometheus.prod:9090,staging=http://prometheus.staging:9090"`` (a bare URL
applies to every cluster). ``PROMETHEUS_PANEL_QUERIES`` (JSON) overrides the panel per cluster, e.g.
``{"prod": {"errorRate": "…", "latency": "…"}}``; ``$namespace`` and ``$rollout`` are substituted and
every series must carry a ``version`` label (``stable`` / ``canary``). Parsing is pure; bad values raise
``MetricsConfigError`` naming the entry.

Non-goals: service discovery, authentication headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from string import Template
from typing import Any
from urllib.parse import urlsplit

ANY_CLUSTER = "*"
_SELECTOR = 'namespace="$namespace",rollout="$rollout"'
DEFAULT_PANEL_QUERIES = {
    "errorRate": (
        f'sum by (version) (rate(http_requests_total{{{_SELECTOR},status=~"5.."}}[30s]))'
        f" / sum by (version) (rate(http_requests_total{{{_SELECTOR}}}[30s]))"
    ),
    "latency": (
        "histogram_quantile(0.95, sum by (version, le) "
        f"(rate(http_request_duration_seconds_bucket{{{_SELECTOR}}}[30s])))"
    ),
}
PANEL_TITLES = {"errorRate": "5xx error rate", "latency": "p95 latency (s)"}


class MetricsConfigError(ValueError):
    pass


@dataclass(frozen=True)
class MetricsConfig:
    urls: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 5.0
    panel_queries: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def url_for(self, cluster: str) -> str | None:
        return self.urls.get(cluster) or self.urls.get(ANY_CLUSTER)

    def panel_for(self, cluster: str, namespace: str, rollout: str) -> dict[str, str]:
        queries = {**DEFAULT_PANEL_QUERIES, **self.panel_queries.get(ANY_CLUSTER, {})}
        queries.update(self.panel_queries.get(cluster, {}))
        values = {"namespace": namespace, "rollout": rollout}
        return {name: Template(q).safe_substitute(values) for name, q in queries.items()}


def _check_url(url: str, where: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise MetricsConfigError(f"{where}: {url!r} is not an http(s) URL")
    return url.rstrip("/")


def parse_urls(text: str) -> dict[str, str]:
    """``"prod=http://a:9090,staging=http://b:9090"`` or one bare URL for every cluster."""
    urls: dict[str, str] = {}
    for i, item in enumerate(p.strip() for p in text.split(",") if p.strip()):
        name, sep, url = item.partition("=")
        if not sep:
            name, url = ANY_CLUSTER, item
        name, url = name.strip(), url.strip()
        if not name:
            raise MetricsConfigError(f"PROMETHEUS_URLS entry {i + 1}: the cluster name is empty")
        urls[name] = _check_url(url, f"PROMETHEUS_URLS[{name}]")
    return urls


def parse_panel_queries(value: Any) -> dict[str, dict[str, str]]:
    if not isinstance(value, Mapping):
        raise MetricsConfigError("PROMETHEUS_PANEL_QUERIES: expected a JSON object of cluster -> queries")
    out: dict[str, dict[str, str]] = {}
    for cluster, queries in value.items():
        if not isinstance(queries, Mapping):
            raise MetricsConfigError(f"PROMETHEUS_PANEL_QUERIES[{cluster}]: expected an object")
        unknown = sorted(set(queries) - set(DEFAULT_PANEL_QUERIES))
        if unknown:
            raise MetricsConfigError(
                f"PROMETHEUS_PANEL_QUERIES[{cluster}]: unknown panel(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(DEFAULT_PANEL_QUERIES)}"
            )
        for name, query in queries.items():
            if not isinstance(query, str) or not query.strip():
                raise MetricsConfigError(
                    f"PROMETHEUS_PANEL_QUERIES[{cluster}].{name}: expected a PromQL string"
                )
        out[str(cluster)] = dict(queries)
    return out


def from_settings() -> MetricsConfig:
    from django.conf import settings

    return MetricsConfig(
        urls=parse_urls(getattr(settings, "PROMETHEUS_URLS", "") or ""),
        timeout=float(getattr(settings, "PROMETHEUS_TIMEOUT_SECONDS", 5)),
        panel_queries=parse_panel_queries(getattr(settings, "PROMETHEUS_PANEL_QUERIES", {}) or {}),
    )
