"""A small organization's keyword statistics are its own at every search: a new organization's first
memory, counted once and kept, must not stand for its corpus while it grows."""

from __future__ import annotations

from typing import Any

from memories.models import Memory
from memories.search.keyword import QueryTerms
from memories.services import memory_create
from tests.conftest import Tenant
from tests.search.conftest import hit_ids, search

QUESTION = "can I ship on friday afternoon?"


def _write(tenant: Tenant, text: str, **fields: Any) -> Memory:
    data = {"scope_type": "organization", "memory_type": "business_rule", "current_content": text, **fields}
    return memory_create(principal=tenant.curator, data=data)[0]


def test_a_new_organizations_statistics_follow_its_first_writes(acme: Tenant) -> None:
    _write(acme, "Standups start at ten.")
    search(acme.agent, query=QUESTION)  # the statistics of a corpus of one, read
    claimed = _write(acme, "No deploys to production on Fridays after 16:00 UTC.", status="active")
    locked = _write(acme, "No deploys to production on Fridays after 14:00 UTC.", status="locked")

    terms = QueryTerms.of(acme.organization.pk, "friday deploys production")
    assert terms.total == 3
    assert terms.frequencies == {"deploy": 2, "friday": 2, "product": 2}
    assert hit_ids(search(acme.agent, query=QUESTION))[:2] == [locked.pk, claimed.pk]
