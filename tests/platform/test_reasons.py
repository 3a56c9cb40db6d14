"""Reasons: what every decision keeps, and how a reason page reads its answer."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from memory_platform.exceptions import ValidationError
from memory_platform.reasons import Confirmation, confirmation, reason


def test_a_reason_is_trimmed_text_up_to_2000_characters() -> None:
    assert reason("  agreed at review  ") == "agreed at review"
    assert reason(None) == ""
    assert reason("x" * 2000) == "x" * 2000
    for bad in ("x" * 2001, 42, "a\x00b"):
        with pytest.raises(ValidationError):
            reason(bad)


@pytest.mark.parametrize(
    ("posted", "expected"),
    [
        ({"reason": "why"}, Confirmation()),  # not confirmed yet: the page is shown
        ({"post": "yes", "reason": "why"}, Confirmation(reason="why")),
        ({"post": "yes", "reason": " "}, Confirmation(error="Say why: the reason is kept in the audit log.")),
        ({"post": "yes", "reason": "x" * 2001}, Confirmation(error="reason is 2001 characters; keep it to 2000")),
    ],
)
def test_a_reason_page_reads_its_post(posted: dict[str, str], expected: Confirmation) -> None:
    assert confirmation(RequestFactory().post("/", posted), "the audit log") == expected
