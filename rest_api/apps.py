from django.apps import AppConfig


class RestApiConfig(AppConfig):
    name = "rest_api"
    verbose_name = "REST API"

    def ready(self) -> None:
        # Registers the OpenAPI description of our authentication classes with drf-spectacular.
        from rest_api import schema  # noqa: F401
