"""What Flagger last asked each gate, what people decided per revision (the payload's checksum), and the
tokens that let a Canary's webhooks speak to the gates.

Non-goals: the audit trail (``dashboard.actions.models.AuditEntry`` holds who did what).
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from django.db import models
from django.utils import timezone

GATES = ("confirm-rollout", "confirm-promotion", "confirm-traffic-increase", "rollback")


class Decision(models.TextChoices):
    APPROVE = "approve", "Approve"  # confirm-rollout / confirm-promotion answer 200
    HOLD = "hold", "Hold"  # confirm-traffic-increase answers 403
    ROLLBACK = "rollback", "Roll back"  # the rollback gate answers 200


class GateCall(models.Model):
    """The last request Flagger made to one gate of one Canary (what the gate is waiting on)."""

    cluster = models.CharField(max_length=253)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    gate = models.CharField(max_length=32)
    checksum = models.CharField(max_length=253, blank=True, default="")
    phase = models.CharField(max_length=32, blank=True, default="")
    answer = models.PositiveSmallIntegerField()
    at = models.DateTimeField(default=timezone.now)
    first_at = models.DateTimeField(default=timezone.now)  # when this gate first saw this checksum

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "namespace", "name", "gate"], name="gate_call_unique")
        ]


class GateDecision(models.Model):
    """A decision for one revision of one Canary at one gate; the next revision has another checksum."""

    cluster = models.CharField(max_length=253)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    checksum = models.CharField(max_length=253)
    gate = models.CharField(max_length=32)
    decision = models.CharField(max_length=16, choices=Decision.choices)
    actor = models.CharField(max_length=150)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name", "checksum", "gate"], name="gate_decision_unique"
            )
        ]


class GateToken(models.Model):
    """A secret that lets the webhooks of the Canaries in one scope call the gates.

    Only the SHA-256 digest is stored; the token itself is shown once when it is issued. The scope is a
    cluster name and globs over namespace and Canary name, so a token leaked from one team's Canary
    cannot answer for another team's.
    """

    cluster = models.CharField(max_length=253)
    namespace = models.CharField(max_length=253, default="*")
    canary = models.CharField(max_length=253, default="*")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    label = models.CharField(max_length=200, blank=True, default="", help_text="Whose hooks use it.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster", "namespace", "canary", "id"]

    def covers(self, cluster: str, namespace: str, canary: str) -> bool:
        return (
            self.cluster == cluster
            and fnmatchcase(namespace, self.namespace)
            and fnmatchcase(canary, self.canary)
        )

    def __str__(self) -> str:
        return f"gate token for {self.cluster}/{self.namespace}/{self.canary}" + (
            f" ({self.label})" if self.label else ""
        )
