from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"

    def ready(self) -> None:
        # Registers the backfill task with the embedding pipeline (see memories.tasks).
        from memories import tasks  # noqa: F401
