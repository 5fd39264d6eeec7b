"""Delivery insights over the recorded history, computed in PostgreSQL (aggregates and window functions).

``insights(filters, user)`` answers one document with every figure for the period and filters; each figure
is one SQL statement over the history tables (and the GitOps commits, and the audit log), so its cost grows
with the rows in the period, never with a Python loop over them. Per-bucket figures and the period's total
come from the same statement (``GROUP BY ROLLUP``). The definitions (docs/user-guide.md, "Insights") are
pinned by tests/history/test_insights.py on hand-made histories:

- deployment: a release that ended fully promoted (``outcome = promoted``) in the period and that the
  dashboard saw run (``ended_at > started_at``: a release already fully promoted when the dashboard first
  saw its rollout is not counted), counted in the bucket of its end;
- finished release: promoted, aborted or rolled back, ended in the period (``ended_at``);
- failed release: a finished release that was aborted, rolled back (``rolled_back_at``), or one of whose
  analyses finished ``Failed``; change failure rate = failed / finished;
- lead time: fully promoted time − merge time of the commit the release renders (``git_revision`` =
  ``Commit.sha`` with a known ``merged_at``; the earliest merge when several repositories hold it);
- incident: the rollout entered ``Degraded`` from any other phase (``phase.changed``); time to restore:
  from there to the rollout's next ``Healthy``; incidents without one yet are counted as open;
- time at a step: from reaching step *i* (``step.changed``, not inferred) to reaching the next step or, at
  the last one, the release's end; pause: ``pause.started`` to the release's next ``pause.ended``;
- finding: each ``finding.raised`` by code; open for: until the matching ``finding.cleared`` of the same
  rollout (dedupe key + ``:cleared``), still-open ones counted apart;
- actors: done actions (``AuditEntry`` result rows) by person and action.

Visibility is applied in the query (``dashboard.access.visibility.visible_rows``): a user's figures
count only the rollouts they may see. Non-goals: presentation (``dashboard.web.insights``), writes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connection, transaction
from django.db.models import CharField, Count, QuerySet, Value
from django.db.models.functions import Concat

from dashboard.access.visibility import UserLike, visible_rows
from dashboard.actions.models import AuditEntry
from dashboard.actions.models import Outcome as AuditOutcome
from dashboard.domain import timeline as tl
from dashboard.history.models import Outcome, Release

BUCKETS = ("day", "week")
DEFAULT_DAYS = 30
MAX_DAYS = 3 * 366
_KEY = Concat("cluster", Value("/"), "namespace", Value("/"), "rollout", output_field=CharField())
INCIDENT_LOOKBACK = timedelta(days=30)  # phase history read before the period, to tell an incident's start
WORK_MEM = "64MB"
# Statements in flight at once for one document: a few cores' worth, leaving most of a process's database
# pool (DATABASE_POOL_SIZE, 10 by default) to other requests.
PARALLEL = 3


class InsightsError(ValueError):
    """A filter that cannot be used; ``field`` names it (the API answers 400 with it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class InsightsUnavailable(RuntimeError):
    """Insights are computed by PostgreSQL; another database cannot answer them."""


@dataclass(frozen=True)
class Filters:
    start: datetime
    end: datetime
    bucket: str = "day"
    cluster: str = ""
    namespace: str = ""
    rollout: str = ""
    label: tuple[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "from": self.start.isoformat().replace("+00:00", "Z"),
            "to": self.end.isoformat().replace("+00:00", "Z"),
            "bucket": self.bucket,
            "cluster": self.cluster,
            "namespace": self.namespace,
            "rollout": self.rollout,
            "label": f"{self.label[0]}={self.label[1]}" if self.label else "",
        }


def parse_filters(query: Mapping[str, str], *, now: datetime) -> Filters:
    """Filters from a query string: ``cluster``, ``namespace``, ``rollout``, ``label`` (``key=value``),
    ``from`` / ``to`` (dates or RFC 3339 times, UTC) or ``days`` (before now), ``bucket`` (day|week)."""
    end = _time(query.get("to"), "to", end_of_day=True) if query.get("to") else now
    if query.get("from"):
        start = _time(query.get("from"), "from", end_of_day=False)
    else:
        days = query.get("days") or str(DEFAULT_DAYS)
        if not days.isdigit() or not 1 <= int(days) <= MAX_DAYS:
            raise InsightsError("days", f"expected a whole number of days from 1 to {MAX_DAYS}, got {days!r}")
        start = end - timedelta(days=int(days))
    if start >= end:
        raise InsightsError("from", "the period must start before it ends")
    if end - start > timedelta(days=MAX_DAYS):
        raise InsightsError("from", f"a period of at most {MAX_DAYS} days")
    bucket = query.get("bucket") or ("day" if end - start <= timedelta(days=62) else "week")
    if bucket not in BUCKETS:
        raise InsightsError("bucket", f"expected one of {', '.join(BUCKETS)}, got {bucket!r}")
    label = None
    if query.get("label"):
        key, sep, value = str(query["label"]).partition("=")
        if not sep or not key.strip():
            raise InsightsError("label", f"expected key=value (e.g. team=payments), got {query['label']!r}")
        label = (key.strip(), value.strip())
    return Filters(
        start=start,
        end=end,
        bucket=bucket,
        cluster=(query.get("cluster") or "").strip(),
        namespace=(query.get("namespace") or "").strip(),
        rollout=(query.get("rollout") or "").strip(),
        label=label,
    )


def _time(text: str | None, field: str, *, end_of_day: bool) -> datetime:
    raw = (text or "").strip()
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
            return moment + timedelta(days=1) if end_of_day else moment
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise InsightsError(field, f"expected a date (2026-11-01) or an RFC 3339 time, got {raw!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def scoped_releases(filters: Filters, user: UserLike | None) -> QuerySet[Release]:
    """The releases the figures may count: the filters, then what the user may see."""
    rows = Release.objects.all()
    if filters.cluster:
        rows = rows.filter(cluster=filters.cluster)
    if filters.namespace:
        rows = rows.filter(namespace=filters.namespace)
    if filters.rollout:
        rows = rows.filter(rollout=filters.rollout)
    if filters.label:
        rows = rows.filter(labels__contains={filters.label[0]: filters.label[1]})
    return visible_rows(user, rows)


def insights(filters: Filters, user: UserLike | None) -> dict[str, Any]:
    """Every figure for ``filters`` as ``user`` may see it (PostgreSQL only)."""
    if connection.vendor != "postgresql":
        raise InsightsUnavailable(
            "insights are computed by PostgreSQL: set DATABASE_URL to a PostgreSQL database"
        )
    scope = _Scope.of(filters, user)
    figures: dict[str, Callable[[], Any]] = {
        "releases": functools.partial(release_figures, scope),
        "leadTime": functools.partial(lead_time, scope),
        "restore": functools.partial(time_to_restore, scope),
        "steps": functools.partial(step_times, scope),
        "pauses": functools.partial(pause_times, scope),
        "findings": functools.partial(finding_counts, scope),
        "actors": functools.partial(actor_counts, filters, user),
    }
    return {"filters": filters.to_dict(), **_together(figures)}


def _together(figures: Mapping[str, Callable[[], Any]]) -> dict[str, Any]:
    """Each figure's statement, several at once on their own connections: they are independent, and
    PostgreSQL runs one statement on one core. Inside a transaction they run in turn on its connection
    (only it sees what the transaction wrote)."""
    if connection.in_atomic_block:
        return {name: figure() for name, figure in figures.items()}

    def run(figure: Callable[[], Any]) -> Any:
        try:
            return figure()
        finally:
            connection.close()  # this thread's connection (back to the pool, when there is one)

    with ThreadPoolExecutor(max_workers=PARALLEL, thread_name_prefix="insights") as pool:
        futures = {name: pool.submit(run, figure) for name, figure in figures.items()}
        return {name: future.result() for name, future in futures.items()}


@dataclass(frozen=True)
class _Scope:
    ids_sql: str  # SELECT id FROM the scoped releases
    ids_params: tuple[Any, ...]
    filters: Filters
    everything: bool = False  # no filter and no visibility limit: every release is in scope

    @classmethod
    def of(cls, filters: Filters, user: UserLike | None) -> _Scope:
        releases = scoped_releases(filters, user)
        try:
            ids_sql, ids_params = releases.order_by().values("id").query.sql_with_params()
        except EmptyResultSet:  # nothing visible (or a filter that can match nothing)
            return cls("SELECT NULL::bigint WHERE false", (), filters)
        return cls(ids_sql, tuple(ids_params), filters, everything=not releases.query.where)

    def params(self, **named: Any) -> dict[str, Any]:
        return {
            "start": self.filters.start,
            "end": self.filters.end,
            "bucket": self.filters.bucket,
            **named,
        }

    def sql(self, template: str) -> str:
        """``template`` with each ``{in_scope:COLUMN}`` made a test that COLUMN is a scoped release's id:
        ``true`` when every release is in scope (an unfiltered superuser), so the statement reads the
        period's rows without first gathering 100,000 ids to compare them with."""
        if self.everything:
            return _IN_SCOPE.sub("true", template)
        # The scoped releases' subquery uses %s placeholders: name them so they mix with %(named)s ones.
        names = [f"%(ids{i})s" for i in range(len(self.ids_params))]
        subquery = self.ids_sql.replace("%%", "\0") % tuple(names) if names else self.ids_sql
        subquery = subquery.replace("\0", "%%")
        return _IN_SCOPE.sub(lambda m: f"{m.group(1)} IN ({subquery})", template)

    def run(self, template: str, **named: Any) -> list[tuple[Any, ...]]:
        params = {**self.params(**named), **{f"ids{i}": v for i, v in enumerate(self.ids_params)}}
        with transaction.atomic(), connection.cursor() as cursor:
            # The windows and percentiles sort a period's events: in memory, not in temporary files.
            cursor.execute(f"SET LOCAL work_mem = '{WORK_MEM}'")
            # These statements' estimated costs pass PostgreSQL's JIT threshold, and compiling them took
            # longer (up to 1.2 s at a year of 100k releases) than running them (about 0.1–0.7 s).
            cursor.execute("SET LOCAL jit = off")
            cursor.execute(self.sql(template), params)
            return list(cursor.fetchall())


_IN_SCOPE = re.compile(r"\{in_scope:([a-z_.]+)\}")


def _bucket(value: Any) -> str | None:
    return value.date().isoformat() if isinstance(value, datetime) else None


def _num(value: Any) -> float | None:
    return None if value is None else round(float(value), 3)


_RELEASES_SQL = """
SELECT date_trunc(%(bucket)s, r.ended_at AT TIME ZONE 'UTC') AS bucket,
       count(*) FILTER (WHERE r.outcome = %(promoted)s AND r.ended_at > r.started_at) AS deployments,
       count(*) AS finished,
       count(*) FILTER (WHERE r.outcome = %(aborted)s OR r.rolled_back_at IS NOT NULL OR EXISTS (
           SELECT 1 FROM dashboard_timelineevent a
           WHERE a.release_id = r.id AND a.kind = %(analysis)s AND a.data ->> 'status' = 'Failed')) AS failed,
       count(*) FILTER (WHERE r.outcome = %(aborted)s) AS aborted,
       count(*) FILTER (WHERE r.rolled_back_at IS NOT NULL) AS rolled_back
FROM dashboard_release r
WHERE {in_scope:r.id}
  AND r.ended_at >= %(start)s AND r.ended_at < %(end)s
  AND (r.outcome IN (%(promoted)s, %(aborted)s) OR r.rolled_back_at IS NOT NULL)
GROUP BY ROLLUP (1) ORDER BY 1 NULLS LAST
"""


def release_figures(scope: _Scope) -> dict[str, Any]:
    """Deployments (count, per day) and the change failure rate, per bucket and for the period."""
    rows = scope.run(
        _RELEASES_SQL,
        promoted=Outcome.PROMOTED.value,
        aborted=Outcome.ABORTED.value,
        analysis=tl.ANALYSIS_FINISHED,
    )
    series, total = [], {"deployments": 0, "finished": 0, "failed": 0, "aborted": 0, "rolledBack": 0}
    for bucket, deployments, finished, failed, aborted, rolled_back in rows:
        point = {
            "deployments": deployments,
            "finished": finished,
            "failed": failed,
            "aborted": aborted,
            "rolledBack": rolled_back,
            "changeFailureRate": _rate(failed, finished),
        }
        if bucket is None:
            total = point
        else:
            series.append({"bucket": _bucket(bucket), **point})
    days = (scope.filters.end - scope.filters.start).total_seconds() / 86400
    summary = {
        **total,
        "changeFailureRate": _rate(total["failed"], total["finished"]),
        "perDay": round(total["deployments"] / days, 3) if days else None,
    }
    return {"summary": summary, "series": series}


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


_LEAD_SQL = """
WITH deployed AS (
    SELECT r.ended_at AS promoted_at, lower(r.git_revision) AS sha
    FROM dashboard_release r
    WHERE {in_scope:r.id} AND r.outcome = %(promoted)s AND r.ended_at > r.started_at
      AND r.ended_at >= %(start)s AND r.ended_at < %(end)s AND r.git_revision <> ''
), merged AS (  -- the deployed commits' first merges: one set to join, not one lookup per release
    SELECT c.sha, min(c.merged_at) AS merged_at FROM gitops_commit c
    WHERE c.merged_at IS NOT NULL AND c.sha IN (SELECT sha FROM deployed) GROUP BY c.sha
)
SELECT date_trunc(%(bucket)s, d.promoted_at AT TIME ZONE 'UTC') AS bucket,
       count(*) AS releases,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d.promoted_at - m.merged_at)) AS median,
       percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM d.promoted_at - m.merged_at)) AS p90
FROM deployed d JOIN merged m ON m.sha = d.sha
GROUP BY ROLLUP (1) ORDER BY 1 NULLS LAST
"""


def lead_time(scope: _Scope) -> dict[str, Any]:
    """Merge → fully promoted, in seconds (median and 90th percentile), for deployments with a known merge."""
    rows = scope.run(_LEAD_SQL, promoted=Outcome.PROMOTED.value)
    return _rolled_up(rows, ("releases", "medianSeconds", "p90Seconds"))


def _rolled_up(rows: Sequence[tuple[Any, ...]], names: Sequence[str]) -> dict[str, Any]:
    """``GROUP BY ROLLUP (bucket)`` rows: the NULL bucket is the period's summary, the others its series.
    Counts default to 0 and ``…Seconds`` to None (an empty period)."""
    summary: dict[str, Any] = {name: None if name.endswith("Seconds") else 0 for name in names}
    series: list[dict[str, Any]] = []
    for bucket, *values in rows:
        pairs = zip(names, values, strict=True)
        point = {name: _num(v) if name.endswith("Seconds") else v for name, v in pairs}
        if bucket is None:
            summary = point
        else:
            series.append({"bucket": _bucket(bucket), **point})
    return {"summary": summary, "series": series}


_RESTORE_SQL = """
WITH phases AS (
    SELECT r.cluster, r.namespace, r.rollout, e.at, e.data ->> 'toStatus' AS status
    FROM dashboard_timelineevent e JOIN dashboard_release r ON r.id = e.release_id
    WHERE e.kind = %(phase)s AND e.at >= %(lookback)s AND {in_scope:r.id}
      AND e.data ->> 'toStatus' IN ('Degraded', 'Healthy')
), marked AS (
    -- Byte order ("C") keeps each rollout's phases together and sorts far faster. The next Healthy is a
    -- running minimum over the later rows (newest first), which grows one row at a time.
    SELECT p.*,
           lag(p.status) OVER (PARTITION BY p.cluster COLLATE "C", p.namespace COLLATE "C",
                               p.rollout COLLATE "C" ORDER BY p.at) AS before,
           min(p.at) FILTER (WHERE p.status = 'Healthy')
               OVER (PARTITION BY p.cluster COLLATE "C", p.namespace COLLATE "C", p.rollout COLLATE "C"
                     ORDER BY p.at DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS restored
    FROM phases p
)
SELECT date_trunc(%(bucket)s, m.at AT TIME ZONE 'UTC') AS bucket,
       count(*) AS incidents,
       count(*) FILTER (WHERE m.restored IS NULL) AS open,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM m.restored - m.at)) AS median,
       percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM m.restored - m.at)) AS p90
FROM marked m
WHERE m.status = 'Degraded' AND m.before IS DISTINCT FROM 'Degraded' AND m.at >= %(start)s AND m.at < %(end)s
GROUP BY ROLLUP (1) ORDER BY 1 NULLS LAST
"""


def time_to_restore(scope: _Scope) -> dict[str, Any]:
    """Incidents (entered Degraded) and the time until the rollout was next Healthy, in seconds."""
    rows = scope.run(_RESTORE_SQL, phase=tl.PHASE_CHANGED, lookback=scope.filters.start - INCIDENT_LOOKBACK)
    return _rolled_up(rows, ("incidents", "open", "medianSeconds", "p90Seconds"))


_STEPS_SQL = """
WITH steps AS (
    SELECT e.release_id, e.at, (e.data ->> 'toIndex')::int AS step, e.data ->> 'inferred' AS inferred,
           lead(e.at) OVER (PARTITION BY e.release_id ORDER BY e.at, e.id) AS next_at
    FROM dashboard_timelineevent e
    WHERE e.kind = %(step)s AND e.at >= %(start)s AND {in_scope:e.release_id}
), timed AS (
    SELECT s.step, extract(epoch FROM coalesce(s.next_at, r.ended_at) - s.at) AS seconds
    FROM steps s JOIN dashboard_release r ON r.id = s.release_id
    WHERE s.at < %(end)s AND s.inferred IS DISTINCT FROM 'true'
      AND coalesce(s.next_at, r.ended_at) IS NOT NULL
)
SELECT step, count(*) AS times, percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds),
       percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds)
FROM timed GROUP BY step ORDER BY step
"""


def step_times(scope: _Scope) -> list[dict[str, Any]]:
    """Per step index: how often a release spent time there and the median / p90 seconds it stayed."""
    return [
        {"step": step, "count": count, "medianSeconds": _num(median), "p90Seconds": _num(p90)}
        for step, count, median, p90 in scope.run(_STEPS_SQL, step=tl.STEP_CHANGED)
    ]


_PAUSES_SQL = """
WITH pauses AS (
    SELECT e.kind, e.at, coalesce(nullif(e.data ->> 'reason', ''), 'Paused') AS reason,
           lead(e.kind) OVER w AS next_kind, lead(e.at) OVER w AS next_at
    FROM dashboard_timelineevent e
    WHERE e.kind IN (%(started)s, %(ended)s) AND e.at >= %(start)s AND {in_scope:e.release_id}
    WINDOW w AS (PARTITION BY e.release_id ORDER BY e.at, e.id)
)
SELECT p.reason, count(*) AS pauses,
       count(*) FILTER (WHERE p.next_kind IS DISTINCT FROM %(ended)s) AS open,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM p.next_at - p.at))
           FILTER (WHERE p.next_kind = %(ended)s),
       percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM p.next_at - p.at))
           FILTER (WHERE p.next_kind = %(ended)s)
FROM pauses p
WHERE p.kind = %(started)s AND p.at < %(end)s
GROUP BY p.reason ORDER BY count(*) DESC, p.reason
"""


def pause_times(scope: _Scope) -> list[dict[str, Any]]:
    """Per pause reason (``CanaryPauseStep``, ``BlueGreenPause``, …): count, still open, median and p90
    seconds."""
    return [
        {
            "reason": reason,
            "count": count,
            "open": still_open,
            "medianSeconds": _num(median),
            "p90Seconds": _num(p90),
        }
        for reason, count, still_open, median, p90 in scope.run(
            _PAUSES_SQL, started=tl.PAUSE_STARTED, ended=tl.PAUSE_ENDED
        )
    ]


_FINDINGS_SQL = """
WITH raised AS (
    SELECT e.id, e.at, e.data ->> 'code' AS code, e.data ->> 'severity' AS severity,
           left(e.dedupe || ':cleared', 255) AS clear_key, r.cluster, r.namespace, r.rollout
    FROM dashboard_timelineevent e JOIN dashboard_release r ON r.id = e.release_id
    WHERE e.kind = %(raised)s AND e.at >= %(start)s AND e.at < %(end)s AND {in_scope:e.release_id}
), paired AS MATERIALIZED (  -- once, not once per aggregate that reads cleared_at
    -- Each raise looks its clears up by key first (the partial index of clears by dedupe key: about one
    -- row), then checks their rollout. OFFSET 0 keeps that order: the planner underestimates a rollout's
    -- releases and would otherwise walk every one of them per raise.
    SELECT raised.at, raised.code, raised.severity, (
        SELECT min(c.at) FROM (
            SELECT x.at, x.release_id FROM dashboard_timelineevent x
            WHERE x.kind = %(cleared)s AND x.dedupe = raised.clear_key AND x.at >= %(start)s OFFSET 0
        ) c JOIN dashboard_release rx ON rx.id = c.release_id
        WHERE rx.cluster = raised.cluster AND rx.namespace = raised.namespace AND rx.rollout = raised.rollout
    ) AS cleared_at
    FROM raised
)
SELECT code, max(severity), count(*), count(*) FILTER (WHERE cleared_at IS NULL),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM cleared_at - at))
           FILTER (WHERE cleared_at IS NOT NULL),
       percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM cleared_at - at))
           FILTER (WHERE cleared_at IS NOT NULL)
FROM paired GROUP BY code ORDER BY count(*) DESC, code
"""


def finding_counts(scope: _Scope) -> list[dict[str, Any]]:
    """Per finding code: times raised, still open, and how long it stayed open (median / p90 seconds)."""
    return [
        {
            "code": code,
            "severity": severity,
            "raised": raised,
            "open": still_open,
            "medianOpenSeconds": _num(median),
            "p90OpenSeconds": _num(p90),
        }
        for code, severity, raised, still_open, median, p90 in scope.run(
            _FINDINGS_SQL, raised=tl.FINDING_RAISED, cleared=tl.FINDING_CLEARED
        )
    ]


def actor_counts(filters: Filters, user: UserLike | None) -> list[dict[str, Any]]:
    """Who did which action how often: done actions (audit result rows) in the period, by person."""
    rows = AuditEntry.objects.filter(
        outcome=AuditOutcome.DONE, attempt__isnull=False, at__gte=filters.start, at__lt=filters.end
    )
    if filters.cluster:
        rows = rows.filter(cluster=filters.cluster)
    if filters.namespace:
        rows = rows.filter(namespace=filters.namespace)
    if filters.rollout:
        rows = rows.filter(rollout=filters.rollout)
    if filters.label:
        # The audit log has no labels: the rollouts whose releases carry the label, as one set to join.
        labelled = (
            Release.objects.filter(labels__contains={filters.label[0]: filters.label[1]})
            .order_by()
            .annotate(_key=_KEY)
            .values("_key")
            .distinct()
        )
        rows = rows.alias(_key=_KEY).filter(_key__in=labelled)
    rows = visible_rows(user, rows)
    counted = (
        rows.order_by().values("actor", "action").annotate(count=Count("id")).order_by("-count", "actor")
    )
    return [{"actor": r["actor"], "action": r["action"], "count": r["count"]} for r in counted]
