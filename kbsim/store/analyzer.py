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

  On ASCII text with no language it gives exactly the ``ascii`` terms. Turkish and
  Azerbaijani fold ``I``/``İ`` as those languages do (``ı``/``i``); every other language
  folds ``İ`` to ``i`` (case folding's ``i`` + combining dot above loses its dot). German,
  Dutch, Danish, Norwegian and Swedish split a query's compound words against the
  knowledge base's own terms (:meth:`Analyzer.query_terms`), as Lucene's
  ``DictionaryCompoundWordTokenFilter`` does with a dictionary.
- ``auto`` (:func:`auto_analyzer`): chosen from a corpus's text. Each article's
  languages come from its scripts (Devanagari: Hindi, Cyrillic: Russian, ...) and, for
  Latin script, from its stop words (:func:`detect_latin`). A corpus of one language is
  given that language's analyzer (English, as every result so far searched it, the
  ``ascii`` one when its text is ASCII); a corpus of several is given
  ``auto:<languages>``, which analyses each text (an article's title or content, a query)
  word by word in its script's language among those, a Latin text in the language its
  stop words say (and in each of them when they do not tell). English stays unstemmed.

Why a separate object: the default path is the hottest code of a simulated day, and
stays as it was; a knowledge base that needs more pays for it alone.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from itertools import chain

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
    "DETECTED_LATIN",
    "auto_analyzer",
    "detect_latin",
    "normalize",
    "text_languages",
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


#: Languages whose case folding maps ``I`` to dotless ``ı`` and ``İ`` to ``i``.
_TURKIC = frozenset(("tr", "az"))
_TURKIC_CASE = str.maketrans({"I": "ı", "İ": "i"})
#: Languages whose queries' compound words are split against the index's terms.
_COMPOUNDING = frozenset(("de", "nl", "da", "no", "sv"))
#: Linking elements a compound may put between its parts (German ``Urlaub-s-tage``,
#: Dutch ``boek-en-kast``, Swedish ``arbet-s-dag``).
_LINKS = ("s", "es", "e", "n", "en")
#: Shortest part a compound is split into, and the longest word split (Lucene's
#: DictionaryCompoundWordTokenFilter: minSubwordSize 2, here 3 to keep ``tag`` but not ``ab``).
_MIN_PART, _MAX_SPLIT_CHARS = 3, 40


def normalize(text: str, language: str | None = None) -> str:
    """NFKC, full case folding, NFKC again: the text the Unicode analyzer splits.

    Turkish and Azerbaijani (``language`` ``tr``, ``az``) fold ``I`` to ``ı`` and ``İ`` to
    ``i``; any other language folds ``İ`` to ``i`` too (case folding gives ``i`` and a
    combining dot above, U+0307, which no ``i`` in a text has).
    """
    if language in _TURKIC:
        text = unicodedata.normalize("NFKC", text).translate(_TURKIC_CASE)
    elif text.isascii():
        return text.lower()
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return folded.replace("i\u0307", "i") if "\u0307" in folded else folded


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


#: Whether the index has a term (with a document): what a query's compounds split against.
Known = Callable[[str], bool]


@dataclass(frozen=True, eq=False)
class Analyzer:
    """How text becomes terms: :meth:`tokenize`, and the :attr:`name` a store records.

    Build one with :func:`analyzer_for` (or :func:`analyzer_named` from a name, or
    :func:`auto_analyzer` from a corpus's text); the default is :data:`ASCII`.
    """

    #: ``ascii``, ``unicode``, ``unicode:<language>`` (a language with a stemmer or stop
    #: words) or ``auto:<languages>`` (several, comma-separated)
    name: str
    #: the language whose stop words and stemmer apply, or None
    language: str | None = None
    tokenize: Callable[[str], list[str]] = field(default=tokenize, repr=False)
    #: a query's terms given the index's (:meth:`query_terms`), or None: :attr:`tokenize`
    split_query: Callable[[str, Known], list[str]] | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return f"Analyzer({self.name!r})"

    @property
    def is_default(self) -> bool:
        """Whether this is the ``ascii`` analyzer (today's terms)."""
        return self.name == ASCII.name

    @property
    def splits_compounds(self) -> bool:
        """Whether a query's terms depend on the index's (:meth:`query_terms`)."""
        return self.split_query is not None

    def query_terms(self, query: str, known: Known) -> list[str]:
        """A query's terms: :attr:`tokenize`'s, and, in a language that writes compound
        words (German, Dutch, Danish, Norwegian, Swedish), after each word the index does
        not have (``known(term)`` false), the parts it splits into that the index has.

        A word is split into the fewest parts, each at least three letters and an index
        term once stemmed, with a linking ``s``, ``es``, ``e``, ``n`` or ``en`` allowed
        between two parts: ``Reisekostenabrechnung`` finds the articles that say
        ``Reisekosten`` and ``Abrechnung``. The vocabulary is the knowledge base's own, as
        Lucene's ``DictionaryCompoundWordTokenFilter`` takes a dictionary; words the index
        has are never split, so a query that found its articles finds them as before.
        """
        if self.split_query is None:
            return self.tokenize(query)
        return self.split_query(query, known)


#: kbsim's default analyzer: :func:`kbsim.store.tokens.tokenize`.
ASCII = Analyzer("ascii")
DEFAULT_ANALYZER = ASCII


def _segments(folded: str) -> list[tuple[str, bool]]:
    """A folded text's terms before stop words and stemming: ``(term, is_word)``, a word
    of a spaced script, or a bigram (or lone character) of a no-space one."""
    if folded.isascii():
        return [(term, True) for term in tokenize(folded)]
    out: list[tuple[str, bool]] = []
    for match in _word_pattern().finditer(folded):
        run = match.group(1)
        if run is None:
            out.append((match.group(2), True))
        else:
            out += [(bigram, False) for bigram in _bigrams(run)]
    return out


@dataclass(frozen=True, eq=False)
class _Words:
    """How one language analyses a word: its stop words, its stemmer, and whether a
    query's compound words split."""

    stop_words: frozenset[str]
    stem: Callable[[str], str] | None
    compounds: bool

    def terms(self, word: str, known: Known | None = None) -> list[str]:
        """The word's terms: none for a stop word, else its stem, and, when ``known`` is
        given and the stem is no index term, the stems of the parts it splits into."""
        if word in self.stop_words:
            return []
        term = word if self.stem is None else self.stem(word)
        if known is None or not self.compounds or known(term):
            return [term]
        return [term, *(self.split(word, known) or ())]

    def split(self, word: str, known: Known) -> list[str] | None:
        """The stems of the fewest parts ``word`` splits into that ``known`` has (two at
        least; longer first parts win a tie), or None (:meth:`Analyzer.query_terms`)."""
        n = len(word)
        if n < 2 * _MIN_PART or n > _MAX_SPLIT_CHARS:
            return None
        stop_words, stem = self.stop_words, self.stem or (lambda part: part)
        # best[i]: the fewest parts' stems covering word[i:] (best[n]: nothing left)
        best: list[list[str] | None] = [None] * (n + 1)
        best[n] = []
        for i in range(n - _MIN_PART, -1, -1):
            for j in range(n, i + _MIN_PART - 1, -1):
                part = word[i:j]
                if i == 0 and j == n or part in stop_words:
                    continue
                ends = [j] + [j + len(link) for link in _LINKS if j + len(link) < n and word.startswith(link, j)]
                rests = [rest for k in ends if (rest := best[k]) is not None]
                if not rests:
                    continue
                rest, current = min(rests, key=len), best[i]
                if current is not None and len(current) <= 1 + len(rest):
                    continue
                term = stem(part)
                if known(term):
                    best[i] = [term, *rest]
        return best[0]


@cache
def _words(language: str | None) -> _Words:
    """How ``language`` analyses a word (no language, or English under ``auto``: as it is)."""
    algorithm = LANGUAGES.get(language) if language else None
    stop_words = frozenset(normalize(word, language) for word in STOP_WORDS.get(language or "", ()))
    stem = None if algorithm is None else _stemmer(algorithm)
    return _Words(stop_words, stem, language in _COMPOUNDING)


def _unicode_tokenizer(
    language: str | None,
) -> tuple[Callable[[str], list[str]], Callable[[str, Known], list[str]] | None]:
    """The tokenizer of ``unicode`` for ``language``, and its query splitter (None for a
    language that writes no compound words)."""
    words = _words(language)
    stop_words, stem = words.stop_words, words.stem

    def tokenize_unicode(text: str) -> list[str]:
        folded = normalize(text, language)
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

    if not words.compounds:
        return tokenize_unicode, None

    def split_query(query: str, known: Known) -> list[str]:
        terms: list[str] = []
        for term, is_word in _segments(normalize(query, language)):
            if not is_word:  # a bigram is stemmed as tokenize_unicode stems it, never split
                if term not in stop_words:
                    terms.append(term if stem is None else stem(term))
                continue
            terms += words.terms(term, known)
        return terms

    return tokenize_unicode, split_query


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
    ``zh``, ``und``, ...) is plain ``unicode``: the name says what the terms are. Turkish
    and Azerbaijani fold case their own way even so (``unicode:az``).

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
    if algorithm is None and not STOP_WORDS.get(language or "") and language not in _TURKIC:
        if language is not None:
            return _analyzer("unicode", None)
        return Analyzer("unicode", None, _unicode_tokenizer(None)[0])
    tokenize_unicode, split_query = _unicode_tokenizer(language)
    return Analyzer(f"unicode:{language}", language, tokenize_unicode, split_query)


