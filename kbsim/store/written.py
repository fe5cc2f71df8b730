"""Articles written from a vocabulary's words, held as word numbers and rendered when read.

A synthetic corpus writes each title as its words joined by spaces, the first capitalized,
and each content as its words joined by spaces and ended by a period (:func:`title_text`,
:func:`content_text`: the one place that format is written). When every vocabulary word is
a token of its own (:func:`check_vocabulary`), the words *are* the texts' tokens, so a store
can index them without tokenizing a text or checking one (the vocabulary is checked once),
and can keep a content as its word numbers (4 bytes a word against about 9 in a string),
rendering it the first time it is read: most articles of a large knowledge base are never
read in a day.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from kbsim.store.errors import ToolError
from kbsim.store.rules import SNIPPET_CHARS, Article, hit_json_size, read_json_size
from kbsim.store.tokens import tokenize
from kbsim.store.vocabulary import PackedVocabulary


def _joined(vocabulary: Sequence[str], words) -> str:
    """The words (indices, a list or an array), joined by spaces (a packed vocabulary
    gathers their rows at once)."""
    if type(vocabulary) is PackedVocabulary:
        return vocabulary.join(words)
    return " ".join(map(vocabulary.__getitem__, words.tolist() if isinstance(words, np.ndarray) else words))


def title_text(vocabulary: Sequence[str], words) -> str:
    """A title: the words, joined by spaces, the first capitalized."""
    text = _joined(vocabulary, words)
    return text[:1].upper() + text[1:] if text else text


def content_text(vocabulary: Sequence[str], words) -> str:
    """A content: the words, joined by spaces, ending in a period."""
    return _joined(vocabulary, words) + "."


#: How many of a content's first words :func:`snippet_text` writes before it writes them all:
#: enough for :data:`SNIPPET_CHARS` characters of the synthetic corpus's words (at most 31 of
#: them), and a few more.
_SNIPPET_WORDS = 32


def snippet_text(vocabulary: Sequence[str], words: np.ndarray) -> str:
    """``content_text(vocabulary, words)[:SNIPPET_CHARS]``, written from the first words
    alone when they reach that many characters (the content goes on after them), so a
    search hit's snippet is written without the whole content."""
    text = _joined(vocabulary, words[:_SNIPPET_WORDS])
    if len(text) >= SNIPPET_CHARS:
        return text[:SNIPPET_CHARS]
    if words.size <= _SNIPPET_WORDS:
        return (text + ".")[:SNIPPET_CHARS]
    return content_text(vocabulary, words)[:SNIPPET_CHARS]


def check_vocabulary(vocabulary: Sequence[str], name: str = "vocabulary") -> None:
    """Refuse (``invalid_argument``, naming ``name``) a vocabulary with a word that is not one
    lower-case token of ASCII letters and digits: the words of such a vocabulary are the
    tokens of any text :func:`title_text` and :func:`content_text` write from them."""
    if type(vocabulary) is PackedVocabulary:
        if not vocabulary.are_tokens():
            raise ToolError("invalid_argument", f"{name}: a word is not one lower-case token of letters and digits")
        return
    if not isinstance(vocabulary, (list, tuple)) or not all(isinstance(word, str) for word in vocabulary):
        raise ToolError("invalid_argument", f"{name} must be a list of strings")
    joined = " ".join(vocabulary)
    if not joined.isascii() or tokenize(joined) != list(vocabulary):
        bad = next(word for word in vocabulary if not word.isascii() or tokenize(word) != [word])
        raise ToolError("invalid_argument", f"{name} word {bad!r} is not one lower-case token of letters and digits")


