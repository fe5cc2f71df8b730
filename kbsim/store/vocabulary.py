"""A vocabulary packed as one array of bytes: no Python string a word.

:class:`PackedVocabulary` is a ``Sequence[str]`` of ASCII words held as one ``bytes``
object of equal rows, each row a word, a space and NUL padding. A word is a string only
while it is used; a content is written from its words with one gather of their rows
(:meth:`PackedVocabulary.join`). :meth:`PackedVocabulary.find` finds a word's first index
through a hash table of two int32 arrays (of the rows' ``hash()``), and
:class:`VocabularyTermIds` and :class:`VocabularyTerms` are the arena index's term table
over it (term -> number, number -> term) in place of a dict and a list: the terms of a first
fill are the vocabulary's distinct words, numbered in order of first occurrence, as the dict
numbered them.

Why it exists: the 1,000,000-article day's synthetic vocabulary has 4 million words. As a
list of strings they took about 245 MB, and the arena index's term dict over them, with an
int object a term number, about 250 MB more, all held beside the day for the seed's next
days. Packed, a word takes its row (17 bytes there) and its term number 12 bytes of arrays.

Why rows of one width rather than the words end to end with their offsets: a content of 60
words is one gather of rows (``take``), one copy and one ``replace`` of the padding, 10 µs
at 400,000 words, where a slice a word took 38 µs and the list of strings 15 µs (its strings
scattered in memory); at 600 words the rows and the list are alike. The synthetic words
are short (at most 16 letters below 200 million words), so the padding costs less than the
offsets would.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import overload

import numpy as np

#: Words packed at a time by :meth:`PackedVocabulary.from_words` (their strings let go after),
#: and rows read at a time by the checks over every row.
_PACK_CHUNK = 1 << 16


class PackedVocabulary(Sequence[str]):
    """ASCII words as rows of one ``bytes`` object: row ``i`` is word ``i``, a space, and NUL
    bytes to ``width``.

    Args:
        data: the rows, end to end (``len(data)`` a multiple of ``width``).
        width: each row's length: the longest word's and one more at least.
    """

    __slots__ = ("_data", "_width", "_rows", "_order", "_bucket_start", "_mask")

    def __init__(self, data: bytes, width: int) -> None:
        if width < 1 or len(data) % width:
            raise ValueError(f"a packed vocabulary's {len(data)} bytes are not rows of {width}")
        self._data = data
        self._width = width
        self._rows = np.frombuffer(data, dtype=np.uint8).reshape(-1, width)
        self._order: memoryview | None = None  # the hash table, made at the first find()
        self._bucket_start: memoryview | None = None
        self._mask = 0

    @classmethod
    def from_words(cls, words: Iterable[str], width: int) -> PackedVocabulary:
        """``words`` packed into rows of ``width`` bytes, a chunk at a time (only a chunk's
        strings held at once). Refuses a word that is not ASCII, or holds a space or a NUL,
        or is not shorter than ``width``."""
        parts = []
        iterator = iter(words)
        while True:
            chunk = [word.encode("ascii") + b" " for word in islice(iterator, _PACK_CHUNK)]
            if not chunk:
                break
            if max(map(len, chunk)) > width or any(b"\0" in word or b" " in word[:-1] for word in chunk):
                raise ValueError(f"a word is {width} bytes or longer, or holds a space or a NUL")
            parts.append(np.array(chunk, dtype=f"S{width}").tobytes())
        return cls(b"".join(parts), width)

    def __len__(self) -> int:
        return self._rows.shape[0]

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("vocabulary index out of range")
        width = self._width
        return self._data[i * width : (i + 1) * width].partition(b" ")[0].decode("ascii")

    def __iter__(self) -> Iterator[str]:
        data, width = self._data, self._width
        for at in range(0, len(data), width):
            yield data[at : at + width].partition(b" ")[0].decode("ascii")

    def __reduce__(self):
        return (PackedVocabulary, (self._data, self._width))

    def join(self, words: Iterable[int] | np.ndarray) -> str:
        """The words at indices ``words``, joined by spaces (``" ".join(map(self.__getitem__, words))``)."""
        indices = words if isinstance(words, np.ndarray) else np.fromiter(words, dtype=np.int64)
        return self._rows.take(indices, axis=0).tobytes().replace(b"\0", b"")[:-1].decode("ascii")

    def join_rows(self, words: np.ndarray) -> list[str]:
        """:meth:`join` of each row of the 2-D array ``words``, gathered a block of rows at a time."""
        joined: list[str] = []
        rows_at_once = max(1, _PACK_CHUNK // max(1, words.shape[1]))
        for first in range(0, words.shape[0], rows_at_once):
            block = words[first : first + rows_at_once]
            rows = self._rows.take(block.ravel(), axis=0).reshape(block.shape[0], -1)
            texts = rows.view(f"S{rows.shape[1]}").ravel().tolist()  # (its last NULs dropped)
            joined += [text.replace(b"\0", b"")[:-1].decode("ascii") for text in texts]
        return joined

    def lengths(self) -> np.ndarray:
        """Each word's length."""
        lengths = np.empty(len(self), dtype=np.int64)
        for first in range(0, len(self), _PACK_CHUNK):
            rows = self._rows[first : first + _PACK_CHUNK]
            lengths[first : first + rows.shape[0]] = np.count_nonzero(rows, axis=1) - 1
        return lengths

    def are_tokens(self) -> bool:
        """Whether every word is one non-empty run of lower-case ASCII letters and digits."""
        for first in range(0, len(self), _PACK_CHUNK):
            rows = self._rows[first : first + _PACK_CHUNK]
            word = ((rows >= 97) & (rows <= 122)) | ((rows >= 48) & (rows <= 57))
            length = np.count_nonzero(word, axis=1)
            # each row: its letters and digits first (one at least), then a space, then NULs
            at = np.arange(self._width)
            if not (length > 0).all() or not (word == (at < length[:, None])).all():
                return False
            if not (rows[np.arange(rows.shape[0]), length] == 32).all():
                return False
            if not ((rows == 0) == (at > length[:, None])).all():
                return False
        return True

    def find(self, word: str) -> int:
        """The first index of ``word``, or -1 if it is not a word here."""
        if self._order is None:
            self._make_table(self._hashes())
        width = self._width
        try:
            key = word.encode("ascii") + b" "
        except UnicodeEncodeError:
            return -1
        if len(key) > width:
            return -1
        key = key.ljust(width, b"\0")
        data, order, starts = self._data, self._order, self._bucket_start
        assert order is not None and starts is not None
        bucket = hash(key) & self._mask
        for j in range(starts[bucket], starts[bucket + 1]):
            at = order[j] * width
            if data[at : at + width] == key:
                return order[j]
        return -1

    def first_numbers(self) -> tuple[np.ndarray, np.ndarray]:
        """Each word's number among the distinct words, numbered in order of first occurrence
        (as ``dict.setdefault(word, len(d))`` over the words numbers them), and each distinct
        word's first index: two int32 arrays."""
        n, width, data = len(self), self._width, self._data
        hashes = self._hashes()
        if self._order is None:
            self._make_table(hashes)
        by_hash = np.argsort(hashes, kind="stable")  # equal hashes: by index
        ordered = hashes[by_hash]
        first = np.arange(n, dtype=np.int64)
        repeats = np.flatnonzero(ordered[1:] == ordered[:-1])
        if repeats.size:  # rows of one hash: the same word (or, rarely, another)
            for run_start in np.unique(np.searchsorted(ordered, ordered[repeats], side="left")).tolist():
                run_end = int(np.searchsorted(ordered, ordered[run_start], side="right"))
                seen: dict[bytes, int] = {}
                for i in by_hash[run_start:run_end].tolist():  # in index order
                    first[i] = seen.setdefault(data[i * width : (i + 1) * width], i)
        is_first = first == np.arange(n)
        number = np.cumsum(is_first) - 1
        return number[first].astype(np.int32), np.flatnonzero(is_first).astype(np.int32)

    def _hashes(self) -> np.ndarray:
        """Each row's ``hash()`` (this process's: the table is made in each process that looks
        a word up, and is not pickled)."""
        data, width = self._data, self._width
        return np.fromiter((hash(data[at : at + width]) for at in range(0, len(data), width)),
                           dtype=np.int64, count=len(self))

    def _make_table(self, hashes: np.ndarray) -> None:
        """The hash table :meth:`find` reads: the word indices sorted by bucket (a hash's low
        bits; stably, so of a bucket's equal words the first comes first), and where each
        bucket starts. About as many buckets as words."""
        bits = max(1, (max(len(self), 1) - 1).bit_length())
        buckets = hashes & ((1 << bits) - 1)
        order = np.argsort(buckets, kind="stable").astype(np.int32)
        starts = np.zeros((1 << bits) + 1, dtype=np.int32)
        np.cumsum(np.bincount(buckets, minlength=1 << bits), out=starts[1:])
        self._order, self._bucket_start, self._mask = order.data, starts.data, (1 << bits) - 1