# -- auto: the analyzer a corpus's own text calls for ---------------------------------------------

#: Latin-script languages whose text :func:`detect_latin` tells apart (those with stop lists).
DETECTED_LATIN = ("de", "en", "es", "fr", "it", "nl", "pt")
#: Letters that only one of them writes (a word with one counts as one of its stop words).
_OWN_LETTERS = {"de": frozenset("äöüß"), "es": frozenset("ñ¿¡"), "fr": frozenset("èêëçœ"), "pt": frozenset("ãõ"),
                "it": frozenset("ìò")}
#: Script -> the language ``auto`` takes its words for (Latin: :func:`detect_latin`).
_SCRIPT_LANGUAGE = {"devanagari": "hi", "cyrillic": "ru", "greek": "el", "arabic": "ar", "hebrew": "he",
                    "armenian": "hy", "tamil": "ta", "hangul": "ko"}
#: Script of each language that is not written in Latin letters.
_LANGUAGE_SCRIPT = {"hi": "devanagari", "ne": "devanagari", "ru": "cyrillic", "uk": "cyrillic", "el": "greek",
                    "ar": "arabic", "fa": "arabic", "he": "hebrew", "yi": "hebrew", "hy": "armenian", "ta": "tamil",
                    "ko": "hangul", "ja": "cjk", "zh": "cjk", "th": "other", "lo": "other", "km": "other",
                    "my": "other"}
