"""The pure domain: Kubernetes objects plus a "now" in, views out. No Django, no I/O."""

from __future__ import annotations

from .rollout_view import RolloutView, build_rollout_view, rollout_views

__all__ = ["RolloutView", "build_rollout_view", "rollout_views"]
