from django.apps import AppConfig


class CurationConfig(AppConfig):
    """The curators' workspace: the review queue, the dashboard and the admin site they live on."""

    name = "curation"
    verbose_name = "Curation"
