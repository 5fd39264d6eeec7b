"""The audit log: an append-only record of every action attempt.

Rows are only ever inserted. An attempt that is turned away at the door (no permission, rate limited,
bad request) is one row with its outcome. An attempt that is accepted is one ``accepted`` row (who,
when, action, target, what they saw, idempotency key) and, once the worker has finished, one result row
pointing back at it (``done``, ``conflict``, ``refused`` or ``failed``, with the API's message and the
requests sent). So nothing is ever updated: the queryset refuses ``update``/``delete``, ``save`` refuses
an existing row, and the admin is read-only.

The idempotency key is unique per user among accepted attempts, which is also what makes a repeated
request (a double click, a client retry) return the first attempt's outcome instead of acting twice.

Non-goals: executing actions (``dashboard.actions.service``), retention (the audit is kept).
"""

from __future__ import annotations

from typing import Any, NoReturn

from django.db import models
from django.utils import timezone


class AppendOnly(Exception):
    """Audit rows cannot be changed or deleted."""


class Outcome(models.TextChoices):
    ACCEPTED = "accepted", "Accepted"
    DONE = "done", "Done"
    DENIED = "denied", "Denied"
    CONFLICT = "conflict", "Conflict"
    REFUSED = "refused", "Refused"
    FAILED = "failed", "Failed"
    # Guard rails (dashboard.guardrails): a request for approval and what became of it. Rows of their
    # own (never results of an attempt), so they list on the audit page and the rollout's timeline.
    REQUESTED = "requested", "Requested approval"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    EXPIRED = "expired", "Expired"
    VOIDED = "voided", "Voided"


FINAL = (Outcome.DONE, Outcome.DENIED, Outcome.CONFLICT, Outcome.REFUSED, Outcome.FAILED)


class AuditQuerySet(models.QuerySet["AuditEntry"]):
    def update(self, **kwargs: Any) -> NoReturn:
        raise AppendOnly("audit entries are append-only")

    def delete(self) -> NoReturn:
        raise AppendOnly("audit entries are append-only")

    def attempts(self) -> AuditQuerySet:
        """First rows of attempts (not the result rows), with their result joined."""
        return self.filter(attempt__isnull=True).select_related("result")


class AuditEntry(models.Model):
    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.CharField(max_length=150)
    groups = models.JSONField(default=list, blank=True)
    action = models.CharField(max_length=32)
    cluster = models.CharField(max_length=253)
    namespace = models.CharField(max_length=253)
    rollout = models.CharField(max_length=253)
    params = models.JSONField(default=dict, blank=True)
    seen = models.JSONField(default=dict, blank=True)
    idempotency_key = models.CharField(max_length=100, blank=True, default="")
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    detail = models.TextField(blank=True, default="")
    changes = models.JSONField(default=dict, blank=True)
    requests = models.JSONField(default=list, blank=True)
    # The guard rails' part: the reason given, the approval request it ran for and by whom it was
    # approved, a broken glass (``{"request": id, "approvers": [...], "breakGlass": "window"}``).
    reason = models.TextField(blank=True, default="")
    guard = models.JSONField(default=dict, blank=True)
    attempt = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="result", editable=False
    )

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name = "audit entry"
        verbose_name_plural = "audit entries"
        constraints = [
            models.UniqueConstraint(
                fields=["actor", "idempotency_key"],
                condition=models.Q(outcome="accepted") & ~models.Q(idempotency_key=""),
                name="audit_idempotency_key_unique_per_actor",
            )
        ]
        indexes = [
            models.Index(fields=["cluster", "namespace", "rollout", "-at"], name="audit_by_rollout"),
            models.Index(fields=["actor", "-at"], name="audit_by_actor"),
        ]

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnly("audit entries are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise AppendOnly("audit entries are append-only")

    @property
    def key(self) -> str:
        return f"{self.cluster}/{self.namespace}/{self.rollout}"

    def final(self) -> AuditEntry | None:
        """The row holding this attempt's final outcome: itself when turned away, else its result."""
        if self.outcome != Outcome.ACCEPTED:
            return self
        try:
            return self.result
        except AuditEntry.DoesNotExist:
            return None

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.key}: {self.outcome}"
