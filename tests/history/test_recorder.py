from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, transaction

from dashboard.domain.timeline import timeline_events
from dashboard.history.models import Outcome, Release, TimelineEvent
from dashboard.history.recorder import (
    COMPRESS_WHEN_QUEUED,
    Recorder,
    _batch_cursor,
    _event_time,
    _insert_releases,
    _load_releases,
    _plan_each_statement,
    prune_history,
    record_batch,
    recorded_part,
)

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def view(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "cluster": "prod",
        "namespace": "shop",
        "name": "web",
        "uid": "u1",
        "status": "Healthy",
        "message": "",
        "step": "4/4",
        "currentStepIndex": 4,
        "setWeight": 100,
        "actualWeight": 100,
        "currentPodHash": "aaa",
        "stableRS": "aaa",
        "revision": 1,
        "images": [{"image": "web:1", "tags": ["stable"]}],
        "revisions": [],
        "findings": [],
    }
    base.update(overrides)
    return base


def canary(step: int, **overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "currentPodHash": "bbb",
        "stableRS": "aaa",
        "currentStepIndex": step,
        "step": f"{step}/4",
        "status": "Paused",
        "revision": 2,
        "images": [{"image": "web:2", "tags": ["canary"]}],
    }
    return view(**{**fields, **overrides})


def play(views: list[dict[str, Any] | None], *, whole: bool = False) -> None:
    """Record a sequence of views the way the watcher does: diff each with the previous one, and queue the
    part of the view history reads (``whole``: the whole view)."""
    previous: dict[str, Any] | None = None
    for i, current in enumerate(views):
        if current:
            at = T0 + timedelta(seconds=i)
            events = timeline_events(previous, current, at=at)
            record_batch([(current if whole else recorded_part(current, events), events, at)])
        previous = current


@pytest.mark.django_db
def test_a_release_is_recorded_with_its_steps_and_outcome() -> None:
    play([view(), canary(0), canary(1), canary(2), canary(3), canary(4, stableRS="bbb", status="Healthy")])
    release = Release.objects.get(pod_hash="bbb")
    assert release.outcome == Outcome.PROMOTED
    assert release.revision == 2
    assert release.images == ["web:2"]
    assert release.steps_reached == 4
    assert release.step_count == 4
    assert release.ended_at is not None
    steps = list(release.events.filter(kind="step.changed").values_list("data__toIndex", flat=True))
    assert steps == [1, 2, 3, 4]


@pytest.mark.django_db
def test_recording_twice_adds_no_rows() -> None:
    sequence = [view(), canary(0), canary(1), canary(2)]
    play(sequence)
    counts = (Release.objects.count(), TimelineEvent.objects.count())
    play(sequence)
    assert (Release.objects.count(), TimelineEvent.objects.count()) == counts


@pytest.mark.django_db
def test_one_batch_keeps_releases_of_look_alike_rollouts_apart() -> None:
    # The same names, namespaces and hashes crossed over: each release belongs to its own rollout only.
    views = [
        canary(2, namespace="shop", name="web", currentPodHash="bbb"),
        canary(3, namespace="shop", name="api", currentPodHash="ccc"),
        canary(1, namespace="cart", name="web", currentPodHash="ccc"),
    ]
    record_batch([(v, timeline_events(None, v, at=T0), T0) for v in views])
    recorded = {(r.namespace, r.rollout, r.pod_hash): r.steps_reached for r in Release.objects.all()}
    assert recorded == {("shop", "web", "bbb"): 2, ("shop", "api", "ccc"): 3, ("cart", "web", "ccc"): 1}


@pytest.mark.django_db
def test_an_abort_ends_the_release_as_aborted() -> None:
    play([view(), canary(1), canary(1, status="Degraded", message="RolloutAborted: metric failed")])
    release = Release.objects.get(pod_hash="bbb")
    assert release.outcome == Outcome.ABORTED
    assert release.events.filter(kind="release.aborted").exists()


@pytest.mark.django_db
def test_a_new_hash_supersedes_the_release_in_flight() -> None:
    play([view(), canary(2), canary(0, currentPodHash="ccc")])
    assert Release.objects.get(pod_hash="bbb").outcome == Outcome.SUPERSEDED
    ccc = Release.objects.get(pod_hash="ccc")
    assert ccc.outcome == Outcome.IN_PROGRESS
    assert ccc.events.filter(kind="release.rerendered").exists()


@pytest.mark.django_db
def test_retention_deletes_only_old_ended_releases() -> None:
    play([view(), canary(1)])
    Release.objects.filter(pod_hash="aaa").update(ended_at=T0 - timedelta(days=100))
    assert prune_history(90, now=T0) == 1
    assert list(Release.objects.values_list("pod_hash", flat=True)) == ["bbb"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("first_prune_after", "kept"), [(0.0, ["bbb"]), (60.0, ["aaa", "bbb"])])
