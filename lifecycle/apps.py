from django.apps import AppConfig


class LifecycleConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "lifecycle"
    verbose_name = "Memory lifecycle"

    def ready(self) -> None:
        # A write's contradictions become proposals for curators (memories.hints calls back).
        from lifecycle.services import propose_write_conflicts
        from memories.hints import conflict_reporter_set

        conflict_reporter_set(propose_write_conflicts)
