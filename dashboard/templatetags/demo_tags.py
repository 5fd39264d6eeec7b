"""``{% demo_legend %}``: in demo mode, which rollout plays which scenario (nothing otherwise).

The demo command puts ``settings.DEMO_LEGEND`` (see ``dashboard.demo.demo_legend``); every other way of
running the dashboard has no such setting, so the tag renders nothing there.

Non-goals: anything beyond the demo.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.conf import settings

register = template.Library()


@register.inclusion_tag("dashboard/_demo_legend.html")
def demo_legend() -> dict[str, Any]:
    return {"legend": getattr(settings, "DEMO_LEGEND", None) or []}
