"""Django discovers models here; each lives with the part of the data flow that owns it."""
from __future__ import annotations

from dashboard.history.models import Release, TimelineEvent

__all__ = ["Release", "TimelineEvent"]
