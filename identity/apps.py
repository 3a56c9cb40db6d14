from django.apps import AppConfig


class IdentityConfig(AppConfig):
    name = "identity"
    verbose_name = "Sign-in and authorization"
