"""What a query asks, read from its wording: the names it mentions, whether it asks "when", and the
dates it names. The ranking model (memories.search.model) weighs memories by these.

English wording only (like the full-text configuration): other languages get no names, no "when"
and no dates from here, and are ranked by meaning and words alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

# Capitalized words that are not names: question words and auxiliaries that open a question. The
# full-text configuration drops the other stop words ("The", "What", "Did") on its own.
_NOT_NAMES = frozenset(
    {"would", "could", "should", "might", "must", "shall", "can", "will", "may", "please", "tell", "list", "give"}
)
_APOSTROPHES = "'\u2019"
_WORD = re.compile(rf"[^\W\d_][\w{_APOSTROPHES}.-]*")

_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = "(" + "|".join(_MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH},? (\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH} (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH},? (\d{{4}})\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")

# A question about time: "when ...", "what year/month/day ...", "how long ago ...".
_ASKS_WHEN = re.compile(r"\bwhen\b|\bwhat (?:year|month|date|day|time)\b|\bhow long ago\b", re.IGNORECASE)

# Words by which a memory places itself in time (matched in the database, PostgreSQL's regex syntax).
STATES_TIME_PATTERN = (
    r"\m(yesterday|today|tonight|tomorrow|last|next|ago|weeks?|weekend|months?|years?|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|" + "|".join(_MONTHS) + r"|"
    r"recently|soon|since|earlier|later|(19|20)\d\d)\M"
)


@dataclass(frozen=True)
class QueryTraits:
    names: tuple[str, ...] = ()
    asks_when: bool = False
    # The dates the query names, first to last day (a day, a month or a year).
    span: tuple[date, date] | None = None


def _month(name: str) -> int:
    name = name.lower().rstrip(".")
    return next(number for number, month in enumerate(_MONTHS, start=1) if month.startswith(name[:3]))


def _day(year: int, month: int, day: int) -> tuple[date, date] | None:
    try:
        moment = date(year, month, day)
    except ValueError:
        return None
    return moment, moment


def date_span(query: str) -> tuple[date, date] | None:
    """The first date the query names, as the days it covers; None when it names none."""
    if match := _DAY_MONTH_YEAR.search(query):
        return _day(int(match.group(3)), _month(match.group(2)), int(match.group(1)))
    if match := _MONTH_DAY_YEAR.search(query):
        return _day(int(match.group(3)), _month(match.group(1)), int(match.group(2)))
    if match := _ISO_DATE.search(query):
        return _day(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    if match := _MONTH_YEAR.search(query):
        year, month = int(match.group(2)), _month(match.group(1))
        following = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
        return date(year, month, 1), following - timedelta(days=1)
    if match := _YEAR.search(query):
        year = int(match.group(1))
        return date(year, 1, 1), date(year, 12, 31)
    return None


def query_names(query: str) -> tuple[str, ...]:
    """Capitalized words of the query (minus question words): the people, products and places it names."""
    names = []
    for found in _WORD.findall(query):
        word = re.sub(rf"[{_APOSTROPHES}]s?$", "", found).rstrip(".")
        if len(word) > 1 and word[0].isupper() and word.lower() not in _NOT_NAMES and word.lower() not in _MONTHS:
            names.append(word)
    return tuple(dict.fromkeys(names))


def query_traits(query: str) -> QueryTraits:
    return QueryTraits(names=query_names(query), asks_when=bool(_ASKS_WHEN.search(query)), span=date_span(query))
