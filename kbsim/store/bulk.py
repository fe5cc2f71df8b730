"""A search index's contents computed in bulk, from its documents' words as vocabulary indices.

:meth:`BM25Index.fill` holds what :func:`bulk_postings` computes: the state that adding the
documents one by one gives (:meth:`BM25Index.add`), found with a few numpy sorts instead of
posting by posting. A synthetic corpus hands its words' indices over as :class:`ArticleWords`,
which :func:`check_words` holds to the texts first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from sys import intern

import numpy as np

from kbsim.store.errors import ToolError
from kbsim.store.tokens import tokenize

#: fill() takes documents a block at a time: at most this many (document x position) cells.
_BLOCK_CELLS = 1 << 20


def token_blocks(content_words, title_words, n: int, pad: int, title_weight: int):
    """Blocks of documents as ``(first document, tokens, weights)``: a (documents x positions)
    array of token ids, each document's content tokens then its title tokens, and each
    position's weight (1 for the content, ``title_weight`` for the title). Rows are 2-D
    arrays, or ragged sequences, padded with ``pad`` to the block's longest."""
    ragged = not (isinstance(content_words, np.ndarray) and isinstance(title_words, np.ndarray))
    if not ragged and (content_words.ndim != 2 or title_words.ndim != 2):
        raise ValueError("fill(): word arrays must have a row per document")
    if ragged:
        content_words = [np.asarray(row, dtype=np.int64).ravel() for row in content_words]
        title_words = [np.asarray(row, dtype=np.int64).ravel() for row in title_words]
    if len(content_words) != n or len(title_words) != n:
        raise ValueError(f"fill(): {n} documents, {len(content_words)} and {len(title_words)} rows of words")
    for words in (content_words, title_words):
        flat = words if not ragged else np.concatenate(words) if words else np.zeros(0, dtype=np.int64)
        if flat.size and (flat.min() < 0 or flat.max() >= pad):
            raise ValueError(f"fill(): a word index outside the vocabulary's {pad} words")
    first = 0
    while first < n:
        if ragged:
            last, content_width, title_width = first, 0, 0
            while last < n:
                grown = max(content_width, content_words[last].size), max(title_width, title_words[last].size)
                if last > first and (last + 1 - first) * sum(grown) > _BLOCK_CELLS:
                    break
                (content_width, title_width), last = grown, last + 1
            tokens = np.full((last - first, content_width + title_width), pad, dtype=np.int64)
            block = zip(content_words[first:last], title_words[first:last], strict=True)
            for row, (content, title) in enumerate(block):
                tokens[row, : content.size] = content
                tokens[row, content_width : content_width + title.size] = title
        else:
            content_width, title_width = content_words.shape[1], title_words.shape[1]
            last = min(n, first + max(1, _BLOCK_CELLS // max(1, content_width + title_width)))
            tokens = np.concatenate(
                [content_words[first:last].astype(np.int64), title_words[first:last].astype(np.int64)], axis=1
            )
        weights = np.concatenate([np.ones(content_width), np.full(title_width, float(title_weight))])
        yield first, tokens, weights
        first = last


def _document_terms(tokens: np.ndarray, weights: np.ndarray):
    """Each document's distinct tokens in order of first occurrence, with their weighted
    counts: for a (documents x positions) array of token ids and a weight per position,
    the (document, token, count) entries, documents in order."""
    rows, width = tokens.shape
    order = np.argsort(tokens, axis=1, kind="stable")  # equal tokens keep their positions' order
    ranked = np.take_along_axis(tokens, order, axis=1)
    new = np.ones(ranked.shape, dtype=bool)
    new[:, 1:] = ranked[:, 1:] != ranked[:, :-1]  # a token's first place among equal ones
    group = np.cumsum(new.ravel()) - 1
    group_count = np.bincount(group, weights=weights[order].ravel(), minlength=int(new.sum()))  # exact sums
    group_position = order.ravel()[new.ravel()]  # where each token first occurs in its document
    group_word = ranked.ravel()[new.ravel()]
    group_doc = np.repeat(np.arange(rows), new.sum(axis=1))
    # each document's tokens in order of first occurrence: one cell per (document, position)
    grid = np.full((rows, width), -1, dtype=np.int64)
    grid[group_doc, group_position] = np.arange(group_word.size)
    picked = grid.ravel()
    picked = picked[picked >= 0]
    return group_doc[picked].astype(np.int64), group_word[picked], group_count[picked].astype(np.int64)


def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for non-negative integer keys below 2**32, as two
    stable passes over 16-bit digits (which numpy radix-sorts) instead of one merge sort."""
    if keys.size and int(keys.max()) >= 1 << 32:
        return np.argsort(keys, kind="stable")
    low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    high = (keys[low] >> 16).astype(np.uint16)
    return low[np.argsort(high, kind="stable")]


@dataclass(frozen=True, eq=False)
class ArticleWords:
    """Articles' tokens as indices into ``vocabulary``: row ``i`` of ``content`` and of
    ``title`` (2-D integer arrays) are the tokens :func:`tokenize` gives article ``i``'s
    content and title. The same string may stand at two indices."""

    vocabulary: Sequence[str]
    content: np.ndarray
    title: np.ndarray


def check_words(words: ArticleWords, articles: Sequence[tuple[str, str]]) -> None:
    """Refuse (``invalid_argument``, naming the first article that differs) words that are
    not the ``(title, content)`` articles' tokens, or not shaped as :class:`ArticleWords` says."""
    if not isinstance(words, ArticleWords):
        raise ToolError("invalid_argument", f"words must be ArticleWords, got {type(words).__name__}")
    vocabulary = words.vocabulary
    if not isinstance(vocabulary, (list, tuple)) or not all(isinstance(word, str) for word in vocabulary):
        raise ToolError("invalid_argument", "words.vocabulary must be a list of strings")
    rows = {}
    for name in ("content", "title"):
        try:
            array = np.asarray(getattr(words, name))
        except (ValueError, TypeError) as exc:
            raise ToolError("invalid_argument", f"words.{name} is not an array: {exc}") from None
        if array.ndim != 2 or array.shape[0] != len(articles) or not np.issubdtype(array.dtype, np.integer):
            raise ToolError(
                "invalid_argument",
                f"words.{name} must be an integer array with a row per article ({len(articles)}), "
                f"got shape {array.shape} of {array.dtype}",
            )
        if array.size and (array.min() < 0 or array.max() >= len(vocabulary)):
            raise ToolError("invalid_argument", f"words.{name} holds an index outside the vocabulary")
        rows[name] = array.tolist()
    word = vocabulary.__getitem__
    for i, ((title, content), content_row, title_row) in enumerate(
        zip(articles, rows["content"], rows["title"], strict=True)
    ):
        if tokenize(content) != list(map(word, content_row)) or tokenize(title) != list(map(word, title_row)):
            raise ToolError("invalid_argument", f"words of article {i} are not the tokens of its title and content")



def bulk_postings(n: int, vocabulary: Sequence[str], content_words, title_words, title_weight: int):
    """What :meth:`BM25Index.add` would hold after adding ``n`` documents in turn, from their
    words as vocabulary indices (row ``i`` of ``content_words`` and ``title_words``: document
    ``i``'s tokens): ``(terms, starts, slots, counts, doc_terms, doc_len)``, the postings laid
    out as a frozen :class:`BM25Index` holds them (term ``k``'s documents and counts at
    ``starts[k]:starts[k + 1]``, in document order; terms in order of first occurrence), each
    document's terms in order of first occurrence, and its length."""
    # the same string at two indices is one term: number the distinct strings (and give
    # the padding of ragged rows one more number, a token no document has)
    number: dict[str, int] = {}
    canonical = np.fromiter(
        (number.setdefault(word, len(number)) for word in vocabulary), dtype=np.int64, count=len(vocabulary)
    )
    vocabulary = list(number)
    size = len(vocabulary)
    canonical = np.append(canonical, size)
    parts = []
    blocks = token_blocks(content_words, title_words, n, len(canonical) - 1, title_weight)
    for first, tokens, weights in blocks:
        docs, words, counts = _document_terms(canonical[tokens], weights)
        real = words != size
        parts.append((docs[real] + first, words[real], counts[real]))
    if parts:
        entry_doc, entry_word, entry_count = (np.concatenate(column) for column in zip(*parts, strict=True))
    else:
        entry_doc = entry_word = entry_count = np.zeros(0, dtype=np.int64)
    # terms numbered by first occurrence over the documents in order, as add() meets them
    first_entry = np.full(size, entry_word.size, dtype=np.int64)
    np.minimum.at(first_entry, entry_word, np.arange(entry_word.size, dtype=np.int64))
    present = np.flatnonzero(first_entry < entry_word.size)
    term_words = present[np.argsort(first_entry[present], kind="stable")]
    code_of_word = np.empty(size, dtype=np.int64)
    code_of_word[term_words] = np.arange(term_words.size)
    entry_code = code_of_word[entry_word]
    by_term = stable_argsort(entry_code)  # documents stay in order within a term
    starts = np.zeros(term_words.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(entry_code, minlength=term_words.size), out=starts[1:])
    terms = [intern(vocabulary[word]) for word in term_words.tolist()]
    term_of_word = np.empty(size, dtype=object)
    term_of_word[term_words] = terms
    entry_terms = term_of_word[entry_word].tolist()
    bounds = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(entry_doc, minlength=n), out=bounds[1:])
    doc_bounds = bounds.tolist()
    terms_of_doc = [tuple(entry_terms[start:stop])
                    for start, stop in zip(doc_bounds[:-1], doc_bounds[1:], strict=True)]
    doc_len = np.bincount(entry_doc, weights=entry_count, minlength=n).astype(np.int64).tolist()
    slots, counts = entry_doc[by_term].astype(np.int32), entry_count[by_term].astype(np.int32)
    return terms, starts, slots, counts, terms_of_doc, doc_len