class VocabularyTermIds:
    """Term -> term number, as a dict does, for an index whose first terms are a packed
    vocabulary's distinct words (numbered in order of first occurrence, ``numbers`` from
    :meth:`PackedVocabulary.first_numbers`), and whose later terms are set one by one."""

    __slots__ = ("_vocabulary", "_numbers", "_added")

    def __init__(self, vocabulary: PackedVocabulary, numbers: np.ndarray, added: dict[str, int] | None = None) -> None:
        self._vocabulary = vocabulary
        self._numbers = np.ascontiguousarray(numbers, dtype=np.int32).data
        self._added = {} if added is None else added

    def get(self, term: str, default: int | None = None) -> int | None:
        """The term's number, else ``default``."""
        i = self._vocabulary.find(term)
        if i >= 0:
            return self._numbers[i]
        return self._added.get(term, default)

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self.get(term) is not None

    def __getitem__(self, term: str) -> int:
        number = self.get(term)
        if number is None:
            raise KeyError(term)
        return number

    def __setitem__(self, term: str, number: int) -> None:
        if term in self:
            raise ValueError(f"term {term!r} already has a number")
        self._added[term] = number

    def copy(self) -> VocabularyTermIds:
        """A copy: the vocabulary's numbers shared, the terms set since copied."""
        return VocabularyTermIds(self._vocabulary, np.asarray(self._numbers), dict(self._added))

    def __reduce__(self):
        return (VocabularyTermIds, (self._vocabulary, np.asarray(self._numbers), self._added))


