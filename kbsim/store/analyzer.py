r"""Analyzers: how a knowledge base's text becomes search terms, chosen per knowledge base.

Two kinds, the same in every backend (a knowledge base records its analyzer's
:attr:`Analyzer.name`, and both backends index and query through it):

- ``ascii`` (:data:`ASCII`, the default): :func:`kbsim.store.tokens.tokenize`, the
  lower-cased runs of ASCII letters and digits. The synthetic study and every result
  published so far use it; its terms never change.
- ``unicode``, optionally with a language (:func:`analyzer_for`): any script.

  1. NFKC normalisation and full case folding (``NFKC(casefold(NFKC(text)))``, as
     Unicode's NFKC_Casefold: full-width letters, ligatures and ``ß`` fold too);
  2. words are the runs of letters, digits and combining marks (categories L, N and M:
     a Devanagari vowel sign or virama stays inside its word, where Python's ``re``
     ``\\w`` would split it);
  3. runs of a script written without spaces (Han, Hiragana, Katakana, Thai, Lao,
     Khmer, Myanmar) become overlapping bigrams of their characters (a character with
     its combining marks), as Lucene's CJK analyzer does; a lone character is a term;
  4. with a language: that language's stop words (:mod:`kbsim.store.stopwords`) are
     dropped, then every word is stemmed by its Snowball stemmer (the ``snowballstemmer``
     package), where kbsim has them.

  On ASCII text with no language it gives exactly the ``ascii`` terms.

Why a separate object: the default path is the hottest code of a simulated day, and
stays as it was; a knowledge base that needs more pays for it alone.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from kbsim.params import CORPUS_LANGUAGES
from kbsim.store.stopwords import STOP_WORDS
from kbsim.store.tokens import tokenize

__all__ = [
    "ASCII",
    "DEFAULT_ANALYZER",
    "LANGUAGES",
    "Analyzer",
    "analyzer_for",
    "analyzer_named",
    "normalize",
]

#: Language code -> its Snowball stemmer (the ``snowballstemmer`` package's name).
_SNOWBALL = {
    "ar": "arabic", "ca": "catalan", "cs": "czech", "da": "danish", "de": "german", "el": "greek",
    "en": "english", "eo": "esperanto", "es": "spanish", "et": "estonian", "eu": "basque", "fa": "persian",
    "fi": "finnish", "fr": "french", "ga": "irish", "hi": "hindi", "hu": "hungarian", "hy": "armenian",
    "id": "indonesian", "it": "italian", "lt": "lithuanian", "ne": "nepali", "nl": "dutch", "no": "norwegian",
    "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "st": "sesotho",
    "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}
#: Every language ``corpus.language`` names -> its Snowball stemmer, or None (no stemmer:
#: segmentation and bigrams only; ``und`` is no language in particular).
LANGUAGES: dict[str, str | None] = {code: _SNOWBALL.get(code) for code in CORPUS_LANGUAGES}

#: Characters of the scripts written without spaces between words (ranges, inclusive).
_NO_SPACE_RANGES = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x19E0, 0x19FF),  # Khmer symbols
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3031, 0x3035),  # kana repeat marks
    (0x3038, 0x303C),
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana (NFKC makes them full-width)
    (0x1B000, 0x1B16F),  # Kana supplement and extended
    (0x20000, 0x323AF),  # CJK extensions B to H, compatibility supplement
)
#: A term of a stop list or a query longer than this is kept as it is, not stemmed
#: (Snowball's stemmers are linear, but a 100,000-character "word" need not be).
_STEM_CHARS = 64
#: Stems kept per analyzer (a knowledge base's vocabulary, and its queries').
_STEM_CACHE = 200_000


def normalize(text: str) -> str:
    """NFKC, full case folding, NFKC again: the text the Unicode analyzer splits."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def _class(ranges: list[tuple[int, int]]) -> str:
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


@cache
def _word_pattern() -> re.Pattern[str]:
    """Runs of a no-space script (group 1, with their marks), or of any other word
    character (letters, digits, marks: group 2). Built once from :mod:`unicodedata`."""
    no_space = [False] * 0x110000
    for low, high in _NO_SPACE_RANGES:
        no_space[low : high + 1] = [True] * (high - low + 1)
    spaced: list[tuple[int, int]] = []
    unspaced: list[tuple[int, int]] = []
    marks: list[tuple[int, int]] = []
    category = unicodedata.category
    for code in range(0x110000):
        kind = category(chr(code))[0]
        if kind not in "LNM":
            continue
        target = unspaced if no_space[code] else spaced
        if kind == "M":
            target = marks if not no_space[code] else unspaced
        if target and target[-1][1] == code - 1:
            target[-1] = (target[-1][0], code)
        else:
            target.append((code, code))
    base = _class(unspaced)
    word = _class(spaced) + _class(marks)
    return re.compile(f"((?:[{base}][{_class(marks)}]*)+)|([{word}]+)")


