"""Approval requests and the approvals and denials given on them.

A request is what a user asks for when an approval rule guards an action: the action, the rollout, what
the requester saw (``seen``: the pod-template hash and step the approvals are bound to), the parameters
and reason, and the rule's terms at the time (how many approvals, from whom, until when). Its ``state``
moves once, under a row lock, from ``pending`` to one of the final states; the move to ``approved`` is the
one that runs the action, so two approvals landing together run it once. Every move is also an audit row
(``dashboard.actions.models.AuditEntry``): this table is the working state, the audit is the record.

Non-goals: deciding (``dashboard.guardrails.rules``), moving (``dashboard.guardrails.service``).
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class State(models.TextChoices):
    PENDING = "pending", "Pending"
    APPROVED = "approved", "Approved"  # the action was started (``attempt`` is its audit row)
    DENIED = "denied", "Denied"
    EXPIRED = "expired", "Expired"
    VOID = "void", "Void"  # the rollout moved on from what the requester saw


class ApprovalRequest(models.Model):
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    requester = models.CharField(max_length=150)
    action = models.CharField(max_length=32)
    cluster = models.CharField(max_length=253)
    namespace = models.CharField(max_length=253)
    rollout = models.CharField(max_length=253)
    seen = models.JSONField(default=dict, blank=True)
    params = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True, default="")
    break_glass = models.CharField(max_length=200, blank=True, default="")  # the freeze it overrides
    required = models.PositiveSmallIntegerField()
    approvers = models.JSONField(default=list)  # the rule's approvers= as written
    expires_at = models.DateTimeField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    closed_at = models.DateTimeField(null=True, blank=True)
    detail = models.TextField(blank=True, default="")  # why it closed, in words
    attempt = models.ForeignKey(
        "actions.AuditEntry", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["cluster", "namespace", "rollout", "state"], name="request_by_rollout"),
            models.Index(fields=["state", "expires_at"], name="request_by_state"),
        ]
        constraints = [  # one open request per action and rollout: a second one joins the first
            models.UniqueConstraint(
                fields=["cluster", "namespace", "rollout", "action"],
                condition=models.Q(state="pending"),
                name="one_pending_request_per_action",
            )
        ]

    @property
    def key(self) -> str:
        return f"{self.cluster}/{self.namespace}/{self.rollout}"

    def __str__(self) -> str:
        return f"#{self.pk} {self.requester}: {self.action} {self.key} ({self.state})"


class Vote(models.TextChoices):
    APPROVE = "approve", "Approve"
    DENY = "deny", "Deny"


class Approval(models.Model):
    request = models.ForeignKey(ApprovalRequest, on_delete=models.CASCADE, related_name="approvals")
    approver = models.CharField(max_length=150)
    vote = models.CharField(max_length=8, choices=Vote.choices)
    comment = models.TextField(blank=True, default="")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["request", "approver"], name="one_vote_per_approver")]

    def __str__(self) -> str:
        return f"{self.approver} {self.vote}s #{self.request_id}"
