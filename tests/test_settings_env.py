from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from rollouts_ui.env import env_bool, env_int, env_list, env_url


def test_it_reads_booleans_in_the_usual_spellings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAG", "Yes")
    assert env_bool("FLAG", False) is True
    monkeypatch.setenv("FLAG", "0")
    assert env_bool("FLAG", True) is False


def test_it_refuses_a_boolean_it_cannot_read_and_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBUG_X", "maybe")
    with pytest.raises(ImproperlyConfigured, match="DEBUG_X='maybe' is not a boolean"):
        env_bool("DEBUG_X", False)


def test_it_refuses_a_number_out_of_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAYS", "0")
    with pytest.raises(ImproperlyConfigured, match="below the minimum of 1"):
        env_int("DAYS", 90, minimum=1)
    monkeypatch.setenv("DAYS", "ten")
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        env_int("DAYS", 90)


def test_it_splits_lists_and_drops_blanks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTS", " a.example , ,b.example")
    assert env_list("HOSTS", []) == ["a.example", "b.example"]


def test_it_refuses_a_url_with_the_wrong_scheme_without_leaking_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DATABASE_URL", "mysql://user:secret@db/x")
    with pytest.raises(ImproperlyConfigured) as error:
        env_url("DATABASE_URL", schemes=("postgres",))
    assert "secret" not in str(error.value)
    assert "postgres://" in str(error.value)
