"""Background work on knowledge: linking the memories that already say a newly given alias."""

from __future__ import annotations

import logging

from celery import shared_task

from knowledge import mentions

logger = logging.getLogger(__name__)


@shared_task(ignore_result=True, acks_late=True)
def knowledge_alias_mentions(organization_id: int, alias: str) -> int:
    """The organization's memories that say ``alias`` mention its entity (idempotent)."""
    added = mentions.alias_given(organization_id, alias)
    if added:
        logger.info("alias %r: %d memories of organization %d linked", alias, added, organization_id)
    return added
