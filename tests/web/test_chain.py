"""The GitOps chain on the diagram's merge / git / sync nodes and on the release page's strip."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dashboard.web.chain import release_chain, safe_url, values_text
from dashboard.web.flow import NOT_OBSERVED, build_flow
from tests.web import samples

NOW = datetime(2026, 11, 29, 10, 14, tzinfo=UTC)
SHA = "9a2c7e5f00112233445566778899aabbccddeeff"


def _whole_lines(node: dict[str, Any]) -> list[str]:
    """A node's lines as written, before the diagram wrapped them to its width."""
    out: list[str] = []
    for line in node["lines"]:
        whole = line.get("full") or line["text"]
        if not out or out[-1] != whole:
            out.append(whole)
    return out


def _sync(renders: int = 2) -> dict[str, Any]:
    return {
        "observed": True,
        "application": "argocd/checkout-prod",
        "app": "checkout-prod",
        "sync": "Synced",
        "health": "Progressing",
        "revision": SHA,
        "valuesFrom": "inline+files",
        "sources": [{"values": {"valueFiles": ["values-prod.yaml"]}}],
        "renders": renders,
        "splitRender": [
            {"startedAt": "2026-11-29T09:02:08Z", "changed": "inputs"},
            {"startedAt": "2026-11-29T09:02:40Z", "changed": "revision"},
        ],
    }


def _chain(**overrides: Any) -> dict[str, Any]:
    chain = {
        "merge": {
            "observed": True, "kind": "merge", "number": 482, "title": "bump checkout config",
            "url": "https://git.example/pr/482", "author": "a.kim", "at": "2026-11-29T09:01:00Z",
        },
        "commit": {
            "observed": True, "sha": SHA, "short": SHA[:7], "title": "bump timeoutMs",
            "url": "https://git.example/c/9a2c7e5",
        },
        "pipeline": {"observed": True, "state": "failure", "url": "https://ci.example/7741"},
        "sync": _sync(),
    }  # fmt: skip
    chain.update(overrides)
    return chain


def _nodes(flow: dict[str, Any]) -> dict[str, Any]:
    return {n["id"]: n for n in flow["nodes"]}


def test_the_merge_node_shows_the_pull_request_with_its_link_author_and_time() -> None:
    merge = _nodes(build_flow(samples.rerender_race(), NOW, chain=_chain()))["merge"]
    assert merge["title"] == "PR #482"
    assert merge["url"] == "https://git.example/pr/482"
    assert _whole_lines(merge) == ["“bump checkout config”", "a.kim · 09:01:00"]


def test_the_git_node_shows_short_sha_message_values_file_and_pipeline_state() -> None:
    git = _nodes(build_flow(samples.rerender_race(), NOW, chain=_chain()))["git"]
    assert git["title"] == "9a2c7e5" and git["url"] == "https://git.example/c/9a2c7e5"
    texts = _whole_lines(git)
    assert texts == ["bump timeoutMs", "values-prod.yaml + inline values", "CI failure"]
    assert git["lines"][-1]["url"] == "https://ci.example/7741"
    assert git["alert"] == "warning"


def test_the_sync_node_says_what_argo_cd_says_and_counts_two_renders_of_the_commit() -> None:
    sync = _nodes(build_flow(samples.rerender_race(), NOW, chain=_chain()))["sync"]
    assert sync["title"] == "checkout-prod"
    assert sync["lines"][0]["text"] == "Synced · Progressing"
    assert sync["lines"][1]["text"] == "revision 9a2c7e5"
    assert sync["marker"]["text"] == "2 renders of this commit"
    assert sync["marker"]["sub"] == "at 09:02:08 · 09:02:40"
    assert sync["status"] == "progressing"


def test_one_render_has_no_marker() -> None:
    sync = _nodes(build_flow(samples.rerender_race(), NOW, chain=_chain(sync=_sync(renders=1))))["sync"]
    assert sync["marker"] is None


def test_sources_that_are_not_configured_say_not_observed_and_why() -> None:
    reason = "the repository is not configured for webhooks (GITOPS_REPOSITORIES)"
    chain = _chain(
        merge={"observed": False, "reason": reason},
        pipeline={"observed": False, "reason": reason},
    )
    nodes = _nodes(build_flow(samples.rerender_race(), NOW, chain=chain))
    assert nodes["merge"]["title"] == NOT_OBSERVED and nodes["merge"]["observed"] is False
    assert " ".join(line["text"] for line in nodes["merge"]["lines"]).startswith("the repository is")
    assert nodes["git"]["lines"][-1]["text"] == "CI not observed"


def test_without_a_chain_the_sync_node_comes_from_the_views_application() -> None:
    view = samples.rerender_race()
    view["gitops"] = {k: v for k, v in _sync().items() if k != "observed"}
    nodes = _nodes(build_flow(view, NOW))
    assert nodes["sync"]["title"] == "checkout-prod"
    assert nodes["sync"]["marker"]["text"] == "2 renders of this commit"
    assert nodes["git"]["title"] == SHA[:7]
    assert nodes["merge"]["title"] == NOT_OBSERVED


def test_links_that_are_not_http_are_dropped() -> None:
    assert safe_url("javascript:alert(1)") == ""
    assert safe_url("https://x.example/") == "https://x.example/"
    chain = _chain()
    chain["merge"]["url"] = "javascript:alert(1)"
    assert _nodes(build_flow(samples.rerender_race(), NOW, chain=chain))["merge"]["url"] == ""


def test_values_text_names_files_then_inline() -> None:
    assert values_text({"valuesFrom": "inline"}) == "inline values"
    assert (
        values_text({"valuesFrom": "files", "sources": [{"values": {"valueFiles": ["a.yaml"]}}]}) == "a.yaml"
    )


def test_the_release_strip_runs_merge_commit_sync_revision() -> None:
    chain = _chain()
    chain["sync"]["render"] = {"startedAt": "2026-11-29T09:02:40Z"}
    chain["release"] = {"observed": True, "podHash": "86d4b7c5f9", "revision": "13"}
    strip = release_chain(chain)
    assert [s["stage"] for s in strip] == ["merge", "commit", "sync", "revision"]
    assert strip[0]["title"] == "PR #482" and strip[1]["title"] == "9a2c7e5"
    assert "CI failure" in strip[1]["detail"]
    assert "rendered 09:02:40" in strip[2]["detail"]
    assert strip[3]["title"] == "rev 13" and strip[3]["detail"] == "86d4b7c5f9"


def test_the_release_strip_without_a_chain_says_not_observed_everywhere() -> None:
    strip = release_chain(None)
    assert all(not s["observed"] and s["reason"] for s in strip)
