"""The release page's document (issue 16 §11): one commit, Git and Argo CD as the chain shows them, the
re-render race named."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dashboard.web.history import present_release

NOW = datetime(2026, 11, 29, 10, 30, tzinfo=UTC)
KEY = "prod/web/frontend"
CHAIN: dict[str, Any] = {
    "merge": {"observed": False, "reason": "no webhook configured"},
    "commit": {"observed": True, "sha": "ce7f8fbeebef7a58", "short": "ce7f8fb", "title": "release 2.4.0"},
    "pipeline": {"observed": False, "reason": "no pipeline reported"},
    "sync": {"observed": True, "application": "argocd/frontend", "app": "frontend", "sync": "Synced",
             "health": "Healthy", "revision": "ce7f8fbeebef7a58", "renders": 2},
}  # fmt: skip


def _detail() -> dict[str, Any]:
    events = [
        {"kind": "release.started", "at": "2026-11-29T10:00:00Z", "podHash": "bbb", "title": "Release bbb",
         "data": {"previousPodHash": "aaa"}},
        {"kind": "release.rerendered", "at": "2026-11-29T10:01:00Z", "podHash": "bbb",
         "title": "Re-rendered", "data": {"previousPodHash": "aaa"}},
    ]  # fmt: skip
    release = {"podHash": "bbb", "revision": 2, "outcome": "superseded", "gitRevision": "122b598615dc",
               "startedAt": "2026-11-29T10:00:00Z", "stepCount": 3}  # fmt: skip
    return {"release": release, "events": events, "stable": "aaa"}


def test_a_superseded_releases_header_names_its_chains_commit() -> None:
    document = present_release(KEY, _detail(), None, NOW, CHAIN)
    assert document["release"]["gitRevision"] == "ce7f8fbeebef"


def test_the_replay_shows_git_and_argo_cd_where_the_chain_shows_them() -> None:
    document = present_release(KEY, _detail(), None, NOW, CHAIN)
    for flow in document["flows"]:
        nodes = {n["id"]: n for n in flow["nodes"]}
        assert nodes["git"]["title"] == "ce7f8fb"
        assert nodes["sync"]["title"] == "frontend"


def test_the_rerender_race_is_named_on_the_release_page() -> None:
    document = present_release(KEY, _detail(), None, NOW, CHAIN)
    assert [i["code"] for i in document["incidents"]] == ["rerender-race"]


def test_the_chart_legend_lists_every_marker_drawn() -> None:
    from dashboard.web.replay import chart

    events = [
        {"kind": "release.started", "at": "2026-11-29T10:00:00Z", "podHash": "bbb"},
        {"kind": "release.aborted", "at": "2026-11-29T10:05:00Z", "podHash": "bbb"},
    ]
    legend = chart([], events)["legend"]
    assert {"group": "abort", "tone": "critical"} in legend
    assert len(legend) == 2
