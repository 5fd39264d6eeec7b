"""GITOPS_REPOSITORIES: parsing, validation with clear errors, URL forms, and the env_json reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from dashboard.gitops.config import parse_repositories, repo_key
from rollouts_ui.env import env_json

SECRET = "0123456789abcdef0123"


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/Acme/Deploy",
        "https://github.com/acme/deploy.git",
        "https://user@github.com:443/acme/deploy/",
        "git@github.com:acme/deploy.git",
        "ssh://git@github.com/acme/deploy.git",
    ],
)
def test_every_usual_form_of_a_repository_url_is_the_same_repository(url: str) -> None:
    assert repo_key(url) == "github.com/acme/deploy"


@pytest.mark.parametrize("url", ["", "not a url", "ftp://example.com/x", "https://github.com/", None, 42])
def test_things_that_are_not_repository_urls_have_no_key(url: object) -> None:
    assert repo_key(url) is None


def test_it_reads_providers_secrets_and_ci_tokens() -> None:
    repos = parse_repositories(
        {
            "https://github.com/acme/deploy": {"provider": "github", "secret": SECRET, "ci_token": SECRET},
            "git@gitlab.example.com:platform/deploy.git": {"provider": "gitlab", "secret": SECRET},
        }
    )
    assert set(repos) == {"github.com/acme/deploy", "gitlab.example.com/platform/deploy"}
    assert repos["github.com/acme/deploy"].ci_token == SECRET
    assert SECRET not in repr(repos["github.com/acme/deploy"])


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ([], "JSON object"),
        ({"nope": {"provider": "github", "secret": SECRET}}, "not a repository URL"),
        ({"https://github.com/a/b": "secret"}, "expected an object"),
        ({"https://github.com/a/b": {"provider": "bitbucket", "secret": SECRET}}, ".provider"),
        ({"https://github.com/a/b": {"provider": "github", "secret": "short"}}, ".secret"),
        ({"https://github.com/a/b": {"provider": "github", "secret": SECRET, "token": "x"}}, "unknown key"),
        ({"https://github.com/a/b": {"provider": "github", "secret": SECRET, "ci_token": "x"}}, ".ci_token"),
        (
            {
                "https://github.com/a/b": {"provider": "github", "secret": SECRET},
                "git@github.com:a/b.git": {"provider": "github", "secret": SECRET},
            },
            "the same repository",
        ),
    ],
)
def test_a_bad_entry_is_named_in_the_error(raw: object, fragment: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="GITOPS_REPOSITORIES") as error:
        parse_repositories(raw)
    assert fragment in str(error.value)


def test_env_json_reads_inline_json_or_a_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GITOPS_TEST_JSON", '{"a": 1}')
    assert env_json("GITOPS_TEST_JSON", {}) == {"a": 1}
    path = tmp_path / "repos.json"
    path.write_text('{"b": 2}')
    monkeypatch.setenv("GITOPS_TEST_JSON", str(path))
    assert env_json("GITOPS_TEST_JSON", {}) == {"b": 2}
    monkeypatch.delenv("GITOPS_TEST_JSON")
    assert env_json("GITOPS_TEST_JSON", {"default": True}) == {"default": True}


def test_env_json_errors_name_the_variable_and_the_problem(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GITOPS_TEST_JSON", '{"a": }')
    with pytest.raises(
        ImproperlyConfigured, match=r"GITOPS_TEST_JSON: its value is not valid JSON .*column 7"
    ):
        env_json("GITOPS_TEST_JSON", {})
    monkeypatch.setenv("GITOPS_TEST_JSON", str(tmp_path / "missing.json"))
    with pytest.raises(ImproperlyConfigured, match="GITOPS_TEST_JSON: cannot read the file"):
        env_json("GITOPS_TEST_JSON", {})
