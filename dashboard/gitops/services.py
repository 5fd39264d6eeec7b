"""Recording webhook facts: the only code that writes the gitops tables.

``hook_record`` stores one verified delivery in one transaction: the delivery id first (a redelivery stops
there and changes nothing), then each commit and pipeline state. A commit reported twice (a push and the
merge that produced it, or two pushes to different branches) is one row whose empty fields fill in; a
pipeline run keeps its newest state (a late "running" never overwrites the "failure" that came after it).

Non-goals: parsing or verifying payloads (``providers``), reading (``queries``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction

from dashboard.gitops.config import RepositoryConfig
from dashboard.gitops.models import Commit, Delivery, PipelineRun, Repository
from dashboard.gitops.providers import TERMINAL, CommitFact, Hook, PipelineFact


@dataclass(frozen=True)
class Recorded:
    duplicate: bool
    commits: int = 0
    pipelines: int = 0


def repository_for(config: RepositoryConfig) -> Repository:
    repository, _ = Repository.objects.get_or_create(
        key=config.key, defaults={"url": config.url, "provider": config.provider}
    )
    return repository


def hook_record(
    config: RepositoryConfig, provider: str, delivery_id: str, hook: Hook, *, now: datetime
) -> Recorded:
    with transaction.atomic():
        repository = repository_for(config)
        try:
            with transaction.atomic():
                Delivery.objects.create(
                    provider=provider,
                    delivery_id=delivery_id[:200],
                    repository=repository,
                    event=hook.event[:64],
                    received_at=now,
                )
        except IntegrityError:
            return Recorded(duplicate=True)
        for fact in hook.commits:
            commit_record(repository, fact, now=now)
        for run in hook.pipelines:
            pipeline_record(repository, run, now=now)
    return Recorded(duplicate=False, commits=len(hook.commits), pipelines=len(hook.pipelines))


_COMMIT_FIELDS = (
    "author",
    "title",
    "message",
    "url",
    "ref",
    "merge_number",
    "merge_title",
    "merge_url",
    "merged_by",
)


def commit_record(repository: Repository, fact: CommitFact, *, now: datetime) -> Commit:
    values = {name: getattr(fact, name) for name in _COMMIT_FIELDS}
    commit, created = Commit.objects.select_for_update().get_or_create(
        repository=repository,
        sha=fact.sha,
        defaults={**values, "committed_at": fact.at, "merged_at": fact.merged_at, "received_at": now},
    )
    if created:
        return commit
    changed = []
    # A push knows the commit (message, link), a merge event knows the pull request: keep both.
    for name, value in values.items():
        if value and not getattr(commit, name):
            setattr(commit, name, value)
            changed.append(name)
    for name, moment in (("committed_at", fact.at), ("merged_at", fact.merged_at)):
        if moment is not None and getattr(commit, name) is None:
            setattr(commit, name, moment)
            changed.append(name)
    if changed:
        commit.save(update_fields=sorted(set(changed)))
    return commit


def _newer(run: PipelineFact, at: datetime, stored: PipelineRun) -> bool:
    if at != stored.at:
        return at > stored.at
    # Same instant (or no times given): a final state beats a transient one.
    return run.state in TERMINAL or stored.state not in TERMINAL


def pipeline_record(repository: Repository, run: PipelineFact, *, now: datetime) -> PipelineRun:
    at = run.at or now
    fields = {
        "sha": run.sha,
        "pipeline": run.pipeline[:255],
        "state": run.state,
        "url": run.url[:1000],
        "ref": run.ref[:255],
        "at": at,
    }
    stored, created = PipelineRun.objects.select_for_update().get_or_create(
        repository=repository, provider=run.provider, run_id=run.run_id[:200], defaults=fields
    )
    if not created and _newer(run, at, stored):
        for name, value in fields.items():
            setattr(stored, name, value)
        stored.save(update_fields=sorted(fields))
    return stored
