"""REST reads JSON through the platform's one guard: too deep or not valid Unicode is a 400 that
says what to send, never a 500, and nothing is written."""

from __future__ import annotations

import pytest

from memories.models import Memory
from tests.rest_api.conftest import API, Api, error_of


def _nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('{"scope_type": "organization", "memory_type": "fact", "current_content": "x", "metadata": '
         + _nested(400) + "}", "nested more than"),
        ('{"scope_type": "organization", "memory_type": "fact", "current_content": "cents \\ud800"}',
         "at current_content is not valid Unicode"),
    ],
)  # fmt: skip
def test_a_bad_body_is_a_400_saying_what_to_fix(api: Api, body: str, said: str) -> None:
    before = Memory.objects.count()

    response = api("agent").post(f"{API}/memories/", body, content_type="application/json")

    error = error_of(response, 400, "parse_error")
    assert said in error["message"]
    assert Memory.objects.count() == before
