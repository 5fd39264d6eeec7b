from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import Client, override_settings

from tests.web import samples

pytestmark = pytest.mark.django_db


def _publish(bus: Any, *views: dict) -> list[str]:
    return async_to_sync(bus.publish_many)([(v, []) for v in views])


@pytest.fixture
def client_in(reader: Any) -> Client:
    client = Client()
    client.force_login(reader)
    return client


def test_pages_send_anonymous_visitors_to_the_login_page(live_bus: Any) -> None:
    response = Client().get("/rollouts/prod-eu/shop/checkout/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=%2Frollouts%2Fprod-eu%2Fshop%2Fcheckout%2F"


def test_the_api_answers_anonymous_callers_with_401_json(live_bus: Any) -> None:
    response = Client().get("/api/v1/rollouts")
    assert response.status_code == 401
    assert response.json() == {"error": "authentication required"}


@override_settings(ANONYMOUS_READ_ONLY=True)
def test_anonymous_read_only_opens_the_api(live_bus: Any) -> None:
    _publish(live_bus, samples.healthy_canary())
    assert Client().get("/api/v1/rollouts").json()["count"] == 1


def test_the_login_page_signs_in_and_rejects_a_wrong_password(live_bus: Any, reader: Any) -> None:
    client = Client()
    assert client.get("/accounts/login/").status_code == 200
    bad = client.post("/accounts/login/", {"username": "reader", "password": "nope"})
    assert bad.status_code == 401
    assert b"do not match" in bad.content
    good = client.post(
        "/accounts/login/",
        {"username": "reader", "password": "a-long-test-password", "next": "/rollouts/a/b/c/"},
    )
    assert good.status_code == 302 and good["Location"] == "/rollouts/a/b/c/"
    evil = client.post(
        "/accounts/login/",
        {"username": "reader", "password": "a-long-test-password", "next": "https://evil.example/"},
    )
    assert evil["Location"] == "/"


def test_the_fleet_api_lists_summary_rows(live_bus: Any, client_in: Client) -> None:
    _publish(live_bus, samples.rerender_race(), samples.healthy_canary())
    body = client_in.get("/api/v1/rollouts").json()
    assert body["count"] == 2
    keys = {row["key"] for row in body["rollouts"]}
    assert keys == {"prod-eu/shop/checkout", "prod-eu/shop/orders"}


def test_the_rollout_api_returns_the_view_and_404_for_unknown(live_bus: Any, client_in: Client) -> None:
    _publish(live_bus, samples.rerender_race())
    body = client_in.get("/api/v1/rollouts/prod-eu/shop/checkout").json()
    assert body["step"] == "0/5" and body["setWeight"] == 10 and body["streamId"]
    missing = client_in.get("/api/v1/rollouts/prod-eu/shop/nope")
    assert missing.status_code == 404
    assert missing.json() == {"error": "no rollout prod-eu/shop/nope"}


def test_the_timeline_api_lists_events(live_bus: Any, client_in: Client) -> None:
    _publish(live_bus, samples.rerender_race())
    body = client_in.get("/api/v1/rollouts/prod-eu/shop/checkout/timeline").json()
    assert body["key"] == "prod-eu/shop/checkout"
    assert isinstance(body["events"], list)


def test_the_fleet_page_is_a_shell_that_preloads_its_rows(live_bus: Any, client_in: Client) -> None:
    _publish(live_bus, samples.rerender_race(), samples.healthy_canary())
    response = client_in.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="fleet-rows-url" href="/api/v1/fleet/rows"' in html
    assert "checkout" not in html  # no rows in the shell


def test_the_fleet_rows_are_compact_arrays_and_gzipped_when_asked(live_bus: Any, client_in: Client) -> None:
    import gzip

    _publish(live_bus, samples.rerender_race(), samples.healthy_canary())
    body = client_in.get("/api/v1/fleet/rows").json()
    rows = [dict(zip(body["fields"], r, strict=True)) for r in body["rows"]]
    assert sorted(r["name"] for r in rows) == ["checkout", "orders"]
    assert body["streamId"] and body["count"] == 2
    assert "age" not in body["fields"]  # the browser computes ages, so the document stays cacheable
    zipped = client_in.get("/api/v1/fleet/rows", headers={"Accept-Encoding": "gzip, br"})
    assert zipped["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(zipped.content))["count"] == 2


def test_the_fleet_rows_follow_changes_and_removals(live_bus: Any, client_in: Client) -> None:
    _publish(live_bus, samples.healthy_canary())
    first = client_in.get("/api/v1/fleet/rows").json()
    _publish(live_bus, samples.paused_canary())
    async_to_sync(live_bus.remove)("prod-eu/shop/orders")
    second = client_in.get("/api/v1/fleet/rows").json()
    assert second["streamId"] > first["streamId"]
    assert [r[0] for r in second["rows"]] == ["prod-eu/payments/payments-api"]


def test_the_fleet_rows_need_a_login(live_bus: Any) -> None:
    assert Client().get("/api/v1/fleet/rows").status_code == 401


def test_the_rollout_page_embeds_the_presented_page(live_bus: Any, client_in: Client) -> None:
    _publish(live_bus, samples.rerender_race())
    response = client_in.get("/rollouts/prod-eu/shop/checkout/")
    assert response.status_code == 200
    initial = _embedded(response.content.decode(), "initial")
    assert initial["page"]["header"]["step"] == "0/5"
    assert initial["view"]["name"] == "checkout"


def test_an_unknown_rollout_page_is_a_404_that_can_fill_in_later(live_bus: Any, client_in: Client) -> None:
    response = client_in.get("/rollouts/prod-eu/shop/nope/")
    assert response.status_code == 404
    assert b"is being watched right now" in response.content


def test_markup_in_kubernetes_data_is_never_rendered_as_html(live_bus: Any, client_in: Client) -> None:
    view = samples.hostile()
    _publish(live_bus, view)
    for url in (
        "/",
        "/api/v1/fleet/rows",
        "/rollouts/prod-eu/shop/evil-%3Cscript%3Ealert(1)%3C%2Fscript%3E/",
    ):
        html = client_in.get(url).content.decode()
        assert "<script>alert(1)" not in html
        assert "<img src=x" not in html
        assert "<svg onload" not in html


def test_plotly_is_served_from_the_installed_package(live_bus: Any) -> None:
    response = Client().get("/assets/plotly.min.js")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/javascript"
    assert b"plotly" in b"".join(response.streaming_content)[:2000].lower()


def test_static_files_are_served_by_the_app(live_bus: Any) -> None:
    assert Client().get("/static/js/live.js").status_code == 200


def _embedded(html: str, element_id: str) -> Any:
    start = html.index(f'<script id="{element_id}" type="application/json">') + len(
        f'<script id="{element_id}" type="application/json">'
    )
    return json.loads(html[start : html.index("</script>", start)])


def _with_unwedge(view: dict[str, Any]) -> dict[str, Any]:
    button = {"name": "unwedge", "label": "Unwedge", "destructive": True, "applies": True, "reason": "",
              "params": {"replicaSet": "checkout-lost"}, "choices": [], "confirm": "Scale it", "summary": "",
              "warnings": []}  # fmt: skip
    return {**view, "availableActions": {"buttons": [button], "seen": {"podHash": "x", "stepIndex": 0}}}


def test_the_rollout_api_says_per_button_whether_this_user_may_run_it(
    live_bus: Any, client_in: Client
) -> None:
    _publish(live_bus, _with_unwedge(samples.rerender_race()))
    actions = client_in.get("/api/v1/rollouts/prod-eu/shop/checkout").json()["actions"]
    [button] = actions["buttons"]
    assert (button["applies"], button["allowed"]) == (True, False)
    assert "may not unwedge" in button["deniedReason"]
    assert actions["seen"] == {"podHash": "x", "stepIndex": 0}


def test_the_rollout_page_embeds_this_users_permissions(live_bus: Any, client_in: Client) -> None:
    _publish(live_bus, _with_unwedge(samples.rerender_race()))
    initial = _embedded(client_in.get("/rollouts/prod-eu/shop/checkout/").content.decode(), "initial")
    assert initial["permissions"]["unwedge"]["allowed"] is False
    assert initial["page"]["actions"]["buttons"][0]["deniedReason"].endswith("may not unwedge")


def test_a_viewer_is_told_which_role_may_not_act() -> None:
    from dashboard.web.data import action_permissions_sync
    from tests.actions.conftest import make_user

    viewer = make_user("vera", "viewer")
    operator = make_user("otto", "operator")
    assert action_permissions_sync(viewer, "prod-eu/shop/checkout")["unwedge"] == {
        "allowed": False,
        "deniedReason": "your role viewer may not unwedge",
    }
    assert action_permissions_sync(operator, "prod-eu/shop/checkout")["promote"]["allowed"] is True


def test_the_actions_api_lists_the_bar_with_this_users_rights(live_bus: Any, client_in: Client) -> None:
    _publish(live_bus, _with_unwedge(samples.rerender_race()))
    body = client_in.get("/api/v1/rollouts/prod-eu/shop/checkout/actions").json()
    assert body["actions"] == []
    assert body["buttons"][0]["name"] == "unwedge" and body["buttons"][0]["allowed"] is False
    assert body["seen"] == {"podHash": "x", "stepIndex": 0}
