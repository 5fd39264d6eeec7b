"""Websocket URL routes (see ``dashboard.web.consumers`` for the protocol)."""

from __future__ import annotations

from django.urls import path

from dashboard.actions.consumers import ActionsConsumer
from dashboard.web.consumers import FleetConsumer, RolloutConsumer
from dashboard.web.pod_logs import PodLogsConsumer

websocket_urlpatterns = [
    path("ws/fleet/", FleetConsumer.as_asgi()),
    path("ws/rollouts/<str:cluster>/<str:namespace>/<str:name>/", RolloutConsumer.as_asgi()),
    path("ws/actions/<str:cluster>/<str:namespace>/<str:name>/", ActionsConsumer.as_asgi()),
    path("ws/logs/<str:cluster>/<str:namespace>/<str:name>/", PodLogsConsumer.as_asgi()),
]
