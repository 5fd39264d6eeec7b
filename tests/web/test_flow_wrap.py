"""The diagram's line wrapping keeps a long word in one piece where it can (issue 16 §10: "GIT
OPS_REPOSITORIES", "DOES-NOT-EXIS" were split across the end of the line before)."""

from __future__ import annotations

from dashboard.web.flow import text_px, wrap


def test_a_long_word_starts_its_own_line_instead_of_filling_the_line_before() -> None:
    lines = wrap("for webhooks (GITOPS_REPOSITORIES)", 150, 3)  # the word is longer than a line here
    assert lines[0] == "for webhooks"
    assert "".join(lines[1:]) == "(GITOPS_REPOSITORIES)"


def test_a_word_longer_than_a_whole_line_is_still_split_at_the_line_end() -> None:
    lines = wrap("x" * 60, 200, 5)
    assert "".join(lines) == "x" * 60
    assert all(len(line) <= len(lines[0]) for line in lines)


def test_capitals_count_wider_so_a_wrapped_line_fits_its_box() -> None:
    lines = wrap("the repository is not configured for webhooks (GITOPS_REPOSITORIES)", 160, 6)
    assert all(text_px(line) <= 160 - 24 for line in lines), lines
    assert "".join(lines).replace(" ", "").endswith("(GITOPS_REPOSITORIES)")


def test_a_long_image_name_breaks_after_a_separator() -> None:
    lines = wrap("argoproj/rollouts-demo:does-not-exist", 200, 3, 7.0)
    assert lines[0].endswith((":", "-", "/")), lines
    assert "".join(lines) == "argoproj/rollouts-demo:does-not-exist"


def test_a_number_keeps_its_unit_on_its_line() -> None:
    lines = wrap("rev 2 · scaled down in 1 s", 160, 3)
    assert not any(line.strip() == "s" for line in lines), lines
    assert lines[-1].endswith("1\u00a0s")
