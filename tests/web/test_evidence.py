from __future__ import annotations

import json
from typing import Any

from dashboard.web.evidence import diff_rows, humanise, present_evidence, sync_items, value_text

CHECKSUM_BEFORE = "40f96e1e5259b61ebe092480c44d953803936b509c7df01e5da24f5647bdbe2b"
CHECKSUM_AFTER = "1db9256491723942b298d1355df5c9f98954fd37048ee80a6439fab0f71888ce"


def _race() -> dict[str, Any]:
    """Evidence as the re-render race finding records it (dashboard/domain/findings/releases.py)."""
    sync = {
        "application": "argocd/checkout",
        "id": 2,
        "revisions": ["9a2c7e5f1d0c4b3a29180716f5e4d3c2b1a09f8e"],
        "deployedAt": "2026-11-29T09:02:40Z",
        "automated": True,
        "revisionChanged": False,
        "inlineValuesChanged": False,
    }
    return {
        "previousHash": "5f6b8c9d74",
        "currentHash": "86d4b7c5f9",
        "previousRevision": 12,
        "currentRevision": 13,
        "previousRenderAt": "2026-11-29T09:02:08Z",
        "rerenderAt": "2026-11-29T09:02:40Z",
        "stepBefore": 1,
        "stepAfter": 0,
        "templateDiff": [
            {
                "path": "metadata.annotations.checksum/config",
                "before": CHECKSUM_BEFORE,
                "after": CHECKSUM_AFTER,
            }
        ],
        "configOnly": True,
        "syncs": [
            sync | {"id": 1, "deployedAt": "2026-11-29T09:02:08Z", "inlineValuesChanged": True},
            sync,
            sync,  # both ReplicaSets can be traced to the same history entry
        ],
        "orphanedReplicaSets": ["checkout-5f6b8c9d74"],
        "inferred": False,
    }


def test_keys_are_humanised_for_people() -> None:
    assert humanise("applicationHealthMessage") == "Application health message"
    assert humanise("previousRenderAt") == "Previous render at"
    assert humanise("podTemplateHash") == "Pod template hash"
    assert humanise("syncID") == "Sync ID"
    assert humanise("stable_hash") == "Stable hash"
    assert humanise("url") == "URL"


def test_values_read_as_text_not_json() -> None:
    assert value_text(True) == ("yes", "yes")
    assert value_text(None)[0] == "—"
    assert value_text(["CanaryPauseStep", "BlueGreenPause"])[0] == "CanaryPauseStep, BlueGreenPause"
    assert value_text([]) == ("none", "none")
    assert value_text("2026-11-29T18:04:05Z") == ("18:04:05", "2026-11-29T18:04:05Z")
    short, full = value_text([{"a": 1}, {"a": 2}])
    assert short == "2 entries" and json.loads(full) == [{"a": 1}, {"a": 2}]
    assert value_text({"phase": "Failed", "count": 3})[0] == "Phase Failed · Count 3"


def test_long_hashes_are_shortened_with_the_whole_value_kept() -> None:
    short, full = value_text(CHECKSUM_BEFORE)
    assert short == "40f96e1e52…" and full == CHECKSUM_BEFORE


def test_the_template_diff_is_a_table_of_field_before_and_after() -> None:
    rows = diff_rows(_race()["templateDiff"])
    assert rows == [
        {
            "path": "metadata.annotations.checksum/config",
            "field": "annotation checksum/config",
            "before": "40f96e1e52…",
            "beforeFull": CHECKSUM_BEFORE,
            "after": "1db9256491…",
            "afterFull": CHECKSUM_AFTER,
        }
    ]
    added = diff_rows([{"path": "spec.containers[0].env[1].value", "before": None, "after": "on"}])
    assert (added[0]["field"], added[0]["before"], added[0]["after"]) == (
        "containers[0].env[1].value",
        "(absent)",
        "on",
    )


def test_syncs_read_as_renders_and_repeated_entries_are_listed_once() -> None:
    items = sync_items(_race()["syncs"])
    assert [i["text"] for i in items] == [
        "render 1 · 9a2c7e5 · 09:02:08 · inline values changed",
        "render 2 · 9a2c7e5 · 09:02:40 · same commit and values",
    ]
    assert "history id 2" in items[1]["title"] and "automated" in items[1]["title"]


def test_the_rerender_race_leads_with_its_three_key_facts() -> None:
    tiles = present_evidence("rerender-race", _race())["tiles"]
    assert [(t["label"], t["value"]) for t in tiles] == [
        ("Renders of 9a2c7e5", "2 × · 32 s apart"),
        ("Template diff", "checksum/config only"),
        ("Step index", "1 → 0 · reset"),
        ("Orphaned ReplicaSet", "checkout-5f6b8c9d74"),
    ]
    assert tiles[0]["sub"] == "09:02:08 → 09:02:40"
    assert tiles[2]["sub"] == "hash 5f6b8c9d74 → 86d4b7c5f9"


def test_an_inferred_race_says_the_reset_was_not_seen() -> None:
    evidence = _race() | {"stepBefore": None, "inferred": True, "inferredFrom": "created 4 s apart"}
    step = next(t for t in present_evidence("rerender-race", evidence)["tiles"] if t["label"] == "Step index")
    assert step["value"] == "now 0" and "inferred" in step["sub"] and step["title"] == "created 4 s apart"


def test_other_findings_show_their_short_facts_as_tiles_and_everything_in_the_details() -> None:
    evidence = {
        "rolloutPhase": "Paused",
        "pauseReasons": ["CanaryPauseStep"],
        "applicationHealthMessage": "Caused by argoproj.io/Rollout:web/frontend and a very long tail of text",
        "writers": [{"manager": "argocd", "time": "2026-11-29T09:00:00Z"}],
        "application": "argocd/frontend",
    }
    shown = present_evidence("paused-suspended", evidence)
    assert [(t["label"], t["value"]) for t in shown["tiles"]] == [
        ("Rollout phase", "Paused"),
        ("Pause reasons", "CanaryPauseStep"),
        ("Application", "argocd/frontend"),
    ]
    assert [f["label"] for f in shown["facts"]] == [
        "Rollout phase",
        "Pause reasons",
        "Application health message",
        "Writers",
        "Application",
    ]
    assert json.loads(shown["raw"]) == evidence


def test_evidence_is_carried_as_text_even_when_it_looks_like_markup() -> None:
    hostile = {
        "message": "<img src=x onerror=alert(1)>",
        "templateDiff": [{"path": "<b>", "before": 1, "after": 2}],
    }
    shown = present_evidence("anything", hostile)
    assert shown["tiles"][0]["value"] == "<img src=x onerror=alert(1)>"  # escaped by the page, never parsed
    assert shown["diff"][0]["field"] == "<b>"


def test_missing_or_malformed_evidence_gives_an_empty_presentation() -> None:
    assert present_evidence("rerender-race", None) == {
        "tiles": [],
        "diff": [],
        "syncs": [],
        "facts": [],
        "raw": "",
    }
    assert present_evidence("x", {"templateDiff": "oops", "syncs": [1, 2]})["diff"] == []


def test_kubernetes_kinds_keep_their_spelling() -> None:
    assert humanise("previousReplicaSet") == "Previous ReplicaSet"
    assert humanise("replicaSet") == "ReplicaSet"
