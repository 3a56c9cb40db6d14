"""NUL characters, which PostgreSQL text cannot hold, are refused with the field's name, not a 500."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.services import triple_assert
from memories.models import Memory
from memories.services import memory_create
from memory_platform.exceptions import NotFound, ValidationError
from organizations.tokens import token_revoke
from tests.conftest import Tenant

BASE = {"scope_type": "organization", "memory_type": "fact", "current_content": "The build runs on Fridays."}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("current_content", "bad\x00content"),
        ("title", "bad\x00title"),
        ("tags", ["ok", "ba\x00d"]),
        ("metadata", {"ticket": "PAY\x00-1"}),
        ("metadata", {"ti\x00cket": "PAY-1"}),
        ("source", {"nested": ["a\x00b"]}),
    ],
)
def test_nul_in_a_memory_field_is_refused_by_name(acme: Tenant, field: str, value: Any) -> None:
    with pytest.raises(ValidationError) as raised:
        memory_create(principal=acme.agent, data={**BASE, field: value})
    assert raised.value.details == {"field": field}
    assert "NUL" in raised.value.message
    assert not Memory.objects.exists()


def test_nul_in_an_idempotency_key_is_refused(acme: Tenant) -> None:
    with pytest.raises(ValidationError, match="NUL"):
        memory_create(principal=acme.agent, data=BASE, idempotency_key="key\x00")


@pytest.mark.parametrize(
    "fact",
    [
        {"subject": "Ali\x00ce", "predicate": "works_on", "object": "Payments"},
        {"subject": "Alice", "predicate": "works\x00on", "object": "Payments"},
        {"subject": "Alice", "predicate": "works_on", "object": "Pay\x00ments"},
    ],
)
def test_nul_in_a_fact_is_refused(acme: Tenant, fact: dict[str, str]) -> None:
    with pytest.raises(ValidationError, match="NUL"):
        triple_assert(principal=acme.agent, **fact)


def test_revoking_a_prefix_with_a_nul_is_not_found(acme: Tenant) -> None:
    with pytest.raises(NotFound):
        token_revoke(principal=acme.admin, prefix="ab\x00cd")
