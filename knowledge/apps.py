import logging
from typing import Any

from django.apps import AppConfig
from django.db import transaction
from django.db.models.signals import post_delete, post_save

logger = logging.getLogger(__name__)


def _alias_saved(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    """A new name or alias: the memories that already say it are linked by the worker, after commit
    (here and now when the broker cannot take the task)."""
    if created:
        transaction.on_commit(lambda: _link_alias(instance.organization_id, instance.alias))


def _link_alias(organization_id: int, alias: str) -> None:
    from knowledge.mentions import alias_given
    from knowledge.tasks import knowledge_alias_mentions

    try:
        knowledge_alias_mentions.delay(organization_id, alias)
    except Exception:  # a broker outage must not lose the links
        logger.exception("could not enqueue linking alias %r; linking it now", alias)
        alias_given(organization_id, alias)


class KnowledgeConfig(AppConfig):
    name = "knowledge"

    def ready(self) -> None:
        from knowledge import mentions
        from knowledge.models import Entity, EntityAlias
        from knowledge.words import alias_words, forget_organization
        from memories.search.words import register_words
        from memories.selectors import mentioning
        from memories.written import on_text_written

        # Search reads the organization's entity names and aliases as its own words.
        register_words(alias_words)
        for model in (Entity, EntityAlias):
            post_save.connect(forget_organization, sender=model, dispatch_uid=f"alias-words-{model.__name__}")
            post_delete.connect(forget_organization, sender=model, dispatch_uid=f"alias-words-{model.__name__}-del")
        # Every memory's names are written with its text, and searches and lists filter by them.
        on_text_written(mentions.text_written)
        mentioning.keys, mentioning.condition = mentions.keys_for_name, mentions.mention_condition
        post_save.connect(_alias_saved, sender=EntityAlias, dispatch_uid="alias-mentions")
