"""``{% rollout_actions key as permitted %}``: what the signed-in user may run on a rollout.

The action bar (``static/js/actions.js``) draws every action from the page document and shows the ones
this user may not run disabled, with ``permissions[action].deniedReason`` as the reason; ``allowed``,
``confirm`` and ``key`` are what the page's script reads (``action-permissions``). The service checks the
permission again on every POST: this is only what the page shows.
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
    return {
        "key": key,
        # Per action {allowed, deniedReason} (``data.action_permissions_sync``, put in the context by the
        # view): a button the user may not run is shown disabled with the reason.
        "permissions": context.get("action_permissions") or {},
        "allowed": allowed,
        "confirm": sorted(DESTRUCTIVE & set(allowed)),
        "plain": [a for a in allowed if a not in DESTRUCTIVE],
        "destructive": [a for a in allowed if a in DESTRUCTIVE],
    }
