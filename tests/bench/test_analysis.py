"""The benchmark's arithmetic: percentiles, delay attribution, loss comparison, profiles."""

from __future__ import annotations

import math

import pytest

from dashboard.bench.analysis import (
    ClientLog,
    Entry,
    PublishIndex,
    Write,
    compare_tables,
    delays,
    histogram_delta,
    largest_gap,
    over_time,
    percentile,
    profile_summary,
    rate_series,
    share_over,
    summarize,
)


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50
    assert percentile(values, 99) == 99
    assert percentile(values, 100) == 100
    assert percentile([7.0], 99) == 7


def test_percentile_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)


def test_summarize_reports_none_when_empty() -> None:
    assert summarize([])["p99"] is None
    assert summarize([3.0, 1.0, 2.0])["p50"] == 2.0


def test_a_write_is_published_by_the_first_entry_that_includes_it() -> None:
    entries = [
        Entry((1000, 0), "c/ns/a", 5, 10.0),
        Entry((1001, 0), "c/ns/b", 6, 10.5),
        Entry((1002, 0), "c/ns/a", 9, 11.0),
    ]
    index = PublishIndex.build(entries)
    assert index.first_covering(Write("c/ns/a", 7, 9.0)) == ((1002, 0), 11.0)
    assert index.first_covering(Write("c/ns/a", 5, 9.0)) == ((1000, 0), 10.0)
    assert index.first_covering(Write("c/ns/a", 10, 9.0)) is None
    assert index.first_covering(Write("c/ns/zzz", 1, 9.0)) is None


def test_a_client_receives_an_entry_with_the_first_message_at_or_past_its_id() -> None:
    client = ClientLog([(999, 0), (1001, 3), (1005, 0)], [9.0, 10.2, 11.0])
    assert client.arrival((1000, 0)) == 10.2
    assert client.arrival((1001, 3)) == 10.2
    assert client.arrival((1006, 0)) is None


def test_delays_count_unpublished_and_undelivered_writes() -> None:
    index = PublishIndex.build([Entry((1000, 0), "c/ns/a", 5, 10.1)])
    clients = [ClientLog([(1000, 0)], [10.3]), ClientLog([(900, 0)], [9.0])]
    result = delays([Write("c/ns/a", 5, 10.0), Write("c/ns/b", 1, 10.0)], index, clients)
    assert [round(ms) for _, ms in result.publish] == [100]
    assert [round(ms) for _, ms in result.end_to_end] == [300]
    assert result.unpublished == 1
    assert result.undelivered == 1 + 2  # the second client never got a; nobody got b


def test_a_write_with_its_apis_answer_is_also_counted_from_the_answer() -> None:
    index = PublishIndex.build([Entry((1000, 0), "c/ns/a", 5, 10.1)])
    clients = [ClientLog([(1000, 0)], [10.3])]
    result = delays([Write("c/ns/a", 5, 10.0, answered=10.05)], index, clients)
    assert [round(ms) for _, ms in result.end_to_end] == [300]
    assert [round(ms) for ms in result.end_to_end_from_answer] == [250]
    assert [round(ms) for ms in result.requests] == [50]


def test_a_write_with_its_commit_time_is_counted_from_the_commit() -> None:
    index = PublishIndex.build([Entry((1000, 0), "c/ns/a", 5, 10.1)])
    clients = [ClientLog([(1000, 0)], [10.3])]
    write = Write("c/ns/a", 5, 10.0, answered=10.08, committed=10.04)
    result = delays([write], index, clients)
    assert [round(ms) for ms in result.end_to_end_from_commit] == [260]
    assert [round(ms) for ms in result.publish_from_commit] == [60]


def test_removals_are_not_publishes() -> None:
    index = PublishIndex.build([Entry((1000, 0), "c/ns/a", None, 10.0)])
    assert index.first_covering(Write("c/ns/a", 1, 9.0)) is None


def test_over_time_buckets_by_write_second() -> None:
    series = over_time([(100.2, 10.0), (100.9, 30.0), (102.5, 5.0)], start=100.0)
    assert [(s["t"], s["count"], s["p99"]) for s in series] == [(0.0, 2, 30.0), (2.0, 1, 5.0)]


def test_rate_series_keeps_empty_seconds() -> None:
    assert [s["rate"] for s in rate_series([0.1, 0.2, 2.5], start=0.0)] == [2.0, 0.0, 1.0]


def test_compare_tables_names_missing_extra_and_stale_rows() -> None:
    result = compare_tables({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "X", "d": "4"})
    assert result == {"missing": ["c"], "extra": ["d"], "stale": ["b"]}


def test_largest_gap_finds_the_blackout() -> None:
    assert largest_gap([1.0, 2.0, 7.0, 8.0], start=0.0, end=9.0) == 5.0


def test_profile_summary_ranks_own_and_total_time() -> None:
    lines = ["main;loop;build 6\n", "main;loop;publish 3\n", "main;idle 1", "garbage"]
    summary = profile_summary(lines)
    assert summary["samples"] == 10
    assert summary["own"][0] == {"frame": "build", "percent": 60.0}
    assert {"frame": "loop", "percent": 90.0} in summary["total"]


def test_a_histograms_change_between_two_scrapes_gives_the_share_over_a_bound() -> None:
    before = {0.1: 10.0, 0.25: 18.0, math.inf: 20.0}
    after = {0.1: 100.0, 0.25: 198.0, math.inf: 220.0}
    delta = histogram_delta(before, after)
    assert delta == {0.1: 90.0, 0.25: 180.0, math.inf: 200.0}
    assert share_over(delta, 0.25) == 0.1  # 20 of the 200 took longer than 250 ms
    assert share_over(delta, 0.5) is None  # not one of its bounds
    assert share_over({math.inf: 0.0}, 0.25) is None  # nothing observed