#: (first code point, last, script) of the scripts ``auto`` tells apart, in order.
_SCRIPT_RANGES = (
    (0x0041, 0x024F, "latin"), (0x0370, 0x03FF, "greek"), (0x0400, 0x052F, "cyrillic"),
    (0x0530, 0x058F, "armenian"), (0x0590, 0x05FF, "hebrew"), (0x0600, 0x06FF, "arabic"),
    (0x0750, 0x077F, "arabic"), (0x08A0, 0x08FF, "arabic"), (0x0900, 0x097F, "devanagari"),
    (0x0B80, 0x0BFF, "tamil"), (0x1100, 0x11FF, "hangul"), (0x1E00, 0x1EFF, "latin"),
    (0x1F00, 0x1FFF, "greek"), (0x2C60, 0x2C7F, "latin"), (0x3130, 0x318F, "hangul"),
    (0xA720, 0xA7FF, "latin"), (0xAC00, 0xD7AF, "hangul"), (0xFB50, 0xFDFF, "arabic"),
    (0xFE70, 0xFEFF, "arabic"),
)
_SCRIPT_STARTS = [low for low, _, _ in _SCRIPT_RANGES]
#: A language is one of a corpus's when at least this share of its articles is in it (an
#: English knowledge base that quotes a German phrase stays English), and at least one.
_CORPUS_SHARE = 0.02
#: Articles :func:`auto_analyzer` reads at most (about: at an even stride).
_READ_ARTICLES = 4000


