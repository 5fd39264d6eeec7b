"""The bench summary says what it measured, and why a figure is missing when one is."""

from __future__ import annotations

from typing import Any

from dashboard.bench.report import first_render_text


def test_a_measured_first_render_prints_its_milliseconds() -> None:
    assert first_render_text({"browser": {"first_render_ms": 412.5}}) == "412.5 ms"


def test_a_run_without_the_browser_says_so_rather_than_none() -> None:
    assert first_render_text({}) == "not measured (run with --no-browser)"


def test_a_failed_browser_run_prints_its_error() -> None:
    text = first_render_text({"browser": {"error": "RuntimeError: /usr/bin/chromium is not installed"}})
    assert text == "not measured: RuntimeError: /usr/bin/chromium is not installed"


def test_a_web_restart_is_timed_until_the_last_page_had_what_was_published_while_it_was_down() -> None:
    from dashboard.bench.report import _restart

    restart = {"server": "http://a", "stopped_at": 100.0, "last_id": "5-0", "updates_while_down": 3}
    pages = [
        {"server": "http://a", "messages": [["4-0", 99.0], ["5-0", 101.5]]},
        {"server": "http://a", "messages": [["4-0", 99.0], ["6-0", 103.0]]},
        {"server": "http://b", "messages": [["4-0", 99.0]]},  # another server's page did not reconnect
    ]
    figures = _restart(restart, pages)
    assert figures["clients"] == 2 and figures["clients_resumed"] == 2
    assert figures["seconds_until_all_resumed"] == 3.0
    assert "stopped_at" not in figures


def test_a_page_that_never_resumed_leaves_the_restart_without_a_time() -> None:
    from dashboard.bench.report import _restart

    restart = {"server": "http://a", "stopped_at": 100.0, "last_id": "5-0"}
    figures = _restart(restart, [{"server": "http://a", "messages": [["4-0", 99.0]]}])
    assert figures["clients_resumed"] == 0 and figures["seconds_until_all_resumed"] is None


def test_the_summary_names_the_pages_past_the_fleet_and_why_a_figure_is_missing() -> None:
    from dashboard.bench.report import _summary_lines_23

    result = {
        "pages": {
            "fleet_interaction": {"error": "filter /: RuntimeError: no chromium"},
            "rollout": {"key": "a/b/c", "first_byte": {"median_ms": 12.0}, "browser": {"error": "boom"}},
            "history": {
                "key": "a/b/d",
                "releases": 10_000,
                "history": {"median_ms": 20.0},
                "timeline_api": {"median_ms": 30.0},
                "rollout": {"error": "GET /x: timeout"},
            },
        },
        "restart": {},
    }
    lines = _summary_lines_23(result)
    assert lines[0] == "fleet filter and scroll: not measured: filter /: RuntimeError: no chromium"
    assert lines[1] == "rollout page (a/b/c): first byte 12.0 ms; first render not measured: boom"
    assert "10000 releases: page first byte 20.0 ms, timeline API 30.0 ms" in lines[2]
    assert lines[2].endswith("its rollout page not measured: GET /x: timeout")


def test_the_watchers_cost_per_change_counts_their_recorder_and_sits_beside_both_floors() -> None:
    from dashboard.bench.report import _watcher_cost

    result = {
        "cpu_cores_during_churn": {"sim-a": 0.5, "watcher-sim-a": 0.1, "watcher-sim-a-children": 0.05},
        "ingest": {"changes_per_second": 500.0},
    }
    receive = {"ms_per_change": 0.1, "connections": 100, "events": 5000}
    cost = _watcher_cost(result, {"orjson_decode_ms_per_change": 0.01, "objects": 10, "receive": receive})
    assert cost["watcher_cpu_ms_per_change"] == 0.3  # 0.15 cores over 500 changes a second
    assert cost["watcher_vs_decode"] == 30.0
    assert cost["watcher_vs_receive"] == 3.0
    assert cost["decode_sample"] == {"objects": 10}
    assert cost["receive_stream"] == {"connections": 100, "events": 5000}