class VocabularyTerms(Sequence[str]):
    """Term number -> term, as a list does, for :class:`VocabularyTermIds`' terms: the
    vocabulary's distinct words (``firsts``, each one's first index), then the terms appended."""

    __slots__ = ("_vocabulary", "_firsts", "_added")

    def __init__(self, vocabulary: PackedVocabulary, firsts: np.ndarray, added: list[str] | None = None) -> None:
        self._vocabulary = vocabulary
        self._firsts = np.ascontiguousarray(firsts, dtype=np.int32).data
        self._added = [] if added is None else added

    def __len__(self) -> int:
        return len(self._firsts) + len(self._added)

    @overload
    def __getitem__(self, tid: int) -> str: ...

    @overload
    def __getitem__(self, tid: slice) -> list[str]: ...

    def __getitem__(self, tid):
        if isinstance(tid, slice):
            return [self[j] for j in range(*tid.indices(len(self)))]
        if tid < 0:
            tid += len(self)
        n = len(self._firsts)
        if 0 <= tid < n:
            return self._vocabulary[self._firsts[tid]]
        if tid < 0:
            raise IndexError("term number out of range")
        return self._added[tid - n]

    def append(self, term: str) -> None:
        """The next term number's term."""
        self._added.append(term)

    def copy(self) -> VocabularyTerms:
        """A copy: the vocabulary's words shared, the terms appended since copied."""
        return VocabularyTerms(self._vocabulary, np.asarray(self._firsts), list(self._added))

    def __reduce__(self):
        return (VocabularyTerms, (self._vocabulary, np.asarray(self._firsts), self._added))
