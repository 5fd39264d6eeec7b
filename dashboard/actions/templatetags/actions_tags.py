"""``{% rollout_actions key as allowed %}``: the actions the signed-in user may run on a rollout.

The action bar renders only these, so a user without a permission never sees its button.
"""

from __future__ import annotations

from typing import Any

from django import template

from dashboard.access.policy import ACTIONS
from dashboard.access.rbac import access_for
from dashboard.actions.plans import DESTRUCTIVE

register = template.Library()


@register.simple_tag(takes_context=True)
def rollout_actions(context: Any, key: str) -> dict[str, Any]:
    user = context.get("user")
    allowed = access_for(user).actions_on(key, ACTIONS) if getattr(user, "is_authenticated", False) else []
    return {"allowed": allowed, "confirm": sorted(DESTRUCTIVE & set(allowed))}
