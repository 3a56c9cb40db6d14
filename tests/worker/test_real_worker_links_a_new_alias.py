"""End to end: an alias given to an entity puts a task in the broker after commit, and a real Celery
worker process links the memories that already said it (knowledge.mentions.alias_given)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import transaction

from knowledge.mentions import mentions_of
from knowledge.services import entity_add_alias, entity_resolve
from tests.conftest import MemoryFactory, Tenant
from tests.worker.conftest import wait_for, worker_on


@pytest.mark.django_db(transaction=True)
def test_a_worker_process_links_the_memories_that_say_a_new_alias(
    acme: Tenant, make_memory: MemoryFactory, broker_dir: Path, subprocess_env: dict[str, str]
) -> None:
    with transaction.atomic():
        said = make_memory(current_content="Ask the data platform team before changing a schema.")
        entity_resolve(principal=acme.agent, name="DPT")
    assert mentions_of(acme.organization.pk, [said.pk]) == {}

    with transaction.atomic():
        entity_add_alias(principal=acme.agent, entity_name="DPT", alias="data platform team")
    messages = list(broker_dir.glob("*.celery.msg"))
    assert any("knowledge_alias_mentions" in m.read_text() for m in messages), "the task waits in the broker"

    worker = worker_on(broker_dir, subprocess_env)
    worker.start()
    try:
        linked = wait_for(
            lambda: mentions_of(acme.organization.pk, [said.pk]).get(said.pk),
            timeout=60,
            what=f"the worker to link the memory; its log:\n{worker.log_file}",
        )
    finally:
        returncode = worker.stop()

    assert linked == [{"name": "data platform team", "kind": "alias", "entity": "DPT"}]
    log = worker.log_file.read_text()
    assert "knowledge.tasks.knowledge_alias_mentions" in log and "succeeded" in log, log
    assert returncode == 0, log