def _script(word: str) -> str:
    """The script of a word's first letter (``common``: a word of digits)."""
    for char in word:
        if char.isalpha():
            code = ord(char)
            at = bisect_right(_SCRIPT_STARTS, code) - 1
            if at >= 0 and code <= _SCRIPT_RANGES[at][1]:
                return _SCRIPT_RANGES[at][2]
            return "other"
    return "common"


def detect_latin(words: Iterable[str], among: Iterable[str] = DETECTED_LATIN) -> str | None:
    """The language among ``among`` (codes of :data:`DETECTED_LATIN`) that folded Latin
    ``words`` are written in, by their stop words (and letters only one of them writes),
    or None when none has more than the others.

    Why stop words, not a detector library: they tell an article's language apart with
    no model to load, exactly and the same on every machine, from the lists the analyzers
    already hold. A query of two content words gives no such evidence, and no detector
    decides it reliably either; :func:`auto_analyzer`'s analyzer then searches it in
    each language the knowledge base holds.
    """
    among = tuple(among)
    scores = dict.fromkeys(among, 0)
    stop_index = _stop_index()
    for word, n in Counter(words).items():
        codes = stop_index.get(word)
        if codes is not None:
            for code in codes:
                if code in scores:
                    scores[code] += n
        elif not word.isascii():
            for code, letters in _OWN_LETTERS.items():
                if code in scores and not letters.isdisjoint(word):
                    scores[code] += n
    ranked = sorted(scores.values(), reverse=True)
    if not ranked or ranked[0] == 0 or (len(ranked) > 1 and ranked[1] == ranked[0]):
        return None
    return max(scores, key=scores.__getitem__)


@cache
def _stop_index() -> dict[str, tuple[str, ...]]:
    """Each stop word of :data:`DETECTED_LATIN`'s languages -> the languages it is one of."""
    index: dict[str, tuple[str, ...]] = {}
    for code in DETECTED_LATIN:
        for word in _words(code).stop_words:
            index[word] = (*index.get(word, ()), code)
    return index


def text_languages(text: str) -> list[str]:
    """The languages a text is written in, by script (each script with at least a tenth
    of its words, and two), and for Latin script by :func:`detect_latin`; Han and Kana
    are Japanese when the text has Kana, else Chinese."""
    folded = normalize(text)
    if folded.isascii():  # Latin (or digits) alone
        words = tokenize(folded)
        language = detect_latin(words) if len(words) >= 2 else None
        return [] if language is None else [language]
    by_script: dict[str, list[str]] = {}
    kana = False
    for term, is_word in _segments(folded):
        if is_word:
            by_script.setdefault(_script(term), []).append(term)
        else:
            by_script.setdefault("cjk", []).append(term)
            kana = kana or any(0x3040 <= ord(char) <= 0x30FF for char in term)
    total = sum(map(len, by_script.values()))
    found = []
    for script, terms in by_script.items():
        if len(terms) < 2 or 10 * len(terms) < total:
            continue
        if script == "latin":
            language = detect_latin(terms)
        elif script == "cjk":
            language = "ja" if kana else "zh"
        else:
            language = _SCRIPT_LANGUAGE.get(script)
        if language is not None:
            found.append(language)
    return sorted(found)