def test_the_recorder_prunes_expired_releases_once_its_first_prune_is_due(
    first_prune_after: float, kept: list[str]
) -> None:
    play([view(), canary(1)])
    Release.objects.filter(pod_hash="aaa").update(ended_at=datetime.now(UTC) - timedelta(days=100))
    recorder = Recorder(max_wait=0.01, retention_days=90, first_prune_after=first_prune_after).start()
    try:
        recorder.submit(canary(2), [], T0)
        assert recorder.flush(10)
    finally:
        recorder.stop()  # the prune follows the batch: stopping waits for it
    assert list(Release.objects.order_by("pod_hash").values_list("pod_hash", flat=True)) == kept


@pytest.mark.django_db
def test_views_without_identity_are_ignored() -> None:
    record_batch([({"name": None}, [], T0)])
    assert Release.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_the_recorder_thread_writes_batches_and_flushes() -> None:
    recorder = Recorder(max_wait=0.01).start()
    try:
        previous = None
        for i, current in enumerate([view(), canary(0), canary(1)]):
            at = T0 + timedelta(seconds=i)
            recorder.submit(current, timeline_events(previous, current, at=at), at)
            previous = current
        assert recorder.flush(10)
        assert Release.objects.get(pod_hash="bbb").steps_reached == 1
    finally:
        recorder.stop()


@pytest.mark.django_db
def test_a_release_records_the_rollouts_labels_for_insights() -> None:
    play([view(labels={"team": "payments"}), canary(1, labels={"team": "payments", "tier": "1"})])
    assert Release.objects.get(pod_hash="bbb").labels == {"team": "payments", "tier": "1"}


@pytest.mark.django_db
def test_going_back_to_an_earlier_release_marks_the_one_it_left_as_rolled_back() -> None:
    promoted = canary(4, stableRS="bbb", status="Healthy")
    play([view(), canary(1), promoted, view(), canary(1, currentPodHash="ccc")])
    back = Release.objects.get(pod_hash="bbb")
    assert back.rolled_back_at == T0 + timedelta(seconds=3)
    assert Release.objects.get(pod_hash="aaa").rolled_back_at is None
    assert Release.objects.get(pod_hash="ccc").rolled_back_at is None  # a new release is no rollback


def test_the_recorded_part_of_a_view_leaves_out_what_history_does_not_read() -> None:
    full = canary(1, gitops={"revision": "abc123", "app": "shop", "resources": ["x"] * 100})
    full |= {"replicaSets": [{"podHash": "bbb", "pods": ["p"] * 100}], "events": [{"message": "m"}] * 20}
    part = recorded_part(full, [])
    assert part["gitops"] == {"revision": "abc123"}
    assert "replicaSets" not in part and "events" not in part and "findings" not in part
    assert part["currentPodHash"] == "bbb" and part["step"] == "1/4"


def test_the_recorded_part_keeps_the_findings_a_finding_event_is_notified_with() -> None:
    finding = {"code": "paused-degraded", "subject": None, "severity": "critical"}
    raised = {"kind": "finding.raised", "data": {"code": "paused-degraded"}}
    assert recorded_part(view(findings=[finding]), [raised])["findings"] == [finding]


@pytest.mark.django_db
def test_recording_the_recorded_part_writes_what_the_whole_view_writes() -> None:
    def releases() -> list[tuple[Any, ...]]:
        fields = ("pod_hash", "revision", "images", "steps_reached", "step_count", "outcome", "git_revision")
        rows = Release.objects.order_by("pod_hash").values_list(*fields, "labels", "rolled_back_at")
        return list(rows)

    def story(cluster: str) -> list[dict[str, Any] | None]:
        gitops = {"revision": "f00d", "app": "shop"}
        return [
            view(cluster=cluster, labels={"team": "payments"}),
            canary(1, cluster=cluster, gitops=gitops, containers=[{"name": "web", "image": "web:2"}]),
            canary(2, cluster=cluster, gitops=gitops, message="RolloutAborted: metric failed", aborted=True),
            canary(4, cluster=cluster, currentPodHash="ccc", stableRS="ccc", status="Healthy"),
        ]

    play(story("whole"), whole=True)
    whole = releases()
    Release.objects.all().delete()
    play(story("part"))
    assert releases() == whole and len(whole) == 3


