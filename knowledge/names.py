"""The names a text mentions, found deterministically (no model, no network): what links a memory to
the entities of its organization (knowledge.mentions).

Three kinds, each kept under its key (memories.search.words.name_key: words case folded, punctuation
at their edges dropped), as first written:

- ``alias``: a name or alias of one of the organization's entities, in any case ("kube", "payments
  service"), longest first;
- ``identifier``: what only code and systems are called: ``snake_case``, ``dotted.names``,
  ``CamelCase``, words with digits (``k8s``, ``OAuth2``), acronyms (``PR``, ``SLA``) and anything in
  backticks;
- ``name``: a run of capitalized words, up to five ("Alice", "Payments Team", "Google Cloud"); at the
  start of a sentence, where a capital says nothing, only a word that is not an English word (by
  Webster's word list, from the ``english-words`` package: "Redis is the cache" names Redis, "Use
  the cache" names nothing) or that the text capitalizes elsewhere too; days, months and the like
  are not names.
"""

from __future__ import annotations

import bisect
import functools
import re
from array import array
from collections.abc import Collection
from dataclasses import dataclass

from memories.search.words import NAME_WORDS_MAX, name_key, name_words, word_key

# At most this many names a text; a longer text keeps the first ones it mentions.
MENTIONS_MAX = 50
NAME_CHARS_MAX = 200

ALIAS, IDENTIFIER, NAME = "alias", "identifier", "name"

_BACKTICKED = re.compile(r"`([^`\n]{1,80})`")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.'\u2019+#-]*[A-Za-z0-9+#]|[A-Za-z0-9]")
_STOPS = ".!?:;"
_CLOSING = "'\"\u201d\u2019)]"
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_DIGITS_AND_LETTERS = re.compile(r"^(?=.*[A-Za-z])(?=.*\d)[A-Za-z\d]+$")
_ACRONYM = re.compile(r"^[A-Z]{2,6}s?$")
_QUANTITY = re.compile(r"^\d+(?:st|nd|rd|th|s|am|pm|k|m|gb|mb|kb|ms|h|x)?$", re.IGNORECASE)
_POSSESSIVE = ("'s", "\u2019s")

# Capitalized for reasons other than naming something.
_NOT_NAMES_TEXT = """i i'm i've i'll i'd a an the this that these those it its we our us you your he she they them
    their his her my me mine if when while where what which who whom whose why how then than there
    here and or but so yes no not all any each every some many most more also just only please
    thanks thank hi hello hey ok okay oh wow well sure great good nice yeah hmm
    monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday
    january february march april may june july august september october november december
    mr mrs ms dr"""
_NOT_NAMES = frozenset(_NOT_NAMES_TEXT.split())
# Acronyms that are words of a sentence, not names of things.
_NOT_ACRONYMS = frozenset({"ok", "am", "pm", "id", "ids", "eg", "ie", "etc", "tbd", "fyi", "asap", "btw", "lol"})


@dataclass(frozen=True)
class Mentioned:
    key: str  # name_key of the name
    written: str  # the name as the text first writes it
    kind: str  # ALIAS, IDENTIFIER or NAME


def _ends_sentence(between: str) -> bool:
    """Whether what lies between two words ends a sentence ("." or "?", maybe with a quote after it)."""
    if between == " ":
        return False
    last = between.rstrip().rstrip(_CLOSING)[-1:]
    return last != "" and last in _STOPS


def _identifier(word: str) -> bool:
    if word.isalpha() and (word.islower() or word[1:].islower()):
        return False  # a word as words are written (most of them)
    core = word.strip(".'\u2019-")
    if not core or core.casefold() in _NOT_ACRONYMS:
        return False
    if "_" in core and any(c.isalpha() for c in core):
        return True  # snake_case, SCREAMING_CASE
    if _DOTTED.match(core) or _CAMEL.search(core) or _ACRONYM.match(core):
        return True
    # Letters with digits (k8s, OAuth2, S3), but not a quantity or an ordinal (3rd, 10am, 5k, 1990s).
    return bool(_DIGITS_AND_LETTERS.match(core)) and not _QUANTITY.match(core)


def _capitalized_camel(word: str) -> bool:
    """A product's name in CamelCase ("GitHub", "PostgreSQL") or an acronym ("CD"): a name's word,
    joining a run of them."""
    return word.isalpha() and word[:1].isupper() and word.casefold() not in _NOT_ACRONYMS


def _capitalized(word: str) -> bool:
    return word[:1].isupper() and word.casefold().strip("'\u2019") not in _NOT_NAMES


_INFLECTIONS = (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"), ("ly", ""))


class WordList:
    """A sorted word list kept as one string and the offsets of its words: 3 MB where a set of the
    same 210,000 words holds 24 MB in every process that writes."""

    def __init__(self, words: Collection[str]) -> None:
        self._text = "\n".join(sorted(words))
        self._starts = array("I", [0])
        self._starts.extend(match.end() for match in re.finditer("\n", self._text))

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        index = bisect.bisect_left(self, word)
        return index < len(self) and self[index] == word

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, index: int) -> str:
        start = self._starts[index]
        end = self._starts[index + 1] - 1 if index + 1 < len(self._starts) else len(self._text)
        return self._text[start:end]


@functools.cache
def _english_words() -> WordList:
    """Webster's words written in lower case (read once a process, about 0.2 s)."""
    from english_words import get_english_words_set

    return WordList([w for w in get_english_words_set(["web2"], lower=False, alpha=True) if w.islower()])


