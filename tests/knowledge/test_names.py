"""The names a text mentions (knowledge.names): what links a memory to its organization's entities."""

from __future__ import annotations

import pytest

from knowledge.names import ALIAS, IDENTIFIER, NAME, WordList, names_in, query_names


def found(text: str, aliases: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    return [(m.written, m.kind) for m in names_in(text, aliases)]


def test_names_identifiers_and_aliases_each_as_first_written() -> None:
    text = "Use `settings.DEBUG` and the payments service in prod; k8s runs on Google Cloud, via GitHub Actions."

    assert found(text, frozenset({"payments service"})) == [
        ("settings.DEBUG", IDENTIFIER),
        ("payments service", ALIAS),
        ("k8s", IDENTIFIER),
        ("Google Cloud", NAME),
        ("GitHub Actions", NAME),
    ]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Redis is the cache of the Payments Team.", ["Redis", "Payments Team"]),  # not an English word
        ("Use the cache. Every deploy waits for it.", []),  # English words that start sentences
        ("Celery runs the jobs. We chose Celery in May.", ["Celery"]),  # capitalized where it needs not be
        ("I met Alice's sister on Monday in March.", ["Alice"]),  # possessive, days and months dropped
        ("We moved to PostgreSQL 15 in the 3rd week of 2023, with 10am backups.", ["PostgreSQL"]),
    ],
)
def test_capitals_at_a_sentence_start_say_nothing_unless_the_word_is_a_name(text: str, names: list[str]) -> None:
    assert [written for written, _ in found(text)] == names


def test_code_identifiers_are_names() -> None:
    text = "Call Task.retry() with max_retries=5 from celery.app.task; the OAuth2 flow sets SESSION_COOKIE_AGE."

    assert found(text) == [
        ("Task.retry", IDENTIFIER),
        ("max_retries", IDENTIFIER),
        ("celery.app.task", IDENTIFIER),
        ("OAuth2", IDENTIFIER),
        ("SESSION_COOKIE_AGE", IDENTIFIER),
    ]


def test_a_name_is_kept_once_by_its_key_and_the_longest_alias_wins() -> None:
    text = "The payments service API calls the Payments Service; PAYMENTS SERVICE API is slow."

    assert found(text, frozenset({"payments service", "payments service api"})) == [
        ("payments service API", ALIAS),
        ("Payments Service", ALIAS),
    ]


def test_a_query_names_its_aliases_whatever_their_case() -> None:
    assert query_names("who owns the payments service and Redis?", frozenset({"payments service"})) == [
        "payments service",
        "redis",
    ]


def test_the_compact_word_list_finds_exactly_its_words() -> None:
    words = WordList(["delta", "alpha", "charlie", "bravo"])

    assert [w in words for w in ("alpha", "bravo", "charlie", "delta")] == [True] * 4
    assert [w in words for w in ("", "alph", "alphas", "echo", "Alpha", 3)] == [False] * 6
    assert len(words) == 4 and words[0] == "alpha" and words[3] == "delta"
