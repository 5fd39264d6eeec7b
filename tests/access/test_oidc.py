from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from dashboard.access import oidc

pytestmark = pytest.mark.django_db
CLAIMS = {
    "iss": "https://idp.example",
    "aud": "rollouts-ui",
    "exp": 2_000_000_000,
    "nonce": "n1",
    "sub": "abc",
    "preferred_username": "alice",
    "groups": ["payments-team", "oncall"],
}


@pytest.fixture(autouse=True)
def configured(settings: Any) -> None:
    settings.OIDC_ISSUER = "https://idp.example"
    settings.OIDC_CLIENT_ID = "rollouts-ui"


def test_it_accepts_matching_claims() -> None:
    assert oidc.check_claims(CLAIMS, "n1", now=1_900_000_000)["sub"] == "abc"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"iss": "https://evil"}, "issued by"),
        ({"aud": "other"}, "not meant for this client"),
        ({"exp": 1}, "expired"),
        ({"nonce": "n2"}, "nonce"),
    ],
)
def test_it_rejects_claims_that_do_not_match(change: dict[str, Any], message: str) -> None:
    with pytest.raises(oidc.OidcError, match=message):
        oidc.check_claims({**CLAIMS, **change}, "n1", now=1_900_000_000)


def test_first_login_creates_a_user_and_stores_the_groups() -> None:
    user = oidc.user_for(CLAIMS)
    assert user.username == "alice" and not user.has_usable_password()
    assert user.sso.groups == ["oncall", "payments-team"]
    assert oidc.user_for({**CLAIMS, "groups": ["oncall"]}).pk == user.pk
    user.refresh_from_db()
    assert user.sso.groups == ["oncall"]


def test_an_existing_local_account_is_not_taken_over() -> None:
    local = User.objects.create_user("alice", password="a-long-test-password")
    assert oidc.user_for(CLAIMS).pk != local.pk


def test_the_login_redirect_uses_pkce(monkeypatch: Any, client: Any) -> None:
    monkeypatch.setattr(
        oidc,
        "provider",
        lambda: oidc.Provider("https://idp.example", "https://idp.example/auth", "https://idp.example/token"),
    )
    response = client.get("/accounts/oidc/login/")
    assert response.status_code == 302
    assert "code_challenge_method=S256" in response["Location"] and "code_challenge=" in response["Location"]
    assert client.get("/accounts/oidc/callback/?state=wrong&code=x").status_code == 400
