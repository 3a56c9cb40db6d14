"""The memory-entity graph: every write keeps the names a memory mentions, entities are found by any
of their names, an alias given later links the memories that already say it, and reads show only
what the reader may see."""

from __future__ import annotations

import io
from typing import Any
from unittest import mock

import pytest
from django.core.management import call_command

from knowledge.mentions import alias_given, entity_mentions, mentions_of
from knowledge.models import Mention
from knowledge.selectors import memory_detail
from knowledge.services import entity_add_alias, entity_resolve
from memories.batch import memory_batch_create
from memories.decisions import memory_revert
from memories.models import Memory
from memories.search import SearchParams, memory_search
from memories.selectors import MemoryFilters, memory_list
from memories.services import memory_update
from memory_platform.exceptions import ValidationError
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db


def names(memory: Memory) -> list[tuple[str, str, str | None]]:
    found = mentions_of(memory.organization_id, [memory.pk]).get(memory.pk, [])
    return [(m["name"], m["kind"], m["entity"]) for m in found]


def test_a_new_memory_mentions_the_names_it_says(acme: Tenant, make_memory: MemoryFactory) -> None:
    entity_resolve(principal=acme.agent, name="Kubernetes", entity_type="system")
    entity_add_alias(principal=acme.agent, entity_name="Kubernetes", alias="kube")

    memory = make_memory(title="Where kube runs", current_content="Alice moved kube to Google Cloud in `infra/`.")

    assert names(memory) == [
        ("kube", "alias", "Kubernetes"),
        ("Alice", "name", None),
        ("Google Cloud", "name", None),
        ("infra/", "identifier", None),
    ]
    assert memory_detail(acme.reader, memory.pk).mentions == mentions_of(acme.organization.pk, [memory.pk])[memory.pk]


