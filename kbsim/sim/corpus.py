"""A seeded synthetic corpus that a lexical search engine can work with.

Words are pronounceable syllable strings. Titles are drawn uniformly from the
vocabulary (so title words are mostly rare, high-idf terms); bodies are drawn
Zipf-like over the vocabulary (a few common words, a long tail), so a query
made of an article's title words ranks that article first and also matches
the other articles that use those words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice, product
from typing import ClassVar

import numpy as np

from kbsim.params import CorpusParams
from kbsim.store.stopwords import STOP_WORDS
from kbsim.store.vocabulary import PackedVocabulary
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
    return list(_vocabulary_words(size))


def _vocabulary_words(size: int) -> Iterator[str]:
    """:func:`make_vocabulary`'s words, one after another."""
    n = len(_SYLLABLES)
    yield from (_SYLLABLES[(i * 7 + 3) % n] + _SYLLABLES[i] for i in range(min(size, n)))
    made, length = min(size, n), 2
    while made < size:
        numbers = product(_SYLLABLES[1:], *[_SYLLABLES] * (length - 1))
        yield from map("".join, islice(numbers, size - made))
        made = min(size, made + (n - 1) * n ** (length - 1))
        length += 1


#: A vocabulary of this many words or more is packed (:class:`PackedVocabulary`): the list
#: of a 4,000,000-word vocabulary's strings took 245 MB beside the 1,000,000-article day.
PACKED_VOCABULARY_FROM = 100_000


def packed_vocabulary(size: int) -> PackedVocabulary:
    """:func:`make_vocabulary`'s words, packed: rows as wide as the longest word and a space."""
    n, digits = len(_SYLLABLES), 2
    while n**digits < size:
        digits += 1
    return PackedVocabulary.from_words(_vocabulary_words(size), max(map(len, _SYLLABLES)) * digits + 1)


def build_vocabulary(size: int) -> Sequence[str]:
    """The vocabulary of ``size`` words: packed from :data:`PACKED_VOCABULARY_FROM` words, else a list."""
    return packed_vocabulary(size) if size >= PACKED_VOCABULARY_FROM else make_vocabulary(size)


@dataclass
class Corpus:
    """The vocabulary and the generators of titles and bodies."""

    vocabulary: Sequence[str]
    body_weights: np.ndarray
    params: CorpusParams
    #: :meth:`rewrite` does not read the content it replaces.
    uses_old_content: ClassVar[bool] = False

    @classmethod
    def build(cls, params: CorpusParams) -> Corpus:
        """The corpus for ``params``: its vocabulary and the Zipf weights bodies are drawn with."""
        size = max(params.min_vocabulary, int(params.vocabulary_per_article * params.articles))
        ranks = np.arange(1, size + 1, dtype=float)
        weights = 1.0 / ranks
        return cls(build_vocabulary(size), np.cumsum(weights / weights.sum()), params)

    def title(self, rng: np.random.Generator) -> str:
        """A new title: distinct words drawn uniformly from the vocabulary, the first capitalised."""
        picks = rng.choice(len(self.vocabulary), size=self.params.title_words, replace=False)
        return " ".join(self.vocabulary[i].capitalize() if j == 0 else self.vocabulary[i]
                        for j, i in enumerate(picks))

    def body(self, rng: np.random.Generator) -> str:
        """A new body: words drawn Zipf-like from the vocabulary."""
        return self.content_of(self.body_words(rng))

    def body_words(self, rng: np.random.Generator) -> np.ndarray:
        """The words of :meth:`body` (the same draw), unwritten: vocabulary indices."""
        picks = np.searchsorted(self.body_weights, rng.random(self.params.body_words), side="right")
        return np.minimum(picks, len(self.vocabulary) - 1)

    def content_of(self, words: np.ndarray) -> str:
        """The body ``words`` write."""
        return content_text(self.vocabulary, words)

    def rewrite(self, content: str, rng: np.random.Generator, article_id: str | None = None) -> str:
        """A person's new content for an article: a fresh body (the old one is not used)."""
        return self.body(rng)

    def rewrite_words(self, rng: np.random.Generator) -> np.ndarray:
        """:meth:`rewrite`'s new content (the same draw) as its words."""
        return self.body_words(rng)

    def retitle(self, title: str, rng: np.random.Generator, article_id: str | None = None) -> str:
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
    """Writes people's saves on a corpus of real text (a corpus from files) with lines of
    other articles (``corpus.edits: swap_lines``).

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
        """The corpus of a knowledge base's articles: their lines and title words, to rewrite with."""
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

    def rewrite(self, content: str, rng: np.random.Generator, article_id: str | None = None) -> str:
        """``content`` with one of its text lines (not a heading) replaced by a line of the corpus."""
        lines = content.split("\n")
        replacement = self.lines[int(rng.integers(len(self.lines)))]
        candidates = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")]
        if len(candidates) >= 2:
            lines[candidates[int(rng.integers(len(candidates)))]] = replacement
        else:
            lines.append(replacement)
        return "\n".join(lines)

    def retitle(self, title: str, rng: np.random.Generator, article_id: str | None = None) -> str:
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


