"""An organization's own words for search: the names and aliases of its entities.

A query that names an entity by one of its names is searched with the others beside it
(memories.search.words.expanded), so "kube" finds the memory that says "Kubernetes", and "payments
service" the one that says "paysvc". Curators give entities their aliases in the admin (and agents
through the knowledge tools); every entity has its own name as one.

Each organization's words are read once and kept for ``ttl_seconds``; this process forgets them as
soon as it changes one of the organization's entities or aliases (another process's change shows
within the TTL).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

from django.db import transaction

from memories.search.words import name_key
from memory_platform.db.tenancy import same_organization

# At most this many other names join a query for one name it holds: a much-aliased entity must not
# drown the query's own words.
OTHER_NAMES_MAX = 4


def normalized_name(name: str) -> str:
    """How names and aliases are compared: whitespace collapsed, case folded."""
    return " ".join(name.split()).casefold()


class AliasWords:
    """Per organization: each normalized name or alias -> the entity's other names, as written (what
    search reads), and the set of every name's key (what knowledge.names matches)."""

    ttl_seconds = 60.0
    max_organizations = 10_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[int, tuple[float, tuple[dict[str, tuple[str, ...]], dict[str, str]]]] = {}
        # Bumped by every forget: words read before a forget are not kept after it (a read that
        # raced a change would otherwise keep the old words for a whole TTL).
        self._generation = 0

    def __call__(self, organization_id: int) -> dict[str, tuple[str, ...]]:
        return self._words(organization_id)[0]

    def keys(self, organization_id: int) -> dict[str, str]:
        """The key of every name and alias of the organization's entities -> the entity's name
        (knowledge.names matches them; knowledge.mentions shows which entity a mention is)."""
        return self._words(organization_id)[1]

    def _words(self, organization_id: int) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
        now = time.monotonic()
        with self._lock:
            kept = self._kept.get(organization_id)
            generation = self._generation
        if kept is not None and now - kept[0] < self.ttl_seconds:
            return kept[1]
        words = self._read(organization_id)
        with self._lock:
            if generation == self._generation:
                if len(self._kept) >= self.max_organizations:
                    self._kept.clear()
                self._kept[organization_id] = (now, words)
        return words

    def forget(self, organization_id: int | None = None) -> None:
        with self._lock:
            self._generation += 1
            if organization_id is None:
                self._kept.clear()
            else:
                self._kept.pop(organization_id, None)

    @staticmethod
    def _read(organization_id: int) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
        from knowledge.models import EntityAlias

        names: dict[int, list[tuple[str, str]]] = defaultdict(list)
        entity_names: dict[str, str] = {}
        rows = EntityAlias.objects.filter(same_organization("entity"), organization_id=organization_id)
        rows = rows.order_by("entity_id", "id")
        for entity_id, alias, entity_name in rows.values_list("entity_id", "alias", "entity__name"):
            if key := name_key(alias):  # split as search splits a query (memories.search.words)
                names[entity_id].append((key, alias))
                entity_names[key] = entity_name
        words: dict[str, tuple[str, ...]] = {}
        for known in names.values():
            if len(known) < 2:
                continue  # an entity known by its name alone has nothing to add
            for key, _ in known:
                words[key] = tuple(alias for other, alias in known if other != key)[:OTHER_NAMES_MAX]
        return words, entity_names


alias_words = AliasWords()


def forget_organization(sender: Any, instance: Any, **kwargs: Any) -> None:
    """Signal receiver: an entity or alias of the instance's organization changed. Forgotten now (this
    transaction's own searches see it) and again at commit (another request may have read the old
    words in between)."""
    organization_id = instance.organization_id
    alias_words.forget(organization_id)
    transaction.on_commit(lambda: alias_words.forget(organization_id))
