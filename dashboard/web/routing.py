"""Websocket URL routes (see ``dashboard.web.consumers`` for the protocol)."""

from __future__ import annotations

from django.urls import path

from dashboard.web.consumers import FleetConsumer, RolloutConsumer

websocket_urlpatterns = [
    path("ws/fleet/", FleetConsumer.as_asgi()),
    path("ws/rollouts/<str:cluster>/<str:namespace>/<str:name>/", RolloutConsumer.as_asgi()),
]