# -- edits that read like edits ------------------------------------------------------------------

#: Where a sentence ends: after . ! ? and the Devanagari danda before a space, or after
#: the full-width stops of Chinese and Japanese.
_SENTENCE_END = re.compile(r"(?<=[.!?।॥])\s+|(?<=[。！？])")
#: A list item: its marker (``1.``, ``-``, ``*``) and its text.
_LIST_ITEM = re.compile(r"^(\s*)(\d+[.)]|[-*+])(\s+)(.*)$")
#: A title's qualifier, which a retitle replaces rather than stacks.
_QUALIFIER = re.compile(r"\s+\([^()]*\)$")
#: Runs of Han or Katakana: the words of Chinese and Japanese text a qualifier may be.
_CJK_WORD = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]{2,}|[\u30a0-\u30ff]{2,}")
_EDGE_PUNCTUATION = ".,;:!?()[]{}<>\"'«»„“”‚‘’—–-…।॥、。！？「」『』*_`#/\\|"
#: Words a qualifier is never: every stop list's (the language of the text is not known).
_NOT_QUALIFIERS = frozenset(word.casefold() for words in STOP_WORDS.values() for word in words)


def split_item(line: str) -> tuple[str, str]:
    """``(marker, text)`` of a line: a list item's marker with its spaces (``"2. "``), or ``""``."""
    item = _LIST_ITEM.match(line)
    if item is None:
        return "", line
    return f"{item.group(1)}{item.group(2)}{item.group(3)}", item.group(4)


def sentences(line: str) -> list[str]:
    """The sentences of a line's text (a list item's marker is not one)."""
    return [part for part in _SENTENCE_END.split(split_item(line)[1]) if part.strip()]


def _joined(line: str, parts: list[str], extra: str = "") -> str:
    """``line`` with its text made of ``parts`` (its list marker kept)."""
    marker, text = split_item(line)
    return marker + (" " if " " in text.strip() or " " in extra else "").join(parts)


def _is_text(line: str) -> bool:
    """A line of the article's text: not blank, not a heading."""
    return bool(line.strip()) and not line.lstrip().startswith("#")


def _renumbered(lines: list[str]) -> list[str]:
    """Numbered list items numbered 1, 2, 3 ... again within each run of them."""
    out, number = [], 0
    for line in lines:
        item = _LIST_ITEM.match(line)
        if item and item.group(2)[:-1].isdigit():
            number += 1
            out.append(f"{item.group(1)}{number}{item.group(2)[-1]}{item.group(3)}{item.group(4)}")
        else:
            if line.strip():
                number = 0
            out.append(line)
    return out


