"""One status → icon/tone map for every page (issue 16 §9)."""

from __future__ import annotations

from dashboard.domain.status_icons import TONES, page_icon, page_tone, with_tones


def test_degraded_and_a_failed_flagger_canary_are_critical_never_the_neutral_accent() -> None:
    assert (page_icon("rollout", "Degraded"), page_tone("rollout", "Degraded")) == ("degraded", "critical")
    assert page_tone("flagger", "Failed") == "critical"
    assert page_tone("argocd", "Degraded") == "critical"


def test_severities_have_their_own_icons() -> None:
    assert [page_icon("severity", s) for s in ("critical", "warning", "info")] == [
        "critical",
        "warning",
        "info",
    ]


def test_every_tone_is_a_known_tone_and_unknown_words_are_unknown() -> None:
    assert page_tone("rollout", "Whatever") == "unknown"
    assert {
        page_tone(k, s)
        for k in ("rollout", "flagger", "analysis", "role")
        for s in ("Degraded", "Failed", "orphaned")
    } <= set(TONES)


def test_with_tones_adds_a_tone_beside_every_icon() -> None:
    document = {"header": {"icon": "degraded"}, "items": [{"icon": "paused"}, {"icon": "x", "tone": "info"}]}
    assert with_tones(document) == {
        "header": {"icon": "degraded", "tone": "critical"},
        "items": [{"icon": "paused", "tone": "paused"}, {"icon": "x", "tone": "info"}],
    }
