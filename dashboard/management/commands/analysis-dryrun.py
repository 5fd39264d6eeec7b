"""``python manage.py analysis-dryrun``: the hyphenated name of ``analysis_dryrun`` (see its docstring)."""

from __future__ import annotations

from dashboard.management.commands.analysis_dryrun import Command

__all__ = ["Command"]
