from __future__ import annotations

from django.contrib import admin
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import include, path, re_path

urlpatterns = [
    path("admin/", admin.site.urls),
    # The app's few static files are served by the app itself (no collectstatic step, no extra server):
    # every mode, embedded included, works from one process.
    re_path(r"^static/(?P<path>.+)$", serve_static, {"insecure": True}),
    path("", include("dashboard.gitops.urls")),  # webhook receivers (signature-authenticated, no login)
    path("", include("dashboard.actions.urls")),
    path("", include("dashboard.flagger_gates.urls")),
    path("", include("dashboard.guardrails.urls")),
    path("", include("dashboard.access.urls")),
    path("", include("dashboard.observability.urls")),  # /metrics
    path("", include("dashboard.web.urls")),
]
