"""Rows of the GitOps chain: repositories, commits (with their merge), pipeline runs, and webhook deliveries.

Written only by ``dashboard.gitops.services`` (one writer per fact). Uniqueness lives in the database: a
commit is unique per (repository, sha), a pipeline run per (repository, provider, run id), a delivery per
(provider, delivery id) — so a redelivered webhook is recorded once however often it arrives.

Secrets are not stored here: they stay in ``settings.GITOPS_REPOSITORIES``.
"""

from __future__ import annotations

from datetime import datetime

from django.db import models


class Repository(models.Model):
    key = models.CharField(max_length=255, unique=True)  # host/owner/name (config.repo_key)
    url = models.CharField(max_length=500)
    provider = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.key


class Commit(models.Model):
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="commits")
    sha = models.CharField(max_length=64)
    author = models.CharField(max_length=255, blank=True, default="")
    title = models.CharField(max_length=500, blank=True, default="")
    message = models.TextField(blank=True, default="")
    url = models.CharField(max_length=1000, blank=True, default="")
    ref = models.CharField(max_length=255, blank=True, default="")
    committed_at = models.DateTimeField(null=True, blank=True)
    received_at = models.DateTimeField()
    # The merged pull/merge request that produced this commit, when one was reported.
    merge_number = models.CharField(max_length=32, blank=True, default="")
    merge_title = models.CharField(max_length=500, blank=True, default="")
    merge_url = models.CharField(max_length=1000, blank=True, default="")
    merged_by = models.CharField(max_length=255, blank=True, default="")
    merged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["repository", "sha"], name="gitops_commit_unique_sha")]
        indexes = [
            models.Index(fields=["repository", "-received_at"], name="gitops_commit_by_time"),
            models.Index(fields=["sha"], name="gitops_commit_by_sha"),  # a release's git revision → merge
        ]

    @property
    def landed_at(self) -> datetime:
        """When the commit reached the branch: the merge time, else the push's commit time, else receipt."""
        return self.merged_at or self.committed_at or self.received_at

    def __str__(self) -> str:
        return f"{self.repository.key}@{self.sha[:7]}"


class PipelineRun(models.Model):
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="pipelines")
    sha = models.CharField(max_length=64)
    provider = models.CharField(max_length=32)
    run_id = models.CharField(max_length=200)
    pipeline = models.CharField(max_length=255, blank=True, default="")
    state = models.CharField(max_length=16)
    url = models.CharField(max_length=1000, blank=True, default="")
    ref = models.CharField(max_length=255, blank=True, default="")
    at = models.DateTimeField()  # when the run reached this state (as the provider says, else receipt)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["repository", "provider", "run_id"], name="gitops_pipeline_unique_run"
            )
        ]
        indexes = [models.Index(fields=["repository", "sha"], name="gitops_pipeline_by_sha")]

    def __str__(self) -> str:
        return f"{self.pipeline} {self.state} @{self.sha[:7]}"


class Delivery(models.Model):
    provider = models.CharField(max_length=16)
    delivery_id = models.CharField(max_length=200)
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=64)
    received_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "delivery_id"], name="gitops_delivery_unique_id")
        ]
        indexes = [models.Index(fields=["received_at"], name="gitops_delivery_by_time")]

    def __str__(self) -> str:
        return f"{self.provider}:{self.delivery_id}"
