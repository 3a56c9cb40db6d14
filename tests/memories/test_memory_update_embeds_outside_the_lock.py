"""memory_update embeds the new text before it locks the row: a slow embedding provider (the HTTP
one can wait for its whole timeout) must not keep other writers of the memory waiting. The write
then checks that nobody changed the memory meanwhile, and plans the update again if someone did."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence

import pytest
from django.conf import settings
from django.db import OperationalError, connection, transaction

from memories.embeddings import EmbeddingProvider, get_provider, reset_provider
from memories.models import Memory
from memories.services import UPDATE_ATTEMPTS, memory_update
from memory_platform.exceptions import Conflict
from tests.conftest import MemoryFactory, Tenant


class CallsBackWhileEmbedding(EmbeddingProvider):
    """A fake provider: while it "embeds", it runs ``during`` (what another client does meanwhile)."""

    def __init__(self, during: Callable[[], None]) -> None:
        super().__init__()
        self.name = "fake-slow"
        self.dimensions = settings.EMBEDDING_DIMENSIONS
        self.during = during
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.during()
        unit = [1.0] + [0.0] * (self.dimensions - 1)
        return [list(unit) for _ in texts]


def in_another_connection(action: Callable[[], None]) -> None:
    """Run ``action`` on a connection of its own (a thread gets one), as another client would."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            action()
        except BaseException as error:  # re-raised in the test's thread
            failure.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    if failure:
        raise failure[0]


@pytest.fixture
def install_provider() -> Iterator[Callable[[EmbeddingProvider], None]]:
    original = get_provider()
    yield reset_provider
    reset_provider(original)


@pytest.mark.django_db(transaction=True)
def test_the_row_is_not_locked_while_the_new_text_is_embedded(
    acme: Tenant, make_memory: MemoryFactory, install_provider: Callable[[EmbeddingProvider], None]
) -> None:
    memory = make_memory(current_content="Deploys happen on Tuesdays.")
    probes: list[str] = []

    def lock_the_row_without_waiting() -> None:
        with transaction.atomic():
            try:
                Memory.objects.select_for_update(nowait=True).filter(pk=memory.pk).first()
                probes.append("free")
            except OperationalError:  # LockNotAvailable: the update holds the row
                probes.append("locked")

    install_provider(CallsBackWhileEmbedding(lambda: in_another_connection(lock_the_row_without_waiting)))

    updated = memory_update(
        principal=acme.agent, memory_id=memory.pk, data={"current_content": "Deploys happen on Thursdays."}
    )

    assert probes == ["free"]
    assert updated.current_content == "Deploys happen on Thursdays."
    assert updated.embedding_model == "fake-slow"


@pytest.mark.django_db(transaction=True)
def test_an_edit_made_while_embedding_is_kept_and_the_update_applied_on_top(
    acme: Tenant, make_memory: MemoryFactory, install_provider: Callable[[EmbeddingProvider], None]
) -> None:
    memory = make_memory(current_content="The cache is Redis 6.")
    edits = iter([lambda: memory_update(principal=acme.curator, memory_id=memory.pk, data={"importance": 7})])

    def edit_once() -> None:
        edit = next(edits, None)
        if edit is not None:
            in_another_connection(edit)

    provider = CallsBackWhileEmbedding(edit_once)
    install_provider(provider)

    updated = memory_update(
        principal=acme.agent, memory_id=memory.pk, data={"current_content": "The cache is Redis 7."}
    )

    assert (updated.current_content, updated.importance, updated.version) == ("The cache is Redis 7.", 7, 3)
    assert provider.calls == 2  # planned (and embedded) again on the edited version
    assert list(updated.versions.order_by("version").values_list("changed_fields", flat=True)) == [
        list(updated.versions.get(version=1).changed_fields),
        ["importance"],
        ["current_content", "title"],
    ]


@pytest.mark.django_db(transaction=True)
def test_a_memory_that_keeps_changing_is_a_conflict(
    acme: Tenant, make_memory: MemoryFactory, install_provider: Callable[[EmbeddingProvider], None]
) -> None:
    memory = make_memory(current_content="Backups run nightly.")
    importance = iter(range(2, 10))

    def edit_every_time() -> None:
        in_another_connection(
            lambda: memory_update(principal=acme.curator, memory_id=memory.pk, data={"importance": next(importance)})
        )

    provider = CallsBackWhileEmbedding(edit_every_time)
    install_provider(provider)

    with pytest.raises(Conflict, match="kept changing"):
        memory_update(principal=acme.agent, memory_id=memory.pk, data={"current_content": "Backups run hourly."})

    assert provider.calls == UPDATE_ATTEMPTS
    assert Memory.objects.get(pk=memory.pk).current_content == "Backups run nightly."
