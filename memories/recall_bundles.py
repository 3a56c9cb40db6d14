"""The one write of recall: keeping a bundle under its idempotency key.

Recall reads memories (memories.recall); only a caller that passes an idempotency key has its
answer kept, so a repeat returns it unchanged. Nothing else changes: no memory, version or
access count, which is why memory-recall still announces itself as read-only.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from memories.models import RecallBundle
from organizations.principal import Principal


@transaction.atomic
def recall_bundle_record(*, principal: Principal, key: str, bundle: str) -> str:
    """Keep ``bundle`` under ``key`` for this principal; returns the bundle kept, which is an
    earlier one when a concurrent call with the same key stored its bundle first."""
    try:
        with transaction.atomic():  # a savepoint: the unique key may be taken concurrently
            RecallBundle.objects.create(
                organization=principal.organization, actor=principal.label, key=key, bundle=bundle
            )
    except IntegrityError:
        return RecallBundle.objects.get(organization=principal.organization, actor=principal.label, key=key).bundle
    return bundle