def qualifier_words(content: str, title: str) -> list[str]:
    """Words of ``content`` a retitle may add to ``title`` as its qualifier: words of 3 to 24
    characters (Han or Katakana runs of 2 or more) that are not in the title, not a stop
    word of any language kbsim knows, and not a number; those the text uses twice or more
    when there are any."""
    in_title = {word.strip(_EDGE_PUNCTUATION).casefold() for word in title.split()}
    counts: dict[str, int] = {}
    for raw in content.split():
        word = raw.strip(_EDGE_PUNCTUATION)
        found = _CJK_WORD.findall(word) if _CJK_WORD.search(word) else [word]
        for candidate in found:
            folded = candidate.casefold()
            short = 2 if _CJK_WORD.fullmatch(candidate) else 3
            if (short <= len(candidate) <= 24 and any(char.isalpha() for char in candidate)
                    and folded not in in_title and folded not in _NOT_QUALIFIERS
                    and not any(char in candidate for char in "()[]{}<>=@")):
                counts[candidate] = counts.get(candidate, 0) + 1
    repeated = [word for word, count in counts.items() if count >= 2]
    return repeated or list(counts)


@dataclass
class RevisingCorpus:
    """Writes people's saves as revisions of each article's own text (``corpus.edits:
    revise``).

    A content save rewrites, inserts or deletes a sentence or a step of that article: it
    deletes a sentence of a paragraph or an item of a list, puts back one the article had
    when the day began (where it stood), or swaps two neighbouring sentences or steps
    (numbered steps are numbered again). A retitle keeps the title and gives it a qualifier
    in brackets, a word of the article's own text, in place of any qualifier it had. A new
    article (``saves.replace_unpublished``) is one of the corpus's articles under a
    qualified title. All draw only from the day's ``editors`` stream.
    """

    #: article id -> its text when the day began
    originals: dict[str, str]
    titles: list[str]
    contents: list[str]
    #: :meth:`rewrite` revises the content it replaces.
    uses_old_content: ClassVar[bool] = True

    @classmethod
    def from_articles(cls, titles, contents, article_ids) -> RevisingCorpus:
        """The corpus of a knowledge base's articles, each by its id."""
        return cls(dict(zip(article_ids, contents, strict=True)), list(titles), list(contents))

    def title(self, rng: np.random.Generator) -> str:
        """A new article's title: one of the corpus's, qualified by a word of its text."""
        index = int(rng.integers(len(self.titles)))
        return self._qualified(self.titles[index], self.contents[index], rng)

    def body(self, rng: np.random.Generator) -> str:
        """A new article's content: one of the corpus's articles' text."""
        return self.contents[int(rng.integers(len(self.contents)))]

    def retitle(self, title: str, rng: np.random.Generator, article_id: str | None = None) -> str:
        """The title, recognisably: the same words and a qualifier from the article's text."""
        original = self.originals.get(article_id, "") if article_id is not None else ""
        return self._qualified(title, original, rng)

    def _qualified(self, title: str, content: str, rng: np.random.Generator) -> str:
        base = _QUALIFIER.sub("", title) or title
        words = qualifier_words(content, base)
        if not words:
            return base if base != title else f"{title} (2)"
        current = _QUALIFIER.search(title)
        choices = [word for word in words if not current or current.group(0).strip()[1:-1] != word] or words
        return f"{base} ({choices[int(rng.integers(len(choices)))]})"

    def rewrite(self, content: str, rng: np.random.Generator, article_id: str | None = None) -> str:
        """The content revised by one change: a sentence or step deleted, put back or moved."""
        lines = content.split("\n")
        original = self.originals.get(article_id) if article_id is not None else None
        changes = self._deletions(lines) + self._insertions(lines, original) + self._swaps(lines)
        if not changes:
            return content
        kind, *where = changes[int(rng.integers(len(changes)))]
        if kind == "delete_sentence":
            index, position = where
            parts = sentences(lines[index])
            del parts[position]
            lines[index] = _joined(lines[index], parts)
        elif kind == "delete_line":
            del lines[where[0]]
        elif kind == "swap_sentences":
            index, position = where
            parts = sentences(lines[index])
            parts[position], parts[position + 1] = parts[position + 1], parts[position]
            lines[index] = _joined(lines[index], parts)
        elif kind == "swap_lines":
            index = where[0]
            lines[index], lines[index + 1] = lines[index + 1], lines[index]
        elif kind == "insert_sentence":
            index, position, sentence = where
            parts = sentences(lines[index])
            parts.insert(position, sentence)
            lines[index] = _joined(lines[index], parts, sentence)
        else:  # insert_line
            index, line = where
            lines.insert(index, line)
        return "\n".join(_renumbered(lines))

    @staticmethod
    def _deletions(lines: list[str]) -> list[tuple]:
        """A sentence of a paragraph of two or more; a list item of a list of three or more;
        a paragraph, while the article keeps two others."""
        changes: list[tuple] = []
        text_lines = [i for i, line in enumerate(lines) if _is_text(line)]
        paragraphs = [i for i in text_lines if not _LIST_ITEM.match(lines[i])]
        for index in text_lines:
            parts = sentences(lines[index])
            if len(parts) >= 2:
                changes += [("delete_sentence", index, position) for position in range(len(parts))]
            elif _LIST_ITEM.match(lines[index]):
                if len(_list_run(lines, index)) >= 3:
                    changes.append(("delete_line", index))
            elif len(paragraphs) >= 3:
                changes.append(("delete_line", index))
        return changes

    @staticmethod
    def _swaps(lines: list[str]) -> list[tuple]:
        """Two neighbouring sentences of a paragraph, or two neighbouring list items."""
        changes: list[tuple] = []
        for index, line in enumerate(lines):
            if not _is_text(line):
                continue
            parts = sentences(line)
            changes += [("swap_sentences", index, position) for position in range(len(parts) - 1)]
            if _LIST_ITEM.match(line) and index + 1 < len(lines) and _LIST_ITEM.match(lines[index + 1]):
                changes.append(("swap_lines", index))
        return changes

    @staticmethod
    def _insertions(lines: list[str], original: str | None) -> list[tuple]:
        """Each sentence or line of the article's text at the start of the day that it no
        longer holds, put back after what came before it there (or before what came after)."""
        if original is None:
            return []
        changes: list[tuple] = []
        current = "\n".join(lines)
        old_lines = original.split("\n")
        for old_index, old_line in enumerate(old_lines):
            if not _is_text(old_line):
                continue
            parts = sentences(old_line)
            present = [part in current for part in parts]
            if not any(present):  # the whole line went: put it back where it stood
                changes.append(("insert_line", _line_position(lines, old_lines, old_index), old_line))
                continue
            for position, sentence in enumerate(parts):
                if present[position]:
                    continue
                for neighbour, offset in ((position - 1, 1), (position + 1, 0)):
                    if 0 <= neighbour < len(parts):
                        found = next((i for i, line in enumerate(lines) if parts[neighbour] in sentences(line)),
                                     None)
                        if found is not None:
                            at = sentences(lines[found]).index(parts[neighbour]) + offset
                            changes.append(("insert_sentence", found, at, sentence))
                            break
        return changes


def _list_run(lines: list[str], index: int) -> list[int]:
    """The indices of the list items in the run around ``index``."""
    start = index
    while start > 0 and _LIST_ITEM.match(lines[start - 1]):
        start -= 1
    end = index
    while end + 1 < len(lines) and _LIST_ITEM.match(lines[end + 1]):
        end += 1
    return list(range(start, end + 1))


def _line_position(lines: list[str], old_lines: list[str], old_index: int) -> int:
    """Where a line the article lost goes back: after the nearest line before it in the old
    text that the article still has (a list item by its text: its number may have
    changed), else before the nearest one after it, else at the end."""
    texts = [split_item(line)[1] for line in lines]
    for previous in range(old_index - 1, -1, -1):
        text = split_item(old_lines[previous])[1]
        if text.strip() and text in texts:
            return texts.index(text) + 1
    for following in range(old_index + 1, len(old_lines)):
        text = split_item(old_lines[following])[1]
        if text.strip() and text in texts:
            return texts.index(text)
    return len(lines)
