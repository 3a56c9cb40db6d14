"""What the ranking model reads from a query's wording: names, "when", and the dates it names."""

from __future__ import annotations

from datetime import date

import pytest

from memories.search.questions import date_span, query_names, query_traits


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("When did Caroline go to the support group?", ("When", "Caroline")),  # "When" is a stop word in search
        ("What is Caroline's identity?", ("What", "Caroline")),
        ("Would Melanie still paint with Jon?", ("Melanie", "Jon")),
        ("which linter do we use?", ()),
        ("Postgres upgrade in May 2024", ("Postgres",)),
    ],
)
def test_names_are_the_capitalized_words(query: str, names: tuple[str, ...]) -> None:
    assert query_names(query) == names


@pytest.mark.parametrize(
    ("query", "span"),
    [
        ("What did Gina find on 1 February, 2023?", (date(2023, 2, 1), date(2023, 2, 1))),
        ("the painting shown on October 13, 2023", (date(2023, 10, 13), date(2023, 10, 13))),
        ("release of 2024-03-05", (date(2024, 3, 5), date(2024, 3, 5))),
        ("deploys in Feb 2024", (date(2024, 2, 1), date(2024, 2, 29))),
        ("what changed in December 2023", (date(2023, 12, 1), date(2023, 12, 31))),
        ("How many times did she go to the beach in 2023?", (date(2023, 1, 1), date(2023, 12, 31))),
        ("which linter do we use?", None),
        ("on 31 February, 2023", None),  # no such day
    ],
)
def test_the_dates_a_query_names_become_a_span_of_days(query: str, span: tuple[date, date] | None) -> None:
    assert date_span(query) == span


@pytest.mark.parametrize(
    ("query", "asks_when"),
    [
        ("When did the migration run?", True),
        ("what year did we move to Postgres", True),
        ("how long ago was the outage", True),
        ("which linter do we use?", False),
    ],
)
def test_when_questions_are_recognized(query: str, asks_when: bool) -> None:
    assert query_traits(query).asks_when is asks_when
