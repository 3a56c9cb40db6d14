"""The admin's memory page still shows how often and when a memory was read, now that the counts
live in their own table."""

from __future__ import annotations

import re

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memories import access
from memories.models import MemoryAccess
from organizations.models import User
from tests.conftest import MemoryFactory


def _field(html: str, name: str) -> str:
    match = re.search(rf'field-{name}">.*?<div class="readonly">(.*?)</div>', html, re.S)
    assert match, f"no {name} on the page"
    return match.group(1).strip()


def test_the_change_page_shows_access_count_and_time(client: Client, make_memory: MemoryFactory) -> None:
    read = make_memory(current_content="Deploys are blue-green.")
    unread = make_memory(current_content="The cache is Redis.")
    access.flush_access()
    access.record_access([read.pk, read.pk, read.pk])
    access.flush_access()
    client.force_login(User.objects.create_superuser(username="root", password="unused-password-1"))

    page = client.get(reverse("admin:memories_memory_change", args=[read.pk])).content.decode()
    assert _field(page, "access_count") == "3"
    assert _field(page, "last_accessed_at") not in ("", "-")
    assert MemoryAccess.objects.get(memory=read).last_accessed_at <= timezone.now()

    page = client.get(reverse("admin:memories_memory_change", args=[unread.pk])).content.decode()
    assert _field(page, "access_count") == "0"
    assert _field(page, "last_accessed_at") == "-"