def test_the_machines_cpu_says_how_full_it_was_and_what_the_measured_processes_leave_out() -> None:
    from dashboard.bench.report import _machine_cpu, machine_cpu_text

    def sample(t: float, busy: float, idle: float, watcher: float) -> dict[str, object]:
        machine = {"busy_s": busy, "idle_s": idle}
        return {"t": t, "machine": machine, "processes": {"watcher": {"cpu_s": watcher}}}

    samples = [sample(0.0, 100.0, 50.0, 10.0), sample(10.0, 119.0, 51.0, 15.0), sample(20, 138.0, 52.0, 20.0)]
    machine = _machine_cpu(samples, 0.0, 20.0, {"watcher": 0.5})
    assert machine["busy_cores"] == 1.9  # 38 busy seconds in 20
    assert machine["busy_fraction"] == 0.95
    assert machine["unaccounted_cores"] == 1.4  # the watcher used 0.5 of them
    assert "1.9 of" in machine_cpu_text(machine) and "(95 %)" in machine_cpu_text(machine)


def test_a_run_without_machine_samples_says_it_was_not_measured() -> None:
    from dashboard.bench.report import _machine_cpu, machine_cpu_text

    assert _machine_cpu([{"t": 0.0, "processes": {}}], 0.0, 1.0, {}) == {}
    assert machine_cpu_text({}).endswith("not measured (no /proc/stat)")


def test_the_machine_says_how_fast_it_is_so_runs_on_different_machines_compare() -> None:
    from dashboard.bench.report import machine

    assert machine()["python_work_ms"] > 0


def test_the_watchers_cost_per_change_and_memory_at_10000_rollouts_are_issue_23s_targets() -> None:
    from types import SimpleNamespace

    from dashboard.bench.report import _targets_23

    def rows(per_change: float, peak_mb: float, rollouts: int = 10_000, clusters: int = 1) -> dict[str, Any]:
        config = SimpleNamespace(rollouts=rollouts, clients=200, seconds=60)
        result = {
            "scale_out": {"clusters": clusters},
            "memory": {"peak_rss_mb": {"watcher-sim-a": peak_mb, "web-1": 300.0}, "redis_used_peak_mb": 500},
            "watcher_cost": {"watcher_cpu_ms_per_change": per_change},
        }
        return {row[0]: row[1:] for row in _targets_23(config, result)}

    met = rows(0.29, 244.8)
    assert met["watcher CPU per change during the churn (ms)"] == ("<= 0.3", 0.29, True, True)
    assert met["watcher peak RSS, 10000 rollouts in its cluster (MB)"] == ("<= 250", 244.8, True, True)
    missed = rows(0.65, 253.7)
    assert missed["watcher CPU per change during the churn (ms)"][2] is False
    assert missed["watcher peak RSS, 10000 rollouts in its cluster (MB)"][2] is False
    # 50,000 rollouts in 5 clusters: each watcher has 10,000, so its memory is held to the same target.
    assert rows(0.2, 240.0, 50_000, 5)["watcher peak RSS, 10000 rollouts in its cluster (MB)"][3] is True
    assert rows(0.2, 100.0, 2_000)["watcher peak RSS, 2000 rollouts in its cluster (MB)"][3] is False


def test_a_receiving_floor_that_could_not_be_measured_says_why_beside_the_watchers_cost() -> None:
    from dashboard.bench.report import _received_text, _watcher_cost

    result = {"cpu_cores_during_churn": {"watcher-sim-a": 0.2}, "ingest": {"changes_per_second": 500.0}}
    cost = _watcher_cost(result, {"receive": {"error": "TimeoutError: "}})
    assert cost["receive_ms_per_change"] is None and cost["watcher_vs_receive"] is None
    assert _received_text(cost) == "not measured: TimeoutError: "
    measured = _watcher_cost(result, {"receive": {"ms_per_change": 0.1}})
    assert _received_text(measured) == "0.1 ms, ratio 4.0"