@dataclass(frozen=True, eq=False)
class WrittenArticles:
    """Articles written from ``vocabulary``: row ``i`` of ``title`` and of ``content``
    (2-D integer arrays) are article ``i``'s title and content words."""

    vocabulary: Sequence[str]
    title: np.ndarray
    content: np.ndarray
    _lengths: np.ndarray | None = field(default=None, init=False, repr=False)

    def __len__(self) -> int:
        return len(self.title)

    def check(self) -> None:
        """Refuse (``invalid_argument``) a vocabulary :func:`check_vocabulary` refuses, or
        word arrays that are not a row of indices into it per article."""
        check_vocabulary(self.vocabulary, "written.vocabulary")
        for name in ("title", "content"):
            words = getattr(self, name)
            if not isinstance(words, np.ndarray) or words.ndim != 2 or not np.issubdtype(words.dtype, np.integer):
                raise ToolError("invalid_argument", f"written.{name} must be a 2-D integer array")
            if len(words) != len(self.title):
                raise ToolError("invalid_argument", f"written.{name} has {len(words)} rows, not {len(self.title)}")
            if words.size and (words.min() < 0 or words.max() >= len(self.vocabulary)):
                raise ToolError("invalid_argument", f"written.{name} holds an index outside the vocabulary")
        if len(self) and not self.title.shape[1]:
            raise ToolError("invalid_argument", "written.title: a title needs a word")

    def titles(self) -> list[str]:
        """Every article's title."""
        if type(self.vocabulary) is PackedVocabulary and self.title.shape[1]:
            return [text[:1].upper() + text[1:] for text in self.vocabulary.join_rows(self.title)]
        return [title_text(self.vocabulary, row) for row in self.title.tolist()]

    def content_of(self, i: int) -> str:
        """Article ``i``'s content."""
        return content_text(self.vocabulary, self.content[i])

    def snippet_of(self, i: int) -> str:
        """Article ``i``'s content's first :data:`SNIPPET_CHARS` characters (:func:`snippet_text`)."""
        return snippet_text(self.vocabulary, self.content[i])

    def length_of(self, i: int) -> int:
        """Article ``i``'s content length in characters."""
        return int(self.content_lengths()[i])

    def content_lengths(self) -> np.ndarray:
        """Every article's content length in characters (each word's, the spaces, the period)."""
        lengths = self._lengths
        if lengths is None:
            counted = word_lengths(self.vocabulary)[self.content].sum(axis=1) + max(self.content.shape[1], 1)
            lengths = counted.astype(np.int32)
            object.__setattr__(self, "_lengths", lengths)
        return lengths

    def articles(self, ids: Sequence[str], version_us: int, kb_id: str) -> list[WrittenArticle]:
        """The articles, published at ``version_us`` as ``ids`` in ``kb_id``: each content left
        to render when read, and each one's hit and read sizes in JSON (:func:`hit_json_size`,
        :func:`read_json_size`) counted from the lengths of its words.

        A title and content of vocabulary words are printable ASCII with no quote or
        backslash, so each counts its length and two quotes in JSON; an article's sizes are
        those of one with an empty title and content, plus the lengths of its title, of its
        content and of the snippet (the content's first :data:`SNIPPET_CHARS` characters).
        """
        titles = self.titles()
        content_len = self.content_lengths().tolist()
        updated_at = Article("", "", "", True, version_us).updated_at  # one string for them all
        bare: dict[int, tuple[int, int]] = {}  # an article id's length -> the sizes with an empty title and content
        made = []
        for i, (article_id, title, length) in enumerate(zip(ids, titles, content_len, strict=True)):
            sizes = bare.get(len(article_id))
            if sizes is None:
                empty = Article(article_id, "", "", True, version_us)
                sizes = bare[len(article_id)] = (hit_json_size(kb_id, empty), read_json_size(kb_id, empty))
            article = WrittenArticle.__new__(WrittenArticle)
            article.article_id, article.title, article.published = article_id, title, True
            article.version_us, article.updated_at = version_us, updated_at
            article.hit_json_len = sizes[0] + len(title) + min(length, SNIPPET_CHARS)
            article.read_json_len = sizes[1] + len(title) + length
            article.written, article.row = self, i
            made.append(article)
        return made


def word_lengths(vocabulary: Sequence[str]) -> np.ndarray:
    """Each vocabulary word's length."""
    if type(vocabulary) is PackedVocabulary:
        return vocabulary.lengths()
    return np.fromiter(map(len, vocabulary), dtype=np.int64, count=len(vocabulary))


