from django.apps import AppConfig


class InstructionsConfig(AppConfig):
    name = "instructions"
    verbose_name = "Agent instructions"
