from __future__ import annotations

from types import SimpleNamespace

from django.test import override_settings

from dashboard.access.visibility import can_view, may_read, visible

ANON = SimpleNamespace(is_authenticated=False, is_active=True)
USER = SimpleNamespace(is_authenticated=True, is_active=True)
INACTIVE = SimpleNamespace(is_authenticated=True, is_active=False)


def test_only_active_signed_in_users_read_by_default() -> None:
    assert may_read(USER)
    assert not may_read(ANON)
    assert not may_read(INACTIVE)
    assert not may_read(None)
    assert visible(ANON, [{"key": "a/b/c"}]) == []


@override_settings(ANONYMOUS_READ_ONLY=True)
def test_anonymous_read_only_lets_anyone_read() -> None:
    assert can_view(ANON, "a/b/c")
    assert visible(None, [{"key": "a/b/c"}]) == [{"key": "a/b/c"}]
