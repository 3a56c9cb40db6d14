"""Bad input gets a message that names the field and says what to send; good input is normalised."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from memories.models import Memory, MemoryType, ScopeType, Status
from memories.services import memory_create, memory_update
from memory_platform.exceptions import ValidationError
from tests.conftest import MemoryFactory, Tenant

BASE = {
    "scope_type": "organization",
    "memory_type": "fact",
    "current_content": "Our primary region is eu-west-1.",
}


def _create(tenant: Tenant, **fields: Any) -> Memory:
    return memory_create(principal=tenant.agent, data={**BASE, **fields})[0]


def _refused(tenant: Tenant, **fields: Any) -> ValidationError:
    with pytest.raises(ValidationError) as exc:
        _create(tenant, **fields)
    assert not Memory.objects.exists()
    return exc.value


# --- enums -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("scope_type", "global", ScopeType.values),
        ("memory_type", "note", MemoryType.values),
        ("status", "archived", Status.values),
        ("scope_type", "Organization", ScopeType.values),
    ],
)
def test_unknown_enum_value_lists_the_allowed_values(acme: Tenant, field: str, value: str, allowed: list[str]) -> None:
    error = _refused(acme, **{field: value})
    assert error.message == f"unknown {field} '{value}'; use one of: {', '.join(allowed)}"
    assert error.details == {"field": field}


def test_enum_lists_match_the_contract(acme: Tenant) -> None:
    error = _refused(acme, memory_type="note")
    for value in (
        "business_rule",
        "decision_log",
        "preference",
        "system_constraint",
        "documentation",
        "tech_stack",
        "fact",
        "task",
        "architecture",
        "user_context",
        "convention",
        "risk",
    ):
        assert value in error.message
    assert "draft, verified, locked, deprecated, active" in _refused(acme, status="gone").message
    assert "system, organization, repository, user" in _refused(acme, scope_type="x").message


def test_non_text_enum_value_is_refused(acme: Tenant) -> None:
    error = _refused(acme, memory_type=["fact"])
    assert error.message.startswith("unknown memory_type ['fact']; use one of:")


@pytest.mark.parametrize("field", ["scope_type", "memory_type", "current_content"])
@pytest.mark.parametrize("missing", [None, ""])
def test_required_fields(acme: Tenant, field: str, missing: Any) -> None:
    error = _refused(acme, **{field: missing})
    assert error.message == f"{field} is required"


def test_blank_content_is_refused(acme: Tenant) -> None:
    assert "non-empty text" in _refused(acme, current_content="   \n ").message


def test_unknown_field_lists_writable_fields(acme: Tenant) -> None:
    error = _refused(acme, colour="blue")
    assert error.message.startswith("unknown field(s): colour; writable fields are: scope_type, memory_type")


# --- importance ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 11, -3, 100])
def test_importance_out_of_range(acme: Tenant, value: int) -> None:
    error = _refused(acme, importance=value)
    assert error.message == f"importance must be from 1 to 10, got {value}"
    assert error.details == {"field": "importance"}


@pytest.mark.parametrize("value", ["high", 2.5, True, [3], "7.0"])
def test_importance_must_be_a_whole_number(acme: Tenant, value: Any) -> None:
    error = _refused(acme, importance=value)
    assert error.message.startswith("importance must be a whole number from 1 to 10")


@pytest.mark.parametrize(("value", "stored"), [(1, 1), (10, 10), (" 7 ", 7), (None, 1)])
def test_importance_accepts_whole_numbers(acme: Tenant, value: Any, stored: int) -> None:
    # A curator: an agent's importance is capped by the write policy (tests/memories/test_write_policy.py).
    created, _ = memory_create(principal=acme.curator, data={**BASE, "importance": value})
    assert Memory.objects.get(pk=created.id).importance == stored


def test_update_refuses_bad_importance(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(importance=4)
    with pytest.raises(ValidationError, match="importance must be from 1 to 10, got 42"):
        memory_update(principal=acme.agent, memory_id=memory.id, data={"importance": 42})
    assert Memory.objects.get(pk=memory.id).importance == 4


# --- metadata and source ------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "kind"), [(["a", "b"], "list"), ("team=ops", "str"), (5, "int")])
@pytest.mark.parametrize("field", ["metadata", "source"])
def test_metadata_must_be_an_object(acme: Tenant, field: str, value: Any, kind: str) -> None:
    error = _refused(acme, **{field: value})
    assert error.message == f"{field} must be a JSON object (key/value pairs), got {kind}"
    assert error.details == {"field": field}


def test_metadata_is_stored_as_given(acme: Tenant) -> None:
    memory = _create(acme, metadata={"team": "ops", "ticket": 12})
    assert Memory.objects.get(pk=memory.id).metadata == {"team": "ops", "ticket": 12}


# --- repository and scope ------------------------------------------------------------------------


def test_repository_scope_needs_a_repository(acme: Tenant) -> None:
    error = _refused(acme, scope_type="repository")
    assert error.message == "scope_type 'repository' needs a repository slug in 'repository'"
    assert error.details == {"field": "repository"}


@pytest.mark.parametrize("scope", ["organization", "user"])
def test_repository_with_another_scope_is_refused(acme: Tenant, scope: str) -> None:
    with pytest.raises(ValidationError, match="only used with scope_type 'repository'") as exc:
        memory_create(principal=acme.person, data={**BASE, "scope_type": scope, "repository": "web"})
    assert f"got scope_type '{scope}'" in exc.value.message
    assert not Memory.objects.exists()
    assert not acme.organization.repositories.exists()


@pytest.mark.parametrize("slug", ["Web App", "web_app", "-web", 12])
def test_repository_slug_must_be_valid(acme: Tenant, slug: Any) -> None:
    error = _refused(acme, scope_type="repository", repository=slug)
    assert "repository" in error.message
    assert not acme.organization.repositories.exists()


def test_update_to_repository_scope_needs_a_repository(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory()
    with pytest.raises(ValidationError, match="needs a repository slug"):
        memory_update(principal=acme.agent, memory_id=memory.id, data={"scope_type": "repository"})
    with pytest.raises(ValidationError, match="only used with scope_type 'repository'"):
        memory_update(principal=acme.agent, memory_id=memory.id, data={"repository": "web"})
    assert Memory.objects.get(pk=memory.id).scope_type == "organization"
    assert not acme.organization.repositories.exists()


def test_leaving_repository_scope_drops_the_repository(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(scope_type="repository", repository="web")
    memory_update(principal=acme.agent, memory_id=memory.id, data={"scope_type": "organization"})
    stored = Memory.objects.get(pk=memory.id)
    assert (stored.scope_type, stored.repository) == ("organization", None)


# --- validity window ------------------------------------------------------------------------------


@pytest.mark.parametrize("until", ["2026-01-01T00:00:00Z", "2025-06-01T00:00:00Z"])
def test_valid_until_must_follow_valid_from(acme: Tenant, until: str) -> None:
    error = _refused(acme, valid_from="2026-01-01T00:00:00Z", valid_until=until)
    assert error.message == "valid_until must be later than valid_from"
    assert error.details == {"field": "valid_until"}


@pytest.mark.parametrize(
    "value", ["yesterday", "31/01/2026", "2026-02-30T10:00:00Z", "2026-01-01T25:00:00", 1700000000]
)
def test_valid_from_must_be_an_iso_datetime(acme: Tenant, value: Any) -> None:
    error = _refused(acme, valid_from=value)
    assert "valid_from must be an ISO 8601 date-time" in error.message
    assert error.details == {"field": "valid_from"}


def test_validity_window_is_stored_timezone_aware(acme: Tenant) -> None:
    memory = _create(acme, valid_from="2026-01-01T09:00:00", valid_until="2026-03-01T09:00:00+02:00")
    stored = Memory.objects.get(pk=memory.id)
    assert stored.valid_from == datetime(2026, 1, 1, 9, tzinfo=UTC)
    assert stored.valid_until == datetime(2026, 3, 1, 7, tzinfo=UTC)


def test_update_refuses_window_that_ends_before_it_starts(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(valid_from="2026-01-01T00:00:00Z")
    with pytest.raises(ValidationError, match="valid_until must be later than valid_from"):
        memory_update(principal=acme.agent, memory_id=memory.id, data={"valid_until": "2025-12-31T00:00:00Z"})
    assert Memory.objects.get(pk=memory.id).valid_until is None


# --- title ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "title"),
    [
        (
            "All deployments must pass acceptance tests. Otherwise they are rolled back.",
            "All deployments must pass acceptance tests",
        ),
        ("Is the cache warm? Check the dashboard first.", "Is the cache warm?"),
        ("## Release process\n\nTag, build, then announce.", "Release process"),
        ("- use ruff for linting", "use ruff for linting"),
        (
            "When a customer asks for a refund after thirty days we always escalate to the billing team lead",
            "When a customer asks for a refund after thirty days we always…",
        ),
        ("Postgres", "Postgres"),
        # A period after an abbreviation, an initial or a version number ends no sentence.
        (
            "Branches are named like feat/PAY-12, e.g. feat/PAY-12-refunds. Keep them short.",
            "Branches are named like feat/PAY-12, e.g. feat/PAY-12-refunds",
        ),
        ("We chose PostgreSQL vs. MySQL for ledgers. See the ADR.", "We chose PostgreSQL vs. MySQL for ledgers"),
        ("J. Smith owns the billing service. Ask him first.", "J. Smith owns the billing service"),
        ("Python 3.11 is the runtime. Upgrade with care.", "Python 3.11 is the runtime"),
    ],
)
def test_title_is_derived_from_the_first_sentence(acme: Tenant, content: str, title: str) -> None:
    memory = _create(acme, current_content=content)
    stored = Memory.objects.get(pk=memory.id)
    assert stored.title == title
    assert len(stored.title.rstrip("…").split()) <= 12


def test_given_title_is_kept_with_whitespace_collapsed(acme: Tenant) -> None:
    memory = _create(acme, title="  Primary   region\n policy ")
    assert Memory.objects.get(pk=memory.id).title == "Primary region policy"


def test_overlong_title_is_refused(acme: Tenant) -> None:
    error = _refused(acme, title="x" * 256)
    assert "keep it to one short sentence" in error.message
    assert error.details == {"field": "title"}


# --- tags ---------------------------------------------------------------------------------------


def test_tags_are_normalised(acme: Tenant) -> None:
    memory = _create(acme, tags=[" Backend ", "backend", "API", "", "  ", "ops"])
    assert Memory.objects.get(pk=memory.id).tags == ["backend", "api", "ops"]


@pytest.mark.parametrize("value", ["backend", ["ok", 3], {"a": 1}])
def test_tags_must_be_a_list_of_strings(acme: Tenant, value: Any) -> None:
    assert _refused(acme, tags=value).message == "tags must be a list of strings"


def test_tags_have_limits(acme: Tenant) -> None:
    assert "longer than 64 characters" in _refused(acme, tags=["t" * 65]).message
    assert "at most 32 tags" in _refused(acme, tags=[f"tag-{n}" for n in range(33)]).message
