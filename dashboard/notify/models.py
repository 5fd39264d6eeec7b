"""Subscriptions (who hears about what, where) and notifications (one row per message and subscription).

A notification is unique per (subscription, dedupe key): the key of a finding's ``raised`` event and the
one of its ``cleared`` event differ, so a subscriber gets exactly one message for each, however often the
watcher relists, restarts or replays. The row is also the delivery's state: attempts, the next attempt
(retries with backoff, and waiting out the rate limit) and the last error (never the URL: it is a secret).

Non-goals: no templates per subscription, no per-user subscriptions (subscriptions are an operator's
configuration, edited in the admin).
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class Channel(models.TextChoices):
    SLACK = "slack", "Slack incoming webhook"
    WEBHOOK = "webhook", "Generic JSON webhook"


class Severity(models.TextChoices):
    INFO = "info", "Info"
    WARNING = "warning", "Warning"
    CRITICAL = "critical", "Critical"


class Subscription(models.Model):
    name = models.CharField(max_length=100, unique=True)
    channel = models.CharField(max_length=16, choices=Channel.choices)
    url = models.URLField(max_length=2000, help_text="The webhook URL (kept secret: never logged or shown).")
    secret = models.CharField(
        max_length=200, blank=True, default="",
        help_text="Generic webhooks: signs each body (X-Rollouts-UI-Signature: sha256=HMAC).",
    )
    cluster = models.CharField(max_length=253, default="*", help_text="Glob, e.g. prod-*")
    namespace = models.CharField(max_length=253, default="*", help_text="Glob")
    rollout = models.CharField(max_length=253, default="*", help_text="Glob, e.g. checkout*")
    min_severity = models.CharField(max_length=16, choices=Severity.choices, default=Severity.WARNING)
    findings = models.BooleanField(default=True, help_text="Findings raised and cleared")
    actions = models.BooleanField(default=True, help_text="Outcomes of promote, abort, … actions")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        scope = f"{self.cluster}/{self.namespace}/{self.rollout}"
        return f"{self.name} ({self.channel}: {scope} ≥ {self.min_severity})"


class Status(models.TextChoices):
    PENDING = "pending", "Pending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed"
    EXPIRED = "expired", "Expired"


class Notification(models.Model):
    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE, related_name="notifications")
    dedupe = models.CharField(max_length=255)
    kind = models.CharField(max_length=64)
    cluster = models.CharField(max_length=253)
    namespace = models.CharField(max_length=253)
    rollout = models.CharField(max_length=253)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    event = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.IntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["subscription", "dedupe"], name="notification_once_per_subscription"
            )
        ]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="notification_due"),
            models.Index(fields=["subscription", "sent_at"], name="notification_sent_by_sub"),
        ]

    def __str__(self) -> str:
        where = f"{self.cluster}/{self.namespace}/{self.rollout}"
        return f"{self.kind} {where} → {self.subscription_id} ({self.status})"
