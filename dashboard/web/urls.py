from __future__ import annotations

from django.urls import path

from dashboard.web import health, insights, metrics_api, views

_ROLLOUT = "<str:cluster>/<str:namespace>/<str:name>"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("", views.fleet_page, name="fleet"),
    path(f"rollouts/{_ROLLOUT}/", views.rollout_page, name="rollout"),
    path(f"rollouts/{_ROLLOUT}/history/", views.history_page, name="history"),
    path(f"rollouts/{_ROLLOUT}/releases/<str:pod_hash>/", views.release_page, name="release"),
    path(
        f"rollouts/{_ROLLOUT}/releases/<str:pod_hash>/postmortem.md",
        views.release_postmortem,
        {"fmt": "md"},
        name="release-postmortem-md",
    ),
    path(
        f"rollouts/{_ROLLOUT}/releases/<str:pod_hash>/postmortem.json",
        views.release_postmortem,
        {"fmt": "json"},
        name="release-postmortem-json",
    ),
    path("api/v1/rollouts", views.api_fleet, name="api-fleet"),
    path("api/v1/fleet/rows", views.api_fleet_rows, name="api-fleet-rows"),
    path(f"api/v1/rollouts/{_ROLLOUT}", views.api_rollout, name="api-rollout"),
    path(f"api/v1/rollouts/{_ROLLOUT}/timeline", views.api_timeline, name="api-timeline"),
    path(f"api/v1/rollouts/{_ROLLOUT}/metrics", metrics_api.api_metrics, name="api-metrics"),
    path(f"api/v1/rollouts/{_ROLLOUT}/analysis-dryrun", metrics_api.api_dryrun, name="api-analysis-dryrun"),
    path(f"api/v1/rollouts/{_ROLLOUT}/releases/<str:pod_hash>", views.api_release, name="api-release"),
    path("accounts/login/", views.login_page, name="login"),
    path("accounts/logout/", views.logout_page, name="logout"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("assets/plotly.min.js", views.plotly_js, name="plotly-js"),
    path("insights/", insights.insights_page, name="insights"),
    path("api/v1/insights", insights.api_insights, name="api-insights"),
    path("environments/", insights.environments_page, name="environments"),
    path("api/v1/environments", insights.api_environments, name="api-environments"),
]