@pytest.mark.django_db(transaction=True)
def test_a_backed_up_queue_holds_its_changes_compressed_and_records_them_all() -> None:
    recorder = Recorder(max_wait=0.01)  # not started yet: the queue backs up
    rollouts = [
        view(name=f"web-{i}", uid=f"u{i}", labels={"team": "payments"}) for i in range(COMPRESS_WHEN_QUEUED)
    ]
    rollouts.append(canary(2, name="web-last", uid="u-last", gitops={"revision": "f00d"}))
    for current in rollouts:
        recorder.submit(current, timeline_events(None, current, at=T0), T0)
    queued = list(recorder._queue.queue)
    assert not isinstance(queued[0], bytes) and isinstance(queued[-1], bytes)
    assert len(queued[-1]) < 1000
    recorder.start()
    try:
        assert recorder.flush(30)
    finally:
        recorder.stop()
    assert Release.objects.count() == COMPRESS_WHEN_QUEUED + 1
    last = Release.objects.get(rollout="web-last")
    assert (last.pod_hash, last.steps_reached, last.git_revision, last.started_at) == ("bbb", 2, "f00d", T0)
    assert TimelineEvent.objects.filter(release=last).exists()


@pytest.mark.django_db(transaction=True)  # the recorder's transactions are outermost
def test_a_recording_transaction_plans_each_statement_and_only_itself() -> None:
    def mode() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SHOW plan_cache_mode")
            return str(cursor.fetchone()[0])

    with transaction.atomic():
        _plan_each_statement()
        assert mode() == "force_custom_plan"
    assert mode() == "auto"


@pytest.mark.django_db
def test_the_many_row_statements_bind_their_parameters_on_the_server() -> None:
    import psycopg

    with transaction.atomic(), _batch_cursor() as cursor:
        assert not isinstance(cursor, psycopg.ClientCursor)  # Django's connections default to one
        cursor.execute("SELECT %s::text || %s::text", ["it's ", "bound"])
        assert cursor.fetchone() == ("it's bound",)


@pytest.mark.django_db
def test_releases_load_by_their_exact_keys_with_their_json_read() -> None:
    play([view(), canary(1, labels={"team": "payments"})])
    play([view(name="api", currentPodHash="ccc", stableRS="ccc")])
    # Every column of the wanted keys exists somewhere; only whole keys that exist come back.
    wanted = {key: Release() for key in [("prod", "shop", "web", "bbb"), ("prod", "shop", "web", "ccc")]}
    with transaction.atomic():
        found = _load_releases(wanted)
    assert list(found) == [("prod", "shop", "web", "bbb")]
    release = found[("prod", "shop", "web", "bbb")]
    assert (release.images, release.labels, release.steps_reached) == (["web:2"], {"team": "payments"}, 1)
    assert release.started_at == T0 + timedelta(seconds=1)


def test_an_event_time_without_a_zone_is_utc_and_a_broken_one_is_the_changes_time() -> None:
    assert _event_time({"at": "2026-11-29T10:00:05"}, T0) == T0 + timedelta(seconds=5)
    assert _event_time({"at": "2026-11-29T10:00:05Z"}, T0) == T0 + timedelta(seconds=5)
    assert _event_time({"at": "yesterday"}, T0) == T0


@pytest.mark.django_db(transaction=True)
def test_the_recorder_takes_what_is_queued_as_one_batch() -> None:
    recorder = Recorder(max_wait=0.3, batch_size=50)
    for i in range(120):  # queued before the thread starts: it takes them in batches of 50, 50, 20
        recorder.submit(view(name=f"web-{i}"), timeline_events(None, view(name=f"web-{i}"), at=T0), T0)
    batches: list[int] = []
    write = recorder._write

    def counting(batch: list[Any]) -> None:
        batches.append(len(batch))
        write(batch)

    recorder._write = counting  # type: ignore[method-assign]
    recorder.start()
    try:
        assert recorder.flush(10)
    finally:
        recorder.stop()
    assert batches == [50, 50, 20]
    assert Release.objects.count() == 120


@pytest.mark.django_db
def test_an_events_data_with_a_number_for_a_key_is_kept_with_that_key_as_text() -> None:
    event = {"kind": "note", "dedupe": "n1", "podHash": "aaa", "title": "a note", "data": {1: "one"}}
    record_batch([(view(), [event], T0)])
    assert TimelineEvent.objects.get(kind="note").data == {"1": "one"}


@pytest.mark.django_db
def test_a_batch_stores_its_integers_and_times_as_django_would_prepare_them() -> None:
    key = {"cluster": "prod", "namespace": "shop"}
    aware = Release(**key, rollout="web", pod_hash="aaa", started_at=T0, revision=3)
    naive = Release(**key, rollout="api", pod_hash="bbb", started_at=datetime(2026, 11, 29, 10))
    # Django's own warning: the naive one was prepared by Django
    with pytest.warns(RuntimeWarning, match="naive datetime"), transaction.atomic():
        _insert_releases([aware, naive])
    stored = {r.rollout: r for r in Release.objects.all()}
    assert (stored["web"].started_at, stored["web"].revision) == (T0, 3)
    assert stored["api"].started_at == T0  # made aware in the default time zone, UTC
