"""Tell PostgreSQL's planner that cluster, namespace and rollout depend on each other.

Without it the planner multiplies their selectivities and expects about two releases per rollout; with
hundreds, it picked plans that walked every release of a rollout per row (the insights' findings query
took seconds on 100,000 releases). SQLite (the demo) has no such statistics: nothing to do there.
"""

from typing import Any

from django.db import migrations


def create(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE STATISTICS IF NOT EXISTS release_by_rollout_stats (ndistinct, dependencies) "
            "ON cluster, namespace, rollout FROM dashboard_release"
        )
        schema_editor.execute("ANALYZE dashboard_release")


def drop(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP STATISTICS IF EXISTS release_by_rollout_stats")


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0002_insights"),
    ]

    operations = [migrations.RunPython(create, drop)]
