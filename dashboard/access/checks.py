"""System check: a configured policy file must exist and parse, so a typo fails at start-up."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Tags, register

from dashboard.access.policy import BUILTIN_ROLES, PolicyError


@register(Tags.security)  # tagged: commands that choose their checks by tag (watch) run it too
def check_policy_file(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    from django.conf import settings

    from dashboard.access.rbac import file_policy
    from dashboard.guardrails.loader import file_rules

    problems: list[CheckMessage] = []
    try:
        file_policy()
        file_rules()
    except PolicyError as error:
        problems.append(Error(str(error), hint="Fix RBAC_POLICY_FILE or unset it.", id="access.E001"))
    default_role = str(getattr(settings, "RBAC_DEFAULT_ROLE", "") or "")
    if default_role and default_role not in BUILTIN_ROLES:
        problems.append(
            Error(
                f"RBAC_DEFAULT_ROLE={default_role!r} is not a built-in role",
                hint=f"Use one of: {', '.join(BUILTIN_ROLES)}, or leave it empty (deny by default).",
                id="access.E002",
            )
        )
    return problems
