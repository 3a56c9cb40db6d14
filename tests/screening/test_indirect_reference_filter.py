"""The scanner's indirect-reference filter (``secret = get_secret_key()`` is no secret) answers as
detect-secrets' own on every line, and is the one the scanner uses."""

from __future__ import annotations

import pytest
from detect_secrets.filters.heuristic import is_indirect_reference as theirs
from detect_secrets.settings import get_settings

from screening.secrets import find_secrets, is_indirect_reference

LINES = [
    "secret = get_secret_key()",
    "api_key = request.headers['apikey']",
    "if token != os.environ.get('TOKEN'):",
    "password := vault.read(path)",
    "password = 'correct-horse-battery-staple-42'",
    "The release train leaves at 14:00 (or later) on PAY-2231 days.",
    "Refunds above 500 EUR need approval from the finance team.",
    "a = b",
    "call(x) = 3",
    "values[0] == other[1]",
    "key: value (note",
    "",
    "x" * 1200 + " = f(y)",
]


@pytest.mark.parametrize("line", LINES)
def test_it_answers_as_detect_secrets_does(line: str) -> None:
    assert is_indirect_reference(line) == theirs(line)


def test_the_scanner_uses_it_in_place_of_theirs() -> None:
    find_secrets("token = 'ghp_16C7e42F292c6912E7710c838347Ae178B4a'")  # configures the scanner
    filters = get_settings().filters
    assert "screening.secrets.is_indirect_reference" in filters
    assert "detect_secrets.filters.heuristic.is_indirect_reference" not in filters


def test_an_indirect_reference_is_still_no_finding_and_a_key_still_is() -> None:
    assert find_secrets("db_password = settings.get_secret('db')") == []
    assert [f.kind for f in find_secrets("aws_access_key_id = AKIAIOSFODNN7EXAMPLE")]
