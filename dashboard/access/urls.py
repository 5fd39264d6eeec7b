"""Single sign-on URLs (included from ``rollouts_ui.urls``)."""

from __future__ import annotations

from django.urls import path

from dashboard.access import views

urlpatterns = [
    path("accounts/oidc/login/", views.oidc_login, name="oidc-login"),
    path("accounts/oidc/callback/", views.oidc_callback, name="oidc-callback"),
]
