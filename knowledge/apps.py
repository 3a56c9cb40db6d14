from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class KnowledgeConfig(AppConfig):
    name = "knowledge"

    def ready(self) -> None:
        from knowledge.models import Entity, EntityAlias
        from knowledge.words import alias_words, forget_organization
        from memories.search.words import register_words

        # Search reads the organization's entity names and aliases as its own words.
        register_words(alias_words)
        for model in (Entity, EntityAlias):
            post_save.connect(forget_organization, sender=model, dispatch_uid=f"alias-words-{model.__name__}")
            post_delete.connect(forget_organization, sender=model, dispatch_uid=f"alias-words-{model.__name__}-del")
