"""A seeded synthetic corpus that a lexical search engine can work with.

Words are pronounceable syllable strings. Titles are drawn uniformly from the
vocabulary (so title words are mostly rare, high-idf terms); bodies are drawn
Zipf-like over the vocabulary (a few common words, a long tail), so a query
made of an article's title words ranks that article first and also matches
the other articles that use those words.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice, product
from typing import ClassVar

import numpy as np

from kbsim.params import CorpusParams
from kbsim.store.written import WrittenArticles, content_text

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")


_SYLLABLES = tuple(onset + vowel for onset in _ONSETS for vowel in _VOWELS)


def vocabulary_word(i: int) -> str:
    """Word ``i`` of the vocabulary: the syllables of ``i``'s base-``len(_SYLLABLES)``
    digits, most significant first, with a second syllable after a number of one digit."""
    n = len(_SYLLABLES)
    digits, value = [], i
    while True:
        digits.append(_SYLLABLES[value % n])
        value //= n
        if value == 0:
            break
    if len(digits) == 1:
        digits.append(_SYLLABLES[(i * 7 + 3) % n])
    return "".join(reversed(digits))


def make_vocabulary(size: int) -> list[str]:
    """``size`` words, ``vocabulary_word(i)`` for each ``i`` in order (no randomness).

    Why not that call per word: a 100,000-article corpus has 400,000 words, which took
    0.24 s word by word and take 0.04 s here (an ad-hoc timing). The numbers of ``d``
    digits are, in order, the syllable sequences ``itertools.product`` lists (the leading
    digit from 1), so each length is one product. The tests hold it to
    :func:`vocabulary_word`.
    """
    n = len(_SYLLABLES)
    words = [_SYLLABLES[(i * 7 + 3) % n] + _SYLLABLES[i] for i in range(min(size, n))]
    length = 2
    while len(words) < size:
        numbers = product(_SYLLABLES[1:], *[_SYLLABLES] * (length - 1))
        words += map("".join, islice(numbers, size - len(words)))
        length += 1
    return words


@dataclass
class Corpus:
    """The vocabulary and the generators of titles and bodies."""

    vocabulary: list[str]
    body_weights: np.ndarray
    params: CorpusParams
    #: :meth:`rewrite` does not read the content it replaces.
    uses_old_content: ClassVar[bool] = False

    @classmethod
    def build(cls, params: CorpusParams) -> Corpus:
        size = max(params.min_vocabulary, int(params.vocabulary_per_article * params.articles))
        ranks = np.arange(1, size + 1, dtype=float)
        weights = 1.0 / ranks
        return cls(make_vocabulary(size), np.cumsum(weights / weights.sum()), params)

    def title(self, rng: np.random.Generator) -> str:
        picks = rng.choice(len(self.vocabulary), size=self.params.title_words, replace=False)
        return " ".join(self.vocabulary[i].capitalize() if j == 0 else self.vocabulary[i]
                        for j, i in enumerate(picks))

    def body(self, rng: np.random.Generator) -> str:
        return self.content_of(self.body_words(rng))

    def body_words(self, rng: np.random.Generator) -> np.ndarray:
        """The words of :meth:`body` (the same draw), unwritten: vocabulary indices."""
        picks = np.searchsorted(self.body_weights, rng.random(self.params.body_words), side="right")
        return np.minimum(picks, len(self.vocabulary) - 1)

    def content_of(self, words: np.ndarray) -> str:
        """The body ``words`` write."""
        return content_text(self.vocabulary, words.tolist())

    def rewrite(self, content: str, rng: np.random.Generator) -> str:
        """A person's new content for an article: a fresh body (the old one is not used)."""
        return self.body(rng)

    def rewrite_words(self, rng: np.random.Generator) -> np.ndarray:
        """:meth:`rewrite`'s new content (the same draw) as its words."""
        return self.body_words(rng)

    def retitle(self, title: str, rng: np.random.Generator) -> str:
        """The title with one word replaced by a new one."""
        words = title.split()
        position = int(rng.integers(len(words)))
        replacement = self.vocabulary[int(rng.integers(len(self.vocabulary)))]
        words[position] = replacement.capitalize() if position == 0 else replacement
        return " ".join(words)

    def articles(self, rng: np.random.Generator) -> list[tuple[str, str]]:
        """``params.articles`` (title, body) pairs, drawn in bulk."""
        return self.articles_and_words(rng)[0]

    def articles_and_words(self, rng: np.random.Generator) -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray]:
        """:meth:`articles`, and the vocabulary index of each of their words: an
        (articles x body words) array for the bodies and (articles x title words) for the
        titles, so that a store can index them without tokenizing (it checks that they
        are the texts' words)."""
        title_picks, body_picks = self.article_words(rng)
        written = WrittenArticles(self.vocabulary, title_picks, body_picks)
        pairs = [(title, written.content_of(i)) for i, title in enumerate(written.titles())]
        return pairs, body_picks, title_picks

    def article_words(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The words of :meth:`articles` (the same draws), unwritten: (articles x title words)
        and (articles x body words) vocabulary indices, as int32.

        The bodies' uniforms are drawn a block of rows at a time, which takes the same numbers
        from the stream in the same order as one draw of them all, in a fraction of the
        memory (a million articles' uniforms are 480 MB at once).
        """
        n, k, size = self.params.articles, self.params.title_words, len(self.vocabulary)
        title_picks = rng.integers(size, size=(n, k))
        ordered = np.sort(title_picks, axis=1)
        repeating = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        for row in repeating.tolist():  # titles repeat no word; redraw the rare row that does, in order
            while len(set(title_picks[row].tolist())) < k:
                title_picks[row] = rng.integers(size, size=k)
        width = self.params.body_words
        body_picks = np.empty((n, width), dtype=np.int32)
        rows = max(1, _DRAWN_AT_ONCE // width)
        for first in range(0, n, rows):
            uniforms = rng.random((min(rows, n - first), width))
            picks = np.searchsorted(self.body_weights, uniforms, side="right")
            body_picks[first : first + rows] = np.minimum(picks, size - 1)
        return title_picks.astype(np.int32), body_picks


#: Uniforms Corpus.article_words draws at once.
_DRAWN_AT_ONCE = 1 << 20


@dataclass
class TextCorpus:
    """Writes people's saves on a corpus of real text (a corpus from files).

    A content save rewrites one paragraph (line) of the article with a line taken from
    the corpus's own articles, or adds one to an article of a single line, as a person
    revising a step or a sentence would; a retitle replaces one title word with a word
    from the corpus's titles. A new article (``saves.replace_unpublished``) is a retitled
    title of the corpus over a few of its lines. All draw only from the day's
    ``editors`` stream.
    """

    lines: list[str]
    title_words: list[str]
    titles: list[str]
    #: :meth:`rewrite` rewrites one line of the content it replaces.
    uses_old_content: ClassVar[bool] = True

    #: Lines and title words kept from a large corpus (evenly spaced, so deterministic).
    MAX_POOL = 20_000

    @classmethod
    def from_articles(cls, titles, contents) -> TextCorpus:
        # the articles' lines but blank ones and headings (one splitting of them all: a line
        # break ends every article's last line, and the blank lines that joining adds go)
        lines = [line for line in "\n".join(contents).splitlines() if (text := line.lstrip()) and text[0] != "#"]
        words = list(dict.fromkeys(word for title in titles for word in title.split()))
        return cls(_spread(lines, cls.MAX_POOL) or ["Updated."], _spread(words, cls.MAX_POOL) or ["Updated"],
                   _spread(list(titles), cls.MAX_POOL))

    def title(self, rng: np.random.Generator) -> str:
        """A new article's title: one of the corpus's, with one word replaced."""
        return self.retitle(self.titles[int(rng.integers(len(self.titles)))], rng)

    def body(self, rng: np.random.Generator, lines: int = 4) -> str:
        """A new article's content: ``lines`` lines of the corpus's articles."""
        return "\n".join(self.lines[int(i)] for i in rng.integers(len(self.lines), size=lines))

    def rewrite(self, content: str, rng: np.random.Generator) -> str:
        lines = content.split("\n")
        replacement = self.lines[int(rng.integers(len(self.lines)))]
        candidates = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")]
        if len(candidates) >= 2:
            lines[candidates[int(rng.integers(len(candidates)))]] = replacement
        else:
            lines.append(replacement)
        return "\n".join(lines)

    def retitle(self, title: str, rng: np.random.Generator) -> str:
        """The title with one word replaced by a word of another title."""
        words = title.split() or [title]
        position = int(rng.integers(len(words)))
        words[position] = self.title_words[int(rng.integers(len(self.title_words)))]
        return " ".join(words)


def _spread(items: list[str], keep: int) -> list[str]:
    if len(items) <= keep:
        return items
    step = len(items) / keep
    return [items[int(i * step)] for i in range(keep)]
