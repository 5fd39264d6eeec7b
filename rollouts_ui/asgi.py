"""ASGI entry point: HTTP through Django, websockets through Channels (see dashboard/web/routing).

Websockets are session-authenticated (AuthMiddlewareStack) and their Origin must be this site's origin or
a CSRF trusted origin, scheme, host and port alike (``dashboard.web.origin``).
Start-up stops with one line when a setting is bad (``rollouts_ui.settings``) or the database does not
answer (``settings_check.require_database``).
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rollouts_ui.settings")
django_asgi_app = get_asgi_application()

from rollouts_ui.settings_check import require_database  # noqa: E402

require_database()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (Django must be set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

# The web sends actions and notifications: Celery and their tasks load now, not at the first click.
from dashboard.actions import tasks as action_tasks  # noqa: E402, F401
from dashboard.notify import tasks as notify_tasks  # noqa: E402, F401
from dashboard.web.origin import SameOriginValidator  # noqa: E402
from dashboard.web.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