def auto_analyzer(articles: Iterable[tuple[str, str]]) -> Analyzer:
    """The analyzer ``auto`` gives a corpus of ``(title, content)`` articles.

    Each article's languages are :func:`text_languages` of its title and content (of about
    4,000 articles at an even stride, in a larger corpus); a language counts when at least
    2% of the articles (and one) are written in it. Then:

    - English alone (or with languages kbsim neither stems nor stops, as Japanese):
      :data:`ASCII` when all the text is ASCII, else plain ``unicode``: English is
      searched as kbsim has always searched it, unstemmed, so an English corpus ranks
      exactly as before;
    - one other language with a stemmer or stop words: ``unicode:<language>``, as
      ``corpus.language`` would give;
    - several: ``auto:<languages>`` (:func:`analyzer_named` rebuilds it from its name).
    """
    articles = list(articles)
    ascii_only = all(title.isascii() and content.isascii() for title, content in articles)
    # a large corpus is read at an even stride (every article up to _READ_ARTICLES): a share
    # of 2% shows in a sample of thousands as in the whole
    read = articles[:: max(1, len(articles) // _READ_ARTICLES)]
    n = len(read)
    counts: dict[str, int] = {}
    for title, content in read:
        for language in text_languages(f"{title}\n{content}"):
            counts[language] = counts.get(language, 0) + 1
    languages = sorted(code for code, count in counts.items() if count >= max(1.0, _CORPUS_SHARE * n))
    analysed = [code for code in languages if code == "en" or analyzer_for("unicode", code).language]
    if not analysed or analysed == ["en"]:
        return ASCII if ascii_only else analyzer_for("unicode")
    if len(analysed) == 1:
        return analyzer_for("unicode", analysed[0])
    return _auto(tuple(analysed))


@cache
def _auto(languages: tuple[str, ...]) -> Analyzer:
    """``auto:<languages>``: each word in its script's language among ``languages``, a
    Latin text's in the one :func:`detect_latin` finds among theirs (in each when it finds
    none); English unstemmed, words of any other script as they are."""
    by_script: dict[str, tuple[str, ...]] = {}
    for code in languages:
        script = _LANGUAGE_SCRIPT.get(code, "latin")
        by_script[script] = (*by_script.get(script, ()), code)
    analysis = {code: (_words(None) if code == "en" else _words(code)) for code in languages}
    latin = by_script.get("latin", ())
    splits = any(analysis[code].compounds for code in languages)

    def terms(text: str, known: Known | None) -> list[str]:
        segments = _segments(normalize(text))
        chosen = latin
        if len(latin) > 1:
            found = detect_latin((term for term, is_word in segments if is_word and _script(term) == "latin"), latin)
            chosen = latin if found is None else (found,)
        out: list[str] = []
        for term, is_word in segments:
            script = _script(term) if is_word else "cjk"
            codes = chosen if script in ("latin", "common") else by_script.get(script, ())
            if not is_word or not codes:
                out.append(term)
            elif len(codes) == 1:
                out += analysis[codes[0]].terms(term, known)
            else:  # a text that does not tell: the word in each language (each term once)
                out += dict.fromkeys(chain.from_iterable(analysis[code].terms(term, known) for code in codes))
        return out

    def tokenize_auto(text: str) -> list[str]:
        return terms(text, None)

    return Analyzer(f"auto:{','.join(languages)}", None, tokenize_auto, terms if splits else None)


def analyzer_named(name: str) -> Analyzer:
    """The analyzer whose :attr:`Analyzer.name` is ``name`` (what a store recorded).

    Raises:
        ValueError: a name no analyzer has.
    """
    kind, _, language = name.partition(":")
    if kind == "auto":
        codes = tuple(language.split(","))
        if len(codes) < 2 or list(codes) != sorted(set(codes)) or any(
                code != "en" and not (code in LANGUAGES and analyzer_for("unicode", code).language) for code in codes):
            raise ValueError(f"unknown analyzer {name!r}: auto names two or more languages kbsim analyses, "
                             "sorted, comma-separated")
        return _auto(codes)
    try:
        analyzer = analyzer_for(kind, language or None)
    except ValueError as exc:
        raise ValueError(f"unknown analyzer {name!r}: {exc}") from None
    if analyzer.name != name:
        raise ValueError(f"unknown analyzer {name!r} (that language's terms are {analyzer.name!r}'s)")
    return analyzer