def test_the_cores_a_process_used_keep_a_thousandth_so_the_cost_per_change_is_not_rounded_away() -> None:
    from dashboard.bench.report import _cpu, _watcher_cost

    samples = [
        {"t": 0.0, "processes": {"watcher-sim-a": {"cpu_s": 10.0}}},
        {"t": 60.0, "processes": {"watcher-sim-a": {"cpu_s": 21.16}}},  # 0.186 cores
    ]
    cores = _cpu(samples, 0.0, 60.0)
    assert cores == {"watcher-sim-a": 0.186}
    cost = _watcher_cost({"cpu_cores_during_churn": cores, "ingest": {"changes_per_second": 522.1}}, {})
    assert cost["watcher_cpu_ms_per_change"] == 0.356  # rounded to 0.19 cores first, it read 0.364


def test_a_watchers_peak_counts_its_stop_and_restart_which_the_churns_samples_miss() -> None:
    from dashboard.bench.report import watcher_peak_mb

    result: dict[str, Any] = {
        "memory": {"peak_rss_mb": {"watcher-sim-a": 242.0, "web-1": 300.0}},
        "cold_start": {
            "watcher_peak_rss_mb": {"watcher-sim-a": {"fleet_published": 230.0, "stopped": 249.5}},
        },
    }
    assert watcher_peak_mb(result) == 249.5
    result["cold_start"]["watcher_peak_rss_mb"]["watcher-sim-a"]["stopped"] = 238.0
    assert watcher_peak_mb(result) == 242.0, "the churn's samples, when they are the highest"


def test_the_summary_names_each_moment_a_watchers_peak_was_read_at() -> None:
    from dashboard.bench.report import _moments

    text = _moments(
        {"fleet_published": 230.1, "churn_began": 230.2, "before_its_stop": 242.0, "stopped": 247.0,
         "restarted": 229.5}
    )
    assert text == (
        "the fleet was on the bus 230.1, the churn began 230.2, it was told to stop 242.0, "
        "it stopped (its handoff saved) 247.0, its restart was current 229.5"
    )


def test_redis_memory_counts_only_what_the_run_added_to_a_server_that_held_data_before() -> None:
    from types import SimpleNamespace

    from dashboard.bench.report import _memory, _targets_23, redis_memory_text

    samples = [
        {"t": 0.0, "processes": {}, "redis_used_mb": 560.0},
        {"t": 1.0, "processes": {}, "redis_used_mb": 1125.3},  # another database's 540 MB besides
    ]
    memory = _memory(samples, redis_before_mb=541.4)
    assert memory["redis_used_peak_mb"] == 1125.3
    assert memory["redis_run_peak_mb"] == 583.9
    memory["redis_run_keys_mb"] = {"snap": 400.0, "stream": 175.2}
    assert redis_memory_text(memory) == (
        "Redis used 1125.3 MB at its peak (the whole server, which held 541.4 MB before the run: the run's "
        "own peak 583.9 MB; its keys 575.2 MB at the end)"
    )
    config = SimpleNamespace(rollouts=50_000, clients=200, seconds=60)
    cost = {"watcher_cpu_ms_per_change": 0.3}
    result = {"scale_out": {"clusters": 5}, "memory": memory, "watcher_cost": cost}
    targets = {row[0]: row[1:] for row in _targets_23(config, result)}
    assert targets["Redis used memory peak, the run's own (MB)"] == ("< 1024", 583.9, True, True)


def test_redis_memory_without_a_reading_before_the_run_is_the_whole_servers() -> None:
    from dashboard.bench.report import _memory, redis_memory_text

    memory = _memory([{"t": 0.0, "processes": {}, "redis_used_mb": 700.0}])
    assert memory["redis_run_peak_mb"] is None
    assert redis_memory_text(memory).startswith("Redis used 700.0 MB at its peak (the whole server;")
