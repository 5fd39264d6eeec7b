"""Grouping rollouts into applications and environments (dashboard.domain.environments)."""

from __future__ import annotations

from typing import Any

from dashboard.domain.environments import environment_of, environments, find_commit


def row(namespace: str, cluster: str = "c1", name: str = "web", **extra: Any) -> dict[str, Any]:
    return {
        "key": f"{cluster}/{namespace}/{name}",
        "cluster": cluster,
        "namespace": namespace,
        "name": name,
        "labels": extra.pop("labels", {"app.kubernetes.io/name": name}),
        "images": extra.pop("images", []),
        **extra,
    }


ORDER = ("dev", "test", "qa", "staging", "prod")


def test_the_environment_comes_from_its_label_then_the_namespace_then_the_cluster() -> None:
    assert environment_of(row("shop", labels={"environment": "perf"}), ORDER) == "perf"
    assert environment_of(row("shop-staging"), ORDER) == "staging"
    assert environment_of(row("shop", cluster="production-eu"), ORDER) == "prod"
    assert environment_of(row("shop.dev"), ORDER) == "dev"
    assert environment_of(row("shop"), ORDER) == "shop"


def test_environments_follow_the_promotion_order_and_unknown_ones_come_last() -> None:
    rows = [row("web-prod"), row("web-sandbox"), row("web-dev"), row("web-staging"), row("other", name="api")]
    apps = environments(rows, order=ORDER)
    assert [a["app"] for a in apps] == ["web", "api"]
    assert [p["environment"] for p in apps[0]["environments"]] == ["dev", "staging", "prod", "web-sandbox"]


def test_rollouts_without_the_grouping_key_belong_to_no_application() -> None:
    assert environments([row("x", labels={})], order=ORDER) == []
    grouped = environments(
        [row("a", applicationSet="shop"), row("b-prod", applicationSet="shop")],
        group_by="applicationset",
        order=ORDER,
    )
    assert [(a["app"], a["count"]) for a in grouped] == [("shop", 2)]


def test_where_is_commit_matches_a_sha_prefix_of_four_or_more_or_part_of_an_image() -> None:
    apps = environments(
        [
            row("web-dev", gitRevision="abcdef123", images=[{"image": "web:2", "tags": ["canary"]}]),
            row("web-prod", gitRevision="0123456", images=[{"image": "web:1", "tags": ["stable"]}]),
        ],
        order=ORDER,
    )
    assert [f["environment"] for f in find_commit(apps, "ABCD")] == ["dev"]
    assert find_commit(apps, "abc") == []  # too short to be a commit
    assert [f["environment"] for f in find_commit(apps, "web:1")] == ["prod"]
    assert apps[0]["environments"][1]["match"] is True


def test_an_application_generated_by_an_applicationset_names_it_for_the_grouping() -> None:
    from dashboard.domain.applications import application_view

    owned = {
        "metadata": {
            "name": "shop-prod",
            "namespace": "argocd",
            "ownerReferences": [
                {
                    "apiVersion": "argoproj.io/v1alpha1",
                    "kind": "ApplicationSet",
                    "name": "shop",
                    "uid": "u",
                    "controller": True,
                }
            ],
        }
    }
    assert application_view(owned).to_dict()["applicationSet"] == "shop"
    assert application_view({"metadata": {"name": "solo"}}).to_dict()["applicationSet"] is None
