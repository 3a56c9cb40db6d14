"""Each expiry of valid_until is recorded once, as an audit event."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from lifecycle.expiry import EXPIRE_ACTION, expiry_run
from memories.models import Memory
from organizations.models import AuditEvent
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db


def test_an_expiry_is_recorded_once(acme: Tenant, globex: Tenant, make_memory: MemoryFactory) -> None:
    past = timezone.now() - timedelta(minutes=1)
    expired = make_memory(valid_from=(past - timedelta(days=1)).isoformat(), valid_until=past.isoformat())
    open_ended = make_memory()
    later = make_memory(valid_until=(timezone.now() + timedelta(days=1)).isoformat())
    theirs = make_memory(principal=globex.agent, valid_until=past.isoformat())

    first = expiry_run(organization=acme.organization)
    second = expiry_run(organization=acme.organization)

    events = AuditEvent.objects.filter(action=EXPIRE_ACTION)
    assert [(e.target_id, e.organization_id) for e in events] == [(str(expired.pk), acme.organization.pk)]
    assert (first.counts, second.counts) == ({"expired": 1}, {"expired": 0})
    assert Memory.objects.get(pk=expired.pk).version == 1  # the memory itself is not rewritten
    assert {open_ended.pk, later.pk, theirs.pk}.isdisjoint({e.target_id for e in events})
