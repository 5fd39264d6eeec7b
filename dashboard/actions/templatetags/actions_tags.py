"""``{% rollout_actions key as permitted %}``: the actions the signed-in user may run on a rollout.

The action bar renders only these, so a user without a permission never sees its button (not even a
disabled one). ``plain`` and ``destructive`` split them for the bar, where destructive actions (the ones
that ask for confirmation) stand apart; ``allowed``, ``confirm`` and ``key`` are what the page's script
reads (``action-permissions``).
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
