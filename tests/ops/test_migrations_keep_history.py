"""No migration ever drops history: no RemoveField or DeleteModel on the history models, anywhere."""

from __future__ import annotations

import pytest
from django.db import migrations
from django.db.migrations.loader import MigrationLoader

HISTORY_MODELS = {("dashboard", "release"), ("dashboard", "timelineevent"), ("actions", "auditentry")}
DROPPING = (migrations.RemoveField, migrations.DeleteModel)


@pytest.mark.django_db
def test_no_migration_removes_a_history_field_or_model() -> None:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    offending = []
    for (app, name), migration in loader.disk_migrations.items():
        for operation in migration.operations:
            model = getattr(operation, "model_name", None) or getattr(operation, "name", "")
            if isinstance(operation, DROPPING) and (app, str(model).lower()) in HISTORY_MODELS:
                offending.append(f"{app}.{name}: {operation.describe()}")
            if isinstance(operation, migrations.RunSQL) and "drop" in str(operation.sql).lower():
                offending.append(f"{app}.{name}: RunSQL with DROP")
    assert offending == []


@pytest.mark.django_db
def test_the_scan_sees_the_history_migrations() -> None:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    created = {
        (app, op.name.lower())
        for (app, _), migration in loader.disk_migrations.items()
        for op in migration.operations
        if isinstance(op, migrations.CreateModel)
    }
    assert created >= HISTORY_MODELS
