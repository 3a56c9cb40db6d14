from django.apps import AppConfig


class CodeIndexConfig(AppConfig):
    name = "code_index"
    verbose_name = "Code index"
    default_auto_field = "django.db.models.BigAutoField"
