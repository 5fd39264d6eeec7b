from __future__ import annotations

from django.apps import AppConfig


class GitopsConfig(AppConfig):
    name = "dashboard.gitops"
    label = "gitops"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "GitOps chain"

    def ready(self) -> None:
        # Fail at start-up, naming the bad entry, rather than on the first webhook.
        from dashboard.gitops.config import repositories

        repositories()
