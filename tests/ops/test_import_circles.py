"""No two modules of the project import each other (at the top or inside a function).

A circle hides which side is the core: services are imported by their Celery tasks, never the other way
(services send their tasks by name; ``rollouts_ui.celery.task`` imports a task's module), and the bench
report never imports the run that produces its figures.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("dashboard", "kubesim", "rollouts_ui")


def _modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name in modules}


def test_no_two_modules_import_each_other() -> None:
    modules = _modules()
    graph = {name: _imports(path, modules) - {name} for name, path in modules.items()}
    circles = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if a in graph[b]})
    assert not circles, circles


def test_services_send_their_tasks_by_a_name_that_is_registered() -> None:
    from rollouts_ui.celery import task

    for name in ("dashboard.actions.tasks.execute_action", "dashboard.notify.tasks.dispatch_event"):
        assert task(name).name == name
