"""Roles, grants and single-sign-on identities, managed in the Django admin.

A ``Grant`` binds one user or one group (a Django group or a group name from the OIDC groups claim) to a
``Role`` on a scope: a cluster, a namespace and a rollout name pattern (globs). Built-in roles
(viewer, operator, admin) exist as rows so grants can point at them; their actions always come from
``policy.BUILTIN_ROLES``. Custom roles list their own actions.

Non-goals: evaluation (``dashboard.access.rbac``) and the policy file (``dashboard.access.policy``).
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from dashboard.access.policy import BUILTIN_ROLES, PolicyError, Subject, check_action_pattern, group, user


def _validate_actions(value: str) -> None:
    try:
        parse_actions(value)
    except PolicyError as error:
        raise ValidationError(str(error)) from None


def parse_actions(value: str) -> tuple[str, ...]:
    """``"get, promote abort"`` → ``("get", "promote", "abort")``; unknown names raise ``PolicyError``."""
    names = [part for part in value.replace(",", " ").split() if part]
    if not names:
        raise PolicyError("list at least one action")
    return tuple(check_action_pattern(name) for name in names)


def _validate_component(value: str) -> None:
    if not value or "/" in value:
        raise ValidationError("use a name or a glob such as * or pay-* (no '/')")


class Role(models.Model):
    name = models.SlugField(max_length=64, unique=True)
    actions = models.CharField(
        max_length=500,
        validators=[_validate_actions],
        help_text="Actions, separated by commas or spaces: get (see), logs (read pods' logs), promote, "
        "promote-full, skip-current-step, abort, retry, pause, resume, restart, undo, unwedge "
        "— or a glob such as *.",
    )
    description = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def builtin(self) -> bool:
        return self.name in BUILTIN_ROLES

    def action_list(self) -> tuple[str, ...]:
        if self.name in BUILTIN_ROLES:
            return BUILTIN_ROLES[self.name]
        try:
            return parse_actions(self.actions)
        except PolicyError:
            return ()  # a row edited outside the admin's validation grants nothing


class Grant(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="rollout_grants",
    )
    group = models.CharField(
        max_length=150, blank=True, default="", help_text="A Django group or an OIDC groups-claim value."
    )
    role = models.ForeignKey(Role, on_delete=models.PROTECT, related_name="grants")
    cluster = models.CharField(max_length=253, default="*", validators=[_validate_component])
    namespace = models.CharField(max_length=253, default="*", validators=[_validate_component])
    rollout = models.CharField(max_length=253, default="*", validators=[_validate_component])
    deny = models.BooleanField(default=False, help_text="Deny these actions instead (a deny always wins).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster", "namespace", "rollout", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(user__isnull=False) & models.Q(group=""))
                | (models.Q(user__isnull=True) & ~models.Q(group="")),
                name="grant_has_exactly_one_subject",
            )
        ]

    def clean(self) -> None:
        if (self.user_id is None) == (not self.group):
            raise ValidationError("Choose either a user or a group (exactly one).")

    @property
    def scope(self) -> str:
        return f"{self.cluster}/{self.namespace}/{self.rollout}"

    @property
    def subject(self) -> Subject:
        return user(self.user.get_username()) if self.user is not None else group(self.group)

    def __str__(self) -> str:
        verb = "denied" if self.deny else "is"
        return f"{self.subject} {verb} {self.role} on {self.scope}"


class SingleSignOnIdentity(models.Model):
    """The OIDC subject a local user logs in as, and the groups its last login's claim carried."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso")
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    groups = models.JSONField(default=list, blank=True)
    last_login = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_unique")]
        verbose_name = "single sign-on identity"

    def __str__(self) -> str:
        return f"{self.user} ({self.issuer} {self.subject})"