@functools.lru_cache(maxsize=16384)  # the words that open sentences repeat: each looked up once
def _english(word: str) -> bool:
    """Whether ``word`` is an English word, or one inflected (the list has no plurals or tenses)."""
    lower, known = word.casefold(), _english_words()
    if lower in known:
        return True
    for ending, stem in _INFLECTIONS:
        if lower.endswith(ending) and len(lower) > len(ending) + 2 and lower[: -len(ending)] + stem in known:
            return True
    return False


def names_in(text: str, aliases: Collection[str] = frozenset()) -> list[Mentioned]:
    """The names ``text`` mentions, in the order it first mentions them; ``aliases``: the keys of the
    organization's entity names and aliases (knowledge.words)."""
    found: dict[str, tuple[int, Mentioned]] = {}  # key -> where first written, the name

    def keep(start: int, written: str, kind: str) -> None:
        written = written.strip()[:NAME_CHARS_MAX]
        key = name_key(written)
        if key and (key not in found or start < found[key][0]):
            found[key] = (start, Mentioned(key, written, kind))

    for match in _BACKTICKED.finditer(text):
        keep(match.start(), match.group(1), IDENTIFIER)
    words = _words(text)
    covered: set[int] = set()  # words of an alias, nothing else
    if aliases:
        for start, end in _alias_spans([word_key(w[0]) for w in words], aliases):
            keep(words[start][1], text[words[start][1] : words[end - 1][2]], ALIAS)
            covered.update(range(start, end))
    for run in _runs(text, words, covered):
        first, last = words[run[0]], words[run[-1]]
        if len(run) == 1 and not _capitalized_camel(first[0]) and _identifier(first[0]):
            keep(first[1], first[0].strip(".'\u2019-"), IDENTIFIER)
        else:
            lone_acronym = len(run) == 1 and _ACRONYM.match(first[0])
            keep(first[1], text[first[1] : last[2]], IDENTIFIER if lone_acronym else NAME)
    return [mentioned for _, mentioned in sorted(found.values(), key=lambda item: item[0])][:MENTIONS_MAX]


def _runs(text: str, words: list[tuple[str, int, int]], covered: set[int]) -> list[list[int]]:
    """The words that name something, as runs of neighbours (a run of one may be an identifier).

    Words as words are written (lower case letters) are most of a text and name nothing: only the
    others are looked at."""
    candidates: list[tuple[int, bool]] = []  # (index, starts a sentence)
    for i, (word, start, _) in enumerate(words):
        if i in covered or (word.isalpha() and word.islower()):
            continue
        candidates.append((i, i == 0 or _ends_sentence(text[words[i - 1][2] : start])))
    capitalized_inside = {word_key(words[i][0]) for i, opens in candidates if not opens and _capitalized(words[i][0])}
    runs: list[list[int]] = []
    run: list[int] = []
    for i, opens in candidates:
        word = words[i][0]
        if _identifier(word) and not _capitalized_camel(word):
            runs += [run, [i]] if run else [[i]]
            run = []
            continue
        named = _capitalized(word) and (not opens or word_key(word) in capitalized_inside or not _english(word))
        named = named or bool(_ACRONYM.match(word))  # "Argo CD", "AWS Lambda"; alone, an identifier
        if not named:
            if run:
                runs.append(run)
            run = []
            continue
        joins = run and run[-1] == i - 1 and not opens and len(run) < NAME_WORDS_MAX
        if joins and not _gap(text, words[i - 1][2], words[i][1]):
            run.append(i)
        else:
            if run:
                runs.append(run)
            run = [i]
    if run:
        runs.append(run)
    return runs


def _alias_spans(keys: list[str], aliases: Collection[str]) -> list[tuple[int, int]]:
    """Where runs of words are aliases (start, end), left to right, the longest at each start."""
    sizes = _sizes_by_first_word(aliases)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(keys):
        for size in sizes.get(keys[i], ()):
            if " ".join(keys[i : i + size]) in aliases:
                spans.append((i, i + size))
                i += size
                break
        else:
            i += 1
    return spans


_sizes_kept: list[tuple[Collection[str], dict[str, tuple[int, ...]]]] = []


def _sizes_by_first_word(aliases: Collection[str]) -> dict[str, tuple[int, ...]]:
    """Each alias's first word -> the lengths (in words) of the aliases it starts, longest first; kept
    for the last collection asked about (an organization's, read once a minute by knowledge.words)."""
    kept = _sizes_kept[-1] if _sizes_kept else None
    if kept is not None and kept[0] is aliases:
        return kept[1]
    sizes: dict[str, set[int]] = {}
    for key in aliases:
        words = key.split(" ")
        sizes.setdefault(words[0], set()).add(len(words))
    index = {first: tuple(sorted(lengths, reverse=True)) for first, lengths in sizes.items()}
    _sizes_kept[:] = [(aliases, index)]
    return index


def _words(text: str) -> list[tuple[str, int, int]]:
    """(word, start, end) of each word, without its possessive ("Caroline's" is Caroline)."""
    words = []
    for match in _WORD.finditer(text):
        word, (start, end) = match.group(), match.span()
        if len(word) > 2 and word.endswith(_POSSESSIVE):
            word, end = word[:-2], end - 2
        words.append((word, start, end))
    return words


def _gap(text: str, end: int, start: int) -> bool:
    """Whether what lies between two words breaks a name (anything but a space)."""
    return text[end:start].strip() != ""


def query_names(query: str, aliases: Collection[str]) -> list[str]:
    """The keys of the names a query mentions: its names as a text's, and every word run that is an
    alias (a query's capitals say little: "who owns the payments service?")."""
    keys = [m.key for m in names_in(query, aliases)]
    words = name_words(query)
    for size in range(min(NAME_WORDS_MAX, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            key = " ".join(words[start : start + size])
            if key in aliases and key not in keys:
                keys.append(key)
    return keys
