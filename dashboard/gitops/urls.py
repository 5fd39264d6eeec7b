from __future__ import annotations

from django.urls import path

from dashboard.gitops import views

app_name = "gitops"

urlpatterns = [
    path("hooks/github", views.github, name="github"),
    path("hooks/gitlab", views.gitlab, name="gitlab"),
    path("hooks/gitea", views.gitea, name="gitea"),
    path("hooks/pipeline", views.pipeline, name="pipeline"),
]
