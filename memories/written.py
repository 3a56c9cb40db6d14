"""What other apps keep in step with what memories say.

A listener (registered once, by its app's ready()) is told, inside the write's transaction, of the
memories of an organization whose text (title or content) was just written: created, changed,
reverted or merged. What it derives from the text is then written with the text, or not at all.
The knowledge app keeps the names each memory mentions this way (knowledge.mentions).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memories.models import Memory

# Fields whose change means the memory says something else.
TEXT_FIELDS = frozenset({"title", "current_content"})
# What a listener reads of a memory (enough to load for one: ``.only(*TEXT_ONLY)``).
TEXT_ONLY = ("id", "organization_id", "title", "current_content")

Listener = Callable[[int, Sequence[Memory], bool], None]
_listeners: list[Listener] = []


def on_text_written(listener: Listener) -> None:
    """Register ``listener(organization_id, memories, created)`` (once; ``created``: new memories,
    nothing was derived from them before)."""
    if listener not in _listeners:
        _listeners.append(listener)


def text_written(organization_id: int, memories: Sequence[Memory], *, created: bool) -> None:
    """Called by the services in the transaction that wrote the memories' text."""
    if memories:
        for listener in _listeners:
            listener(organization_id, memories, created)
