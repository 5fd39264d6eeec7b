"""The built-in roles as rows, so grants in the admin can point at them (their actions live in code)."""

from __future__ import annotations

from typing import Any

from django.db import migrations

BUILTIN = {
    "viewer": ("get", "See rollouts"),
    "operator": (
        "get promote promote-full skip-current-step abort retry pause resume restart undo",
        "See rollouts and run the day-to-day actions",
    ),
    "admin": ("*", "Everything, including unwedge"),
}


def create(apps: Any, schema_editor: Any) -> None:
    Role = apps.get_model("access", "Role")
    for name, (actions, description) in BUILTIN.items():
        Role.objects.get_or_create(name=name, defaults={"actions": actions, "description": description})


class Migration(migrations.Migration):
    dependencies = [("access", "0001_initial")]
    operations = [migrations.RunPython(create, migrations.RunPython.noop)]
