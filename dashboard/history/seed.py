"""A generated release history for the insights benchmark: ``seed_history(releases=100_000, …)``.

Deterministic for a seed. Each rollout releases one after another; a release runs 10 minutes to 2 hours and
ends promoted (most), aborted, rolled back or superseded, with the timeline events the recorder would write
(steps, a pause, phase changes, an analysis, sometimes a finding raised and cleared), a merged commit for
most, and an audit row for each person's promote or abort. Rows go in with PostgreSQL ``COPY`` (a million
events in seconds); ids are taken after the highest existing one and the sequences moved past them.

Non-goals: realism beyond what the insights read; other databases.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.apps import apps
from django.db import connection, transaction
from django.db.models import Model

from dashboard.domain import timeline as tl

CLUSTERS = ("prod-eu", "prod-us", "staging")
PEOPLE = ("ana", "bo", "chen", "dara", "eli", "fay")
FINDINGS = (("weight-fight", "critical"), ("stuck-paused", "warning"), ("analysis-inconclusive", "warning"))


@dataclass
class Seeded:
    releases: int = 0
    events: int = 0
    commits: int = 0
    actions: int = 0


def _next_id(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}")
        return int(cursor.fetchone()[0])


def _move_sequence(table: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
        )


def seed_history(
    releases: int,
    *,
    rollouts: int = 600,
    days: int = 365,
    seed: int = 1,
    now: datetime | None = None,
    rollout: tuple[str, str, str] | None = None,
) -> Seeded:
    """Insert ``releases`` releases spread over the ``days`` before ``now`` across ``rollouts`` rollouts,
    or all of them on one ``rollout`` (cluster, namespace, name): the history page's long-history case."""
    if rollout is not None:
        rollouts = 1
    if connection.vendor != "postgresql":
        raise RuntimeError("seed_history writes with PostgreSQL COPY: set DATABASE_URL to PostgreSQL")
    release_id = _next_id("dashboard_release")
    rng = random.Random(seed * 1_000_003 + release_id)  # a second run adds new commits, not the same ones
    end = now or datetime.now(UTC)
    begin = end - timedelta(days=days)
    per_rollout = max(1, releases // rollouts)
    gap = timedelta(days=days) / per_rollout
    release_rows: list[tuple[Any, ...]] = []
    event_rows: list[tuple[Any, ...]] = []
    commit_rows: list[tuple[Any, ...]] = []
    audit_rows: list[tuple[Any, ...]] = []
    counts = Seeded()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO gitops_repository (key, url, provider, created_at) VALUES (%s, %s, %s, now()) "
                "ON CONFLICT (key) DO NOTHING",
                ["git.example.com/bench/deploy", "https://git.example.com/bench/deploy", "github"],
            )
            cursor.execute(
                "SELECT id FROM gitops_repository WHERE key = %s", ["git.example.com/bench/deploy"]
            )
            repository = cursor.fetchone()[0]
        audit_id = _next_id("actions_auditentry")
        for n in range(releases):
            index = n % rollouts
            cluster, team, name = rollout or (
                CLUSTERS[index % len(CLUSTERS)],
                f"team-{index % 24:02d}",
                f"svc-{index:04d}",
            )
            started = (
                begin
                + gap * (n // rollouts)
                + timedelta(seconds=rng.randint(0, int(gap.total_seconds() / 2)))
            )
            run = timedelta(minutes=rng.randint(10, 120))
            roll = rng.random()
            outcome, rolled_back = "promoted", None
            ended: datetime | None
            if roll < 0.08:
                outcome = "aborted"
            elif roll < 0.11:
                outcome, rolled_back = "superseded", started + run
            elif roll < 0.17:
                outcome = "superseded"
            ended = started + run
            if ended > end:
                outcome, ended, rolled_back = "in_progress", None, None
            sha = f"{rng.getrandbits(160):040x}" if rng.random() < 0.7 else ""
            if sha:
                merged = started - timedelta(minutes=rng.randint(5, 3 * 24 * 60))
                commit_rows.append(
                    (
                        repository,
                        sha,
                        "",
                        "",
                        "",
                        "",
                        "main",
                        merged,
                        merged,
                        "",
                        "",
                        "",
                        PEOPLE[rng.randrange(len(PEOPLE))],
                        merged,
                    )
                )
            labels = json.dumps({"team": team, "app.kubernetes.io/name": name})
            release_rows.append(
                (
                    release_id,
                    cluster,
                    team,
                    name,
                    "",
                    f"{release_id:010x}",
                    n // rollouts + 1,
                    started,
                    ended,
                    outcome,
                    "[]",
                    4,
                    4,
                    sha,
                    labels,
                    rolled_back,
                    ended or started,
                )
            )
            event_rows.extend(_events(rng, release_id, started, ended, outcome))
            if outcome in ("promoted", "aborted") and ended and rng.random() < 0.5:
                action = "abort" if outcome == "aborted" else "promote"
                who = PEOPLE[rng.randrange(len(PEOPLE))]
                moment = ended - timedelta(seconds=5)
                audit_rows.append((audit_id, moment, who, action, cluster, team, name, "accepted", None))
                audit_rows.append((audit_id + 1, moment, who, action, cluster, team, name, "done", audit_id))
                audit_id += 2
            release_id += 1
        counts = Seeded(len(release_rows), len(event_rows), len(commit_rows), len(audit_rows) // 2)
        _copy(
            "dashboard_release",
            (
                "id",
                "cluster",
                "namespace",
                "rollout",
                "rollout_uid",
                "pod_hash",
                "revision",
                "started_at",
                "ended_at",
                "outcome",
                "images",
                "steps_reached",
                "step_count",
                "git_revision",
                "labels",
                "rolled_back_at",
                "updated_at",
            ),
            release_rows,
        )
        _copy("dashboard_timelineevent", ("release_id", "kind", "dedupe", "at", "title", "data"), event_rows)
        _copy(
            "gitops_commit",
            (
                "repository_id",
                "sha",
                "author",
                "title",
                "message",
                "url",
                "ref",
                "committed_at",
                "received_at",
                "merge_number",
                "merge_title",
                "merge_url",
                "merged_by",
                "merged_at",
            ),
            commit_rows,
        )
        _copy(
            "actions_auditentry",
            (
                "id",
                "at",
                "actor",
                "action",
                "cluster",
                "namespace",
                "rollout",
                "outcome",
                "attempt_id",
                "groups",
                "params",
                "seen",
                "idempotency_key",
                "detail",
                "changes",
            ),
            [(*row, "[]", "{}", "{}", "", "", "{}") for row in audit_rows],
        )
        for table in ("dashboard_release", "dashboard_timelineevent", "actions_auditentry", "gitops_commit"):
            _move_sequence(table)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE dashboard_release; ANALYZE dashboard_timelineevent; ANALYZE gitops_commit")
    return counts


def _copy(table: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    """COPY ``rows`` into ``table``; every other column gets its model field's default, so a field added
    later (with a default) never breaks the generator."""
    if not rows:
        return
    rest = [f for f in _model(table)._meta.concrete_fields if f.column not in columns and not f.primary_key]
    missing = [f.column for f in rest if not f.has_default() and not f.null]
    if missing:
        raise RuntimeError(f"seed_history: no value for {table}.{', '.join(missing)}: add it to the seed")
    extra = tuple(_copy_value(f.get_default()) for f in rest)
    names = ", ".join((*columns, *(f.column for f in rest)))
    raw = connection.connection
    assert raw is not None
    with raw.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row((*row, *extra))


def _model(table: str) -> type[Model]:
    return next(m for m in apps.get_models() if m._meta.db_table == table)


def _copy_value(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, dict | list) else value


def _events(
    rng: random.Random, release_id: int, started: datetime, ended: datetime | None, outcome: str
) -> Iterator[tuple[Any, ...]]:
    finish = ended or started + timedelta(minutes=30)
    span = (finish - started) / 6

    def row(kind: str, at: datetime, dedupe: str, **data: Any) -> tuple[Any, ...]:
        return (release_id, kind, dedupe, at, "", json.dumps(data))

    yield row(tl.PHASE_CHANGED, started, "phase:0:Healthy->Progressing", toStatus="Progressing")
    reached = 4 if outcome == "promoted" else rng.randint(1, 3)
    for step in range(1, reached + 1):
        yield row(tl.STEP_CHANGED, started + span * step, f"step:{step}", toIndex=step, inferred=False)
    yield row(tl.PAUSE_STARTED, started + span, "pause:1", reason="CanaryPauseStep", stepIndex=1)
    if reached > 1:
        yield row(tl.PAUSE_ENDED, started + span * 2 - timedelta(seconds=1), "unpause:1", stepIndex=1)
    failed = outcome == "aborted" and rng.random() < 0.7
    yield row(
        tl.ANALYSIS_FINISHED,
        started + span * 1.5,
        "analysis:a:finished",
        status="Failed" if failed else "Successful",
    )
    if rng.random() < 0.12:
        code, severity = FINDINGS[rng.randrange(len(FINDINGS))]
        dedupe = f"finding:{code}:{started.isoformat()}"
        yield row(tl.FINDING_RAISED, started + span, dedupe, code=code, severity=severity)
        if ended is not None:
            yield row(
                tl.FINDING_CLEARED, started + span * 3, dedupe + ":cleared", code=code, severity=severity
            )
    if outcome == "aborted" and ended is not None:
        yield row(tl.PHASE_CHANGED, ended, "phase:x:Progressing->Degraded", toStatus="Degraded")
    elif outcome == "promoted" and ended is not None:
        yield row(tl.PHASE_CHANGED, ended, "phase:4:Progressing->Healthy", toStatus="Healthy")
