"""Template helpers: ``{% sso_enabled as on %}``."""

from __future__ import annotations

from django import template

from dashboard.access import oidc

register = template.Library()


@register.simple_tag
def sso_enabled() -> bool:
    return oidc.enabled()
