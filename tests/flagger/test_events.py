"""Flagger's event messages parse into their kinds and fields (``dashboard.domain.flagger.events``)."""

from __future__ import annotations

from dashboard.domain.flagger import parse_event_message


def test_messages_parse_into_flagger_s_formats() -> None:
    assert (
        parse_event_message("Halt podinfo.test advancement success rate 97.31% < 99%")[0] == "metric-failed"
    )
    kind, fields, combined = parse_event_message(
        "(combined from similar events): Halt podinfo.test advancement waiting for promotion approval gate"
    )
    assert (kind, fields["hook"], combined) == ("waiting-promotion", "gate", True)
