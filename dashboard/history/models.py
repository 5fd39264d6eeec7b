"""History rows: one release per rollout revision (pod hash), and the timeline events of each release.

Written only by ``dashboard.history.recorder`` (one writer per fact). Idempotency is enforced by the
database: a release is unique on (cluster, namespace, rollout, pod hash) and an event on
(release, kind, dedupe key), so restarts, relists and replays cannot duplicate rows.

Non-goals: no audit rows for user actions (the action service owns those) and no copy of live state
(the live bus has it).
"""

from __future__ import annotations

from django.db import models


class Outcome(models.TextChoices):
    IN_PROGRESS = "in_progress", "In progress"
    PROMOTED = "promoted", "Promoted"
    ABORTED = "aborted", "Aborted"
    SUPERSEDED = "superseded", "Superseded"


class Release(models.Model):
    cluster = models.CharField(max_length=253)
    namespace = models.CharField(max_length=253)
    rollout = models.CharField(max_length=253)
    rollout_uid = models.CharField(max_length=64, blank=True, default="")
    pod_hash = models.CharField(max_length=64)
    revision = models.IntegerField(null=True, blank=True)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.IN_PROGRESS)
    images = models.JSONField(default=list, blank=True)
    steps_reached = models.IntegerField(default=0)
    step_count = models.IntegerField(null=True, blank=True)
    git_revision = models.CharField(max_length=128, blank=True, default="")
    # The rollout's metadata.labels while this release ran (insights filter by team label); recorded
    # from the views since insights shipped, so older rows have {}.
    labels = models.JSONField(default=dict, blank=True)
    # When the rollout went back to an earlier release while this one was current (kubectl argo rollouts
    # undo, or a Git revert to the previous template): the release was rolled back. Recorded from then on.
    rolled_back_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "rollout", "pod_hash"], name="release_unique_per_pod_hash"
            )
        ]
        indexes = [
            models.Index(
                fields=["cluster", "namespace", "rollout", "-started_at"], name="release_by_rollout"
            ),
            models.Index(fields=["ended_at"], name="release_by_end"),
            models.Index(
                fields=["rolled_back_at"],
                name="release_by_rollback",
                condition=models.Q(rolled_back_at__isnull=False),
            ),
        ]
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.cluster}/{self.namespace}/{self.rollout}@{self.pod_hash} ({self.outcome})"


class TimelineEvent(models.Model):
    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=64)
    dedupe = models.CharField(max_length=255)
    at = models.DateTimeField()
    title = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["release", "kind", "dedupe"], name="event_unique_per_release")
        ]
        indexes = [
            models.Index(fields=["release", "at"], name="event_by_release_time"),
            # Insights read one kind of event over a period (steps, pauses, phases, findings).
            models.Index(fields=["kind", "at"], name="event_by_kind_time"),
            # A finding's clear is found by its raise's dedupe key + ":cleared".
            models.Index(
                fields=["dedupe"], name="event_cleared_by_dedupe", condition=models.Q(kind="finding.cleared")
            ),
        ]
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.kind} {self.title}"