def test_a_change_of_text_replaces_them_and_a_revert_brings_them_back(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(current_content="Redis holds the sessions.")
    assert [n for n, _, _ in names(memory)] == ["Redis"]

    memory_update(principal=acme.agent, memory_id=memory.pk, data={"current_content": "Valkey holds the sessions."})
    assert [n for n, _, _ in names(memory)] == ["Valkey"]
    memory_update(principal=acme.agent, memory_id=memory.pk, data={"importance": 4})
    assert [n for n, _, _ in names(memory)] == ["Valkey"], "a change that is not the text keeps them"

    memory_revert(principal=acme.curator, memory_id=memory.pk, version=1, reason="Valkey was not chosen")
    assert [n for n, _, _ in names(memory)] == ["Redis"]


def test_a_batch_mentions_as_single_writes_do(acme: Tenant) -> None:
    entries = [
        {"scope_type": "organization", "memory_type": "fact", "current_content": f"The {n} team deploys with Argo CD."}
        for n in ("Orion", "Vega", "Lyra", "Deneb", "Altair", "Rigel", "Spica", "Pollux")
    ]

    results = memory_batch_create(principal=acme.agent, entries=entries)

    assert all(result.ok for result in results)
    for result, name in zip(
        results, ("Orion", "Vega", "Lyra", "Deneb", "Altair", "Rigel", "Spica", "Pollux"), strict=True
    ):
        assert result.memory is not None
        assert [n for n, _, _ in names(result.memory)] == [name, "Argo CD"]


def test_an_alias_given_later_links_the_memories_that_say_it(acme: Tenant, make_memory: MemoryFactory) -> None:
    says = make_memory(current_content="The payments service retries twice before it gives up.")
    other = make_memory(current_content="The search service retries once.")
    entity_resolve(principal=acme.agent, name="paysvc")
    assert "payments service" not in [n for n, _, _ in names(says)], "lower case words are no name by themselves"

    assert alias_given(acme.organization.pk, "Payments Service") == 1
    assert alias_given(acme.organization.pk, "Payments Service") == 0, "linking twice adds nothing"

    entity_add_alias(principal=acme.agent, entity_name="paysvc", alias="payments service")
    assert names(says) == [("payments service", "alias", "paysvc")]
    assert names(other) == []
    assert [
        m.pk
        for m in entity_mentions(
            acme.reader, entity_resolve(principal=acme.reader, name="paysvc", create=False)
        ).memories
    ] == [says.pk]


def test_an_alias_is_linked_after_commit_by_the_worker_or_here_when_the_broker_is_down(
    acme: Tenant, make_memory: MemoryFactory, django_capture_on_commit_callbacks: Any
) -> None:
    memory = make_memory(current_content="Ask the data platform team before changing a schema.")
    entity_resolve(principal=acme.agent, name="DPT")

    with (
        mock.patch("knowledge.tasks.knowledge_alias_mentions.delay") as delay,
        django_capture_on_commit_callbacks(execute=True),
    ):
        entity_add_alias(principal=acme.agent, entity_name="DPT", alias="data platform team")
    delay.assert_called_once_with(acme.organization.pk, "data platform team")
    assert names(memory) == []

    with (
        mock.patch("knowledge.tasks.knowledge_alias_mentions.delay", side_effect=ConnectionError("broker down")),
        django_capture_on_commit_callbacks(execute=True),
    ):
        entity_add_alias(principal=acme.agent, entity_name="DPT", alias="platform team")
    assert names(memory) == [("platform team", "alias", "DPT")]


def test_reads_show_only_memories_the_reader_may_see(acme: Tenant, make_memory: MemoryFactory) -> None:
    entity = entity_resolve(principal=acme.agent, name="Stripe")
    assert entity is not None
    shared = make_memory(current_content="Stripe webhooks go to the billing queue.", importance=4)
    make_memory(current_content="Stripe refunds need a curator's approval with the Finance Team.", importance=2)
    private = make_memory(acme.person, scope_type="user", current_content="My Stripe test key lives in 1Password.")

    for_reader = entity_mentions(acme.reader, entity)
    for_person = entity_mentions(acme.person, entity)

    assert for_reader.total == 2 and for_reader.memories[0].pk == shared.pk
    assert private.pk not in {m.pk for m in for_reader.memories}
    assert for_person.total == 3
    assert dict(for_reader.mentioned_with) == {"Finance Team": 1}


def test_the_rebuild_command_finds_them_again(acme: Tenant, make_memory: MemoryFactory) -> None:
    memory = make_memory(current_content="Grafana alerts page the on-call engineer.")
    Mention.objects.all().delete()  # as after an upgrade from a version without them
    out = io.StringIO()

    call_command("mentions", "--organization", "acme", stdout=out)

    assert names(memory) == [("Grafana", "name", None)]
    assert "acme: 1 mentions" in out.getvalue()


def test_a_memory_written_alone_is_told_the_tags_of_memories_that_name_the_same(
    acme: Tenant, make_memory: MemoryFactory
) -> None:
    make_memory(current_content="Redis evicts sessions after a day.", tags=["cache", "sessions"])
    make_memory(current_content="Redis runs in the EU region only.", tags=["cache", "infra"])
    make_memory(acme.person, scope_type="user", current_content="My Redis notes.", tags=["private-notes"])
    make_memory(current_content="Postgres holds the orders.", tags=["database"])

    memory = make_memory(current_content="Redis keys carry the tenant slug first.", tags=["infra"])
    updated = memory_update(
        principal=acme.agent, memory_id=memory.pk, data={"current_content": "Postgres and Redis share a backup."}
    )

    assert memory.suggested_tags == ("cache", "sessions")
    assert updated.suggested_tags == ("cache", "database", "sessions")
    assert make_memory(current_content="nothing named here at all.").suggested_tags == ()


def test_searches_and_lists_filter_by_what_memories_mention(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory
) -> None:
    entity_resolve(principal=acme.agent, name="paysvc")
    entity_add_alias(principal=acme.agent, entity_name="paysvc", alias="Payments Service")
    by_name = make_memory(current_content="paysvc retries a failed charge twice.", status="active")
    by_alias = make_memory(current_content="Deploys of the Payments Service need two approvals.", status="active")
    other = make_memory(current_content="Deploys of Ledger need one approval.", status="active")

    def found(query: str, mentions: str, mode: str = "hybrid") -> set[Any]:
        params = SearchParams.build(query=query, mode=mode, filters={"mentions": mentions}, min_score=0)
        return {hit.memory.pk for hit in memory_search(acme.reader, params).hits}

    assert found("deploy approvals", "PAYSVC") == {by_name.pk, by_alias.pk}
    assert found("deploy approvals", "payments service", mode="keyword") == {by_alias.pk}
    assert found("", "Ledger") == {other.pk}, "a name no entity is known by: as written"
    assert found("deploy approvals", "Nobody") == set()
    outsider = SearchParams.build(query="deploy approvals", filters={"mentions": "paysvc"}, min_score=0)
    assert memory_search(globex.admin, outsider).hits == [], "another organization's names find nothing of acme's"
    listed = memory_list(acme.reader, MemoryFilters.from_mapping({"mentions": "paysvc"}))
    assert set(listed.values_list("pk", flat=True)) == {by_name.pk, by_alias.pk}
    with pytest.raises(ValidationError, match=r"filters\.mentions must be a name"):
        MemoryFilters.from_mapping({"mentions": "  "})