@dataclass(frozen=True, eq=False, slots=True)
class WrittenText:
    """One content written from ``vocabulary``'s words (:func:`content_text`), ``length``
    characters long (its words', a space between two, the period): a save's new content,
    kept as its words."""

    vocabulary: Sequence[str]
    words: np.ndarray
    length: int

    def content_of(self, _row: int = 0) -> str:
        """The content."""
        return content_text(self.vocabulary, self.words)

    def snippet_of(self, _row: int = 0) -> str:
        """The content's first :data:`SNIPPET_CHARS` characters (:func:`snippet_text`)."""
        return snippet_text(self.vocabulary, self.words)

    def length_of(self, _row: int = 0) -> int:
        """The content's length in characters, known without writing it."""
        return self.length


class _Bare(NamedTuple):
    """What the JSON sizes read of an article, its content left empty."""

    article_id: str
    title: str
    content: str
    updated_at: str


_CONTENT = Article.__dict__["content"]  # the content slot Article declares


class WrittenArticle(Article):
    """An :class:`Article` whose content is ``written.content_of(row)`` (a starting
    article's row of :class:`WrittenArticles`, or a save's :class:`WrittenText`) until it
    is first read (then rendered, and kept) or replaced; a search hit's snippet is written
    from its first words without rendering it. Its JSON sizes are counted from the
    content's length while it is unrendered (its words are printable ASCII, with no quote or
    backslash)."""

    __slots__ = ("written", "row")
    written: WrittenArticles | WrittenText
    row: int

    def _rendered(self) -> bool:
        try:
            _CONTENT.__get__(self)
        except AttributeError:
            return False
        return True

    def hit_size(self, kb_id: str) -> int:
        """JSON bytes of this version's search hit; unrendered, from the words' lengths."""
        if self.hit_json_len is None and not self._rendered():
            bare = _Bare(self.article_id, self.title, "", self.updated_at)
            self.hit_json_len = hit_json_size(kb_id, bare) + min(self.written.length_of(self.row), SNIPPET_CHARS)
        return super().hit_size(kb_id)

    def read_size(self, kb_id: str) -> int:
        """JSON bytes of this version's read result; unrendered, from the words' lengths."""
        if self.read_json_len is None and not self._rendered():
            bare = _Bare(self.article_id, self.title, "", self.updated_at)
            self.read_json_len = read_json_size(kb_id, bare) + self.written.length_of(self.row)
        return super().read_size(kb_id)

    def snippet(self) -> str:
        """The content's first :data:`SNIPPET_CHARS` characters; unrendered, written from its
        first words and not kept: a search hit needs no more, and most articles a day's
        searches return are never read (keeping each one's whole content held 37 MiB at
        the 250x day's end, rendered for 92,000 hits)."""
        try:
            return _CONTENT.__get__(self)[:SNIPPET_CHARS]
        except AttributeError:  # not rendered
            return self.written.snippet_of(self.row)

    @property
    def content(self) -> str:
        """The content, written from its words the first time it is read."""
        try:
            return _CONTENT.__get__(self)
        except AttributeError:  # not rendered yet
            text = self.written.content_of(self.row)
            _CONTENT.__set__(self, text)
            return text

    @content.setter
    def content(self, text: str) -> None:
        _CONTENT.__set__(self, text)

    def __copy__(self) -> WrittenArticle:
        """The same copy :meth:`Article.__copy__` makes, the content still unrendered if it is."""
        twin = object.__new__(WrittenArticle)
        for name in ("article_id", "title", "published", "version_us", "updated_at", "hit_json_len",
                     "read_json_len", "written", "row"):
            setattr(twin, name, getattr(self, name))
        try:
            _CONTENT.__set__(twin, _CONTENT.__get__(self))
        except AttributeError:
            pass
        return twin


def write_content(article: Article, text: WrittenText) -> WrittenArticle:
    """``article`` with ``text`` as its content, unrendered, and its sizes to count again:
    itself when it is a :class:`WrittenArticle`, else one with its fields."""
    if type(article) is WrittenArticle:
        try:
            _CONTENT.__delete__(article)
        except AttributeError:
            pass
    else:
        made = WrittenArticle.__new__(WrittenArticle)
        for name in ("article_id", "title", "published", "version_us", "updated_at"):
            setattr(made, name, getattr(article, name))
        article = made
    article.written, article.row = text, 0
    article.hit_json_len = article.read_json_len = None
    return article