def _bigrams(run: str) -> list[str]:
    """Overlapping bigrams of a no-space run's characters (each with the combining marks
    that follow it); a run of one character is that character."""
    category = unicodedata.category
    chars: list[str] = []
    for char in run:
        if chars and category(char)[0] == "M":
            chars[-1] += char
        else:
            chars.append(char)
    if len(chars) < 2:
        return chars
    return [a + b for a, b in zip(chars, chars[1:], strict=False)]


@dataclass(frozen=True, eq=False)
class Analyzer:
    """How text becomes terms: :meth:`tokenize`, and the :attr:`name` a store records.

    Build one with :func:`analyzer_for` (or :func:`analyzer_named` from a name); the
    default is :data:`ASCII`.
    """

    #: ``ascii``, ``unicode`` or ``unicode:<language>`` (a language with a stemmer or stop words)
    name: str
    #: the language whose stop words and stemmer apply, or None
    language: str | None = None
    tokenize: Callable[[str], list[str]] = field(default=tokenize, repr=False)

    def __repr__(self) -> str:
        return f"Analyzer({self.name!r})"

    @property
    def is_default(self) -> bool:
        """Whether this is the ``ascii`` analyzer (today's terms)."""
        return self.name == ASCII.name


#: kbsim's default analyzer: :func:`kbsim.store.tokens.tokenize`.
ASCII = Analyzer("ascii")
DEFAULT_ANALYZER = ASCII


def _unicode_tokenizer(stop_words: frozenset[str], stem: Callable[[str], str] | None) -> Callable[[str], list[str]]:
    def tokenize_unicode(text: str) -> list[str]:
        folded = normalize(text)
        if folded.isascii():
            terms = tokenize(folded)
        else:
            terms = []
            for match in _word_pattern().finditer(folded):
                run = match.group(1)
                if run is None:
                    terms.append(match.group(2))
                else:
                    terms += _bigrams(run)
        if stop_words:
            terms = [term for term in terms if term not in stop_words]
        if stem is not None:
            terms = list(map(stem, terms))
        return terms

    return tokenize_unicode


def _stemmer(algorithm: str) -> Callable[[str], str]:
    """The Snowball stemmer's ``stemWord``, cached per word."""
    import snowballstemmer

    stem_word = snowballstemmer.stemmer(algorithm).stemWord
    stems: dict[str, str] = {}

    def stem(word: str) -> str:
        found = stems.get(word)
        if found is None:
            if len(word) > _STEM_CHARS:
                return word
            if len(stems) >= _STEM_CACHE:
                stems.clear()
            found = stems[word] = stem_word(word)
        return found

    return stem


def analyzer_for(kind: str = "ascii", language: str | None = None) -> Analyzer:
    """The analyzer of ``kind`` (``ascii`` or ``unicode``) for ``language`` (a code of
    :data:`LANGUAGES`, or None).

    ``unicode`` with a language kbsim has neither a stemmer nor stop words for (``ja``,
    ``zh``, ``und``, ...) is plain ``unicode``: the name says what the terms are.

    Raises:
        ValueError: an unknown kind or language, or ``ascii`` with a language.
    """
    return _analyzer(kind, language)


@cache
def _analyzer(kind: str, language: str | None) -> Analyzer:
    if kind not in ("ascii", "unicode"):
        raise ValueError(f"analyzer must be 'ascii' or 'unicode', got {kind!r}")
    if language is not None and language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(sorted(LANGUAGES))}, got {language!r}")
    if kind == "ascii":
        if language is not None:
            raise ValueError(f"the ascii analyzer has no language (got {language!r}); use the unicode analyzer")
        return ASCII
    algorithm = LANGUAGES.get(language) if language else None
    stop_words = frozenset(normalize(word) for word in STOP_WORDS.get(language or "", ()))
    if algorithm is None and not stop_words:
        if language is not None:
            return _analyzer("unicode", None)
        return Analyzer("unicode", None, _unicode_tokenizer(frozenset(), None))
    stem = None if algorithm is None else _stemmer(algorithm)
    return Analyzer(f"unicode:{language}", language, _unicode_tokenizer(stop_words, stem))


def analyzer_named(name: str) -> Analyzer:
    """The analyzer whose :attr:`Analyzer.name` is ``name`` (what a store recorded).

    Raises:
        ValueError: a name no analyzer has.
    """
    kind, _, language = name.partition(":")
    try:
        analyzer = analyzer_for(kind, language or None)
    except ValueError as exc:
        raise ValueError(f"unknown analyzer {name!r}: {exc}") from None
    if analyzer.name != name:
        raise ValueError(f"unknown analyzer {name!r} (that language's terms are {analyzer.name!r}'s)")
    return analyzer
