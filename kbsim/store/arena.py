"""The store's search index: BM25 over postings held in numpy arrays, an arena of term blocks.

:class:`ArenaIndex` answers every call of :class:`kbsim.store.bm25.BM25Index` (the plain
reference, kept as the path the tests hold this one to) with the same results, bit for bit:

- each term owns a block of cells in the arena, three int32 arrays (a document's slot, its
  term frequency, and the document's stamp when the cell was written), with room to grow;
- a save bumps the document's stamp, so its older cells are stale and skipped, and appends
  its new cells to a short log (a few contiguous writes; each logged cell points to its
  term's previous one), which searches read beside the blocks; a term's document
  frequency is the count of its live cells;
- a full log is merged into the blocks in one pass: a block without room is compacted in
  place when its live cells fill at most half of it, else moved to the end of the arena at
  twice the size, and the whole arena is laid out afresh when stale and abandoned cells
  pass half of it;
- a copy (each simulated day's, of its seed's starting index) shares the original's cells
  copy-on-write: they become the base of both, never written again, and each one's saves
  go to an arena of its own (read beside the base; a document saved since is stale in the
  base by its own stamp); a copy lays its live cells out into its own arena only once
  three in four of the base's are stale to it; the forward cells already written are
  shared the same way;
- each document keeps its terms and counts (its forward cells), to un-count them at its
  next save and to find, for a query's candidates, their counts of a common word without
  reading that word's long postings.

Why it exists: the dict index held a Python object per posting (48 bytes; a day's copy of a
100,000-article index took 2.5 s), and a save into a large one went through long dicts. Here
a copy is a few array passes, and a save a few vectorised writes.

Scores are the plain path's, operation by operation: each term's weight by ``math.log``,
each (term, document) contribution by the same expression, and each document's score
summed in query-term order one IEEE add at a time (a Python loop over a query's few cells,
``np.bincount`` over cells sorted stably into that order, or columns added one after
another; never ``np.sum``, which sums pairwise); ties are broken by document id, with
stable sorts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import chain, count, islice

import numpy as np

from kbsim.store.analyzer import ASCII, Analyzer
from kbsim.store.bm25 import term_weight
from kbsim.store.bulk import stable_argsort, token_blocks
from kbsim.store.vocabulary import PackedVocabulary, VocabularyTermIds, VocabularyTerms
from kbsim.store.written import content_text

#: A query term with more live postings than this has its postings probed for the
#: candidates of the query's other terms, when that is exact (as :class:`BM25Index` does).
_LONG_POSTINGS = 256
#: A search of at most this many cells is scored in a Python loop (numpy's fixed cost per
#: call is more than the loop's on a few cells).
_LOOP_CELLS = 128
#: search_many ranks a query alone (through :meth:`ArenaIndex.search`, which can prune)
#: when one of its terms has more cells than this; the others are ranked in one batch.
_BATCH_TERM_CELLS = 4096
#: search_many takes at most this many cells of postings into one batch (each cell takes
#: about 75 bytes of temporaries: at 1 << 21, 150 MiB at the title check of a 100,000-article
#: day, and no faster)...
_BATCH_CELLS = 1 << 19
#: ...and at most this many queries (their numbers are sorted as 16-bit keys).
_BATCH_QUERIES = 1 << 16
#: A save's cells wait in a log of this many at most before they are merged into the blocks.
_LOG_CELLS = 2048
#: fill_texts counts the (document, term) entries of this many tokens at a time (one sort).
_BLOCK_TOKENS = 1 << 21
#: The smallest block a term is given.
_MIN_BLOCK = 2
#: Queries whose terms search_many keeps (a query's terms do not depend on the index).
_QUERY_TERMS_KEPT = 100_000
#: The arena is laid out afresh only past this many cells (smaller ones cost nothing to keep).
_COMPACT_MIN = 1 << 12

#: The arrays of the arena's cells, of the log's and of the forward cells, by name (one 1-D
#: array each: numpy gathers rows of a 2-D array slowly).
_CELL_ARRAYS = ("_cell_slot", "_cell_tf", "_cell_stamp")
_BASE_ARRAYS = ("_base_slot", "_base_tf", "_base_stamp")
_LOG_ARRAYS = ("_log_term", "_log_slot", "_log_tf", "_log_stamp", "_log_prev")
#: Each term's record in an index's own table (:attr:`ArenaIndex._term`): its block in the
#: arena (start, capacity, cells used), its live postings, its last cell in the log (-1:
#: none), and how many of its cells in the base are live. 32 bytes, two records to a cache
#: line: a save or a search reads a term's fields from one line, where eight arrays of one
#: field each cost a cache miss a field (at 100,000 articles the terms' arrays are far
#: larger than the caches, and most of a save's and a search's terms are a miss).
_TERM = np.dtype(
    [("start", np.int64), ("cap", np.int32), ("used", np.int32), ("df", np.int32), ("log_head", np.int32),
     ("base_live", np.int32)],
    align=True,
)
#: Each term's run of cells in the base (:attr:`ArenaIndex._base_term`): its start and its
#: cells. A table of its own, as the base's cells are: never written again, so shared with copies.
_BASE_TERM = np.dtype([("start", np.int64), ("used", np.int32)], align=True)
#: Bytes in a cache line (x86-64's and most ARM cores').
_CACHE_LINE = 64
#: The attributes that are views of one field of a table, by table: each table's fields read
#: and written as the arrays they were before (vectorised), the table kept one record a term.
_TERM_VIEWS = {"_start": "start", "_cap": "cap", "_used": "used", "_df": "df", "_log_head": "log_head",
               "_base_live": "base_live"}
_BASE_TERM_VIEWS = {"_base_start": "start", "_base_used": "used"}


def _room(live: np.ndarray) -> np.ndarray:
    """Block sizes for ``live`` cells laid out afresh: an eighth more, and two at least (none
    for a term without postings)."""
    return live + np.where(live > 0, np.maximum(_MIN_BLOCK, live >> 3), 0)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenated ranges ``starts[i] : starts[i] + lengths[i]``, in order."""
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if ends.size else 0
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - lengths), lengths)


def _grown(array: np.ndarray, needed: int, fill=0) -> np.ndarray:
    """``array`` itself if it has ``needed`` items, else a copy at least twice as long."""
    if needed <= array.size:
        return array
    return _spare(array, array.size, max(needed, 2 * array.size, 16), fill)


def _spare(array: np.ndarray, used: int, size: int, fill=0) -> np.ndarray:
    """A new array of ``size`` items holding ``array[:used]``, the rest ``fill``. Zeros past
    the copied part are pages the system maps when first written: room that costs no
    memory until it is used."""
    spare = np.zeros(size, dtype=array.dtype) if fill == 0 else np.full(size, fill, dtype=array.dtype)
    spare[:used] = array[:used]
    return spare


def _narrowest(values: np.ndarray) -> np.dtype:
    """The narrowest of uint8, uint16 and int32 that holds every one of ``values`` (counts:
    none negative), for arrays never written again."""
    top = int(values.max()) if values.size else 0
    return np.dtype(np.uint8 if top <= 0xFF else np.uint16 if top <= 0xFFFF else np.int32)


def _term_table(size: int, like: np.ndarray | None = None) -> np.ndarray:
    """A table of ``size`` :data:`_TERM` records, zeros (pages mapped only once written), or
    holding ``like``'s records first, its first record at the start of a cache line (numpy
    aligns an array to 16 bytes: a 32-byte record would straddle two lines)."""
    raw = np.zeros(size * _TERM.itemsize + _CACHE_LINE, dtype=np.uint8)
    skip = -raw.ctypes.data % _CACHE_LINE
    table = raw[skip : skip + size * _TERM.itemsize].view(_TERM)
    if like is not None:
        table[: like.size] = like
    return table


def _group_starts(keys: np.ndarray) -> np.ndarray:
    """For sorted ``keys``: True where a run of equal keys starts."""
    first = np.empty(keys.size, dtype=bool)
    first[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    return first


class ArenaIndex:
    """Okapi BM25 with the title weighted ``title_weight`` times the body, over postings in
    numpy arrays: the calls and the results of :class:`kbsim.store.bm25.BM25Index`.

    Args:
        k1: term-frequency saturation.
        b: length normalisation.
        title_weight: how many body occurrences one title occurrence counts as.
        analyzer: how text becomes terms (default :data:`~kbsim.store.analyzer.ASCII`);
            documents and queries go through the same one.
    """

    # the fields of the terms' tables, each seen as an array (views: _set_terms, _set_base_terms)
    _start: np.ndarray
    _cap: np.ndarray
    _used: np.ndarray
    _df: np.ndarray
    _log_head: np.ndarray
    _base_live: np.ndarray
    _base_start: np.ndarray
    _base_used: np.ndarray

    def __init__(self, k1: float = 1.2, b: float = 0.75, title_weight: int = 3, *,
                 analyzer: Analyzer = ASCII) -> None:
        self.k1 = k1
        self.b = b
        self.title_weight = title_weight
        self.analyzer = analyzer
        self._tokenize = analyzer.tokenize
        # documents, by a dense slot kept for the index's life
        self._slot_of: dict[str, int] = {}
        self._doc_ids: list[str] = []
        self._stamp = np.zeros(0, dtype=np.int32)  # a cell is live when it has its slot's stamp
        self._doc_len = np.zeros(0, dtype=np.float64)  # weighted length; 0 when not indexed
        # the same two as lists, for the scoring loop over a few cells (read an item at a time)
        self._stamps: list[int] = []
        self._lengths: list[int] = []
        self._fwd_start = np.zeros(0, dtype=np.int64)  # where the document's forward cells start
        self._fwd_len = np.zeros(0, dtype=np.int32)  # how many; -1: not indexed
        # forward cells: (term, count) of each indexed document, a run per document. Those
        # before _fwd_base are shared with copies, never written again; the later ones, this
        # index's own, are at [position - _fwd_base] of _fwd_term and _fwd_tf.
        self._fwd_base_term = np.zeros(0, dtype=np.int32)
        self._fwd_base_tf = np.zeros(0, dtype=np.int32)
        self._fwd_base = 0
        self._fwd_term = np.zeros(0, dtype=np.int32)
        self._fwd_tf = np.zeros(0, dtype=np.int32)
        self._fwd_end = 0
        self._fwd_dead = 0
        # terms, by a dense number: each one's record (_TERM), its fields also seen as arrays
        # (_start, _cap, _used, _df, _log_head, _base_live: views of the table, _set_terms)
        # (a first fill from a packed vocabulary: a table over its words, no string a term)
        self._term_id: dict[str, int] | VocabularyTermIds = {}
        self._terms: list[str] | VocabularyTerms = []
        self._set_terms(_term_table(0))
        # the arena: (slot, count, stamp) of each cell
        self._cell_slot = np.zeros(0, dtype=np.int32)
        self._cell_tf = np.zeros(0, dtype=np.int32)
        self._cell_stamp = np.zeros(0, dtype=np.int32)
        self._cell_end = 0
        self._cell_dead = 0  # stale cells (in blocks or the log), and cells of abandoned blocks
        # the base: an arena shared with copies, never written again (empty until a copy is
        # made). Each term's cells in it (start, cells, and how many are live), then its
        # block in the arena above; a document's live cells are all in the base, or all in
        # the arena or the log (those it was saved with since), as _in_base says
        self._base_slot = np.zeros(0, dtype=np.int32)
        self._base_tf = np.zeros(0, dtype=np.int32)
        self._base_stamp = np.zeros(0, dtype=np.int32)
        self._set_base_terms(np.zeros(0, dtype=_BASE_TERM))  # _base_start, _base_used: its views
        self._in_base = np.zeros(0, dtype=bool)
        self._base_cells = 0  # the cells of the terms' runs in the base
        self._base_dead = 0  # how many of them are stale
        # the log: (term, slot, count, stamp) of the cells written since the last merge, in
        # order, and each one's term's previous cell in the log (-1: none)
        self._log_term = np.zeros(_LOG_CELLS, dtype=np.int32)
        self._log_slot = np.zeros(_LOG_CELLS, dtype=np.int32)
        self._log_tf = np.zeros(_LOG_CELLS, dtype=np.int32)
        self._log_stamp = np.zeros(_LOG_CELLS, dtype=np.int32)
        self._log_prev = np.zeros(_LOG_CELLS, dtype=np.int32)
        self._log_end = 0
        self._n_docs = 0
        self._total_len = 0
        # doc ids rise with their slots (so ties by slot are ties by id); else each slot's rank
        self._ids_rising = True
        self._id_rank: np.ndarray | None = None
        # the documents' and the terms' dicts and lists are shared with copies until changed
        self._own_docs = True
        self._own_terms = True
        # the vocabulary add_words last had (or fill was given), and each of its words' term
        # number (-1: none known yet)
        self._vocabulary: Sequence[str] | None = None
        self._vocabulary_terms = np.zeros(0, dtype=np.int32)
        self._vocabulary_partial = False  # some of its words may have no term number yet
        # query -> the numbers of its distinct terms, for search_many (each copy keeps its own:
        # copies number new terms apart)
        self._query_terms: dict[str, tuple[int, ...]] = {}

    def __len__(self) -> int:
        return self._n_docs

    def _set_terms(self, table: np.ndarray) -> None:
        """``table`` (of :data:`_TERM` records) as the terms' table, and its fields' views."""
        self._term = table
        for name, field in _TERM_VIEWS.items():
            setattr(self, name, table[field])

    def _set_base_terms(self, table: np.ndarray) -> None:
        """``table`` (of :data:`_BASE_TERM` records) as the terms' runs in the base, and its views."""
        self._base_term = table
        for name, field in _BASE_TERM_VIEWS.items():
            setattr(self, name, table[field])

    def __contains__(self, doc_id: str) -> bool:
        slot = self._slot_of.get(doc_id)
        return slot is not None and self._fwd_len[slot] >= 0

    # -- changes ----------------------------------------------------------------------

    def add(self, doc_id: str, title: str, content: str) -> None:
        """Index (or re-index) one document."""
        counts: dict[str, int] = {}
        get = counts.get
        tokens = self._tokenize
        for term in tokens(content):
            counts[term] = get(term, 0) + 1
        title_weight = self.title_weight
        for term in tokens(title):
            counts[term] = get(term, 0) + title_weight
        slot = self._slot_of.get(doc_id)
        if slot is None:
            slot = self._new_slot(doc_id)
        old_len = int(self._fwd_len[slot])
        self._unindex(slot)
        term_id = self._term_id
        tids = list(map(term_id.get, counts))
        if None in tids:
            tids = [term_id[term] if term in term_id else self._new_term(term) for term in counts]
        tfs = list(counts.values())
        self._index(slot, np.array(tids, dtype=np.int64), np.array(tfs, dtype=np.int32), old_len)
        length = sum(tfs)
        self._doc_len[slot] = length
        self._lengths[slot] = length
        self._n_docs += 1
        self._total_len += length

    def add_words(self, doc_id: str, title: str, vocabulary: Sequence[str], words: np.ndarray) -> None:
        """:meth:`add` of a content written from ``vocabulary``'s ``words``
        (:func:`~kbsim.store.written.content_text`), whose words are each a token of its own
        (:func:`~kbsim.store.written.check_vocabulary`, the caller's to vouch for): its terms
        counted from the words' numbers, through each word's term number.

        Only the ASCII analyzer takes each checked vocabulary word as its own term; an index
        with another analyzer writes the text and adds it (the same state as :meth:`add`)."""
        if self.analyzer is not ASCII:
            self.add(doc_id, title, content_text(vocabulary, words.tolist()))
            return
        table = self._vocabulary_table(vocabulary)
        tids = table[words]
        if self._vocabulary_partial and words.size and tids.min() < 0:  # words without a term number yet
            for word in np.unique(words[tids < 0]).tolist():
                term = vocabulary[word]
                table[word] = self._term_id[term] if term in self._term_id else self._new_term(term)
            tids = table[words]
        counts = Counter(tids.tolist())
        get, lookup, title_weight = counts.get, self._term_id.get, self.title_weight
        for term in self._tokenize(title):
            tid = lookup(term)  # one probe of the (large) term dict a title term
            if tid is None:
                tid = self._new_term(term)
            counts[tid] = get(tid, 0) + title_weight
        slot = self._slot_of.get(doc_id)
        if slot is None:
            slot = self._new_slot(doc_id)
        old_len = int(self._fwd_len[slot])
        self._unindex(slot)
        n = len(counts)
        tfs = np.fromiter(counts.values(), dtype=np.int32, count=n)
        self._index(slot, np.fromiter(counts, dtype=np.int64, count=n), tfs, old_len)
        length = int(tfs.sum())
        self._doc_len[slot] = length
        self._lengths[slot] = length
        self._n_docs += 1
        self._total_len += length

    def _vocabulary_table(self, vocabulary: Sequence[str]) -> np.ndarray:
        """Each word of ``vocabulary``'s term number (-1: no term yet), made once a vocabulary."""
        if self._vocabulary is not vocabulary:
            get = self._term_id.get
            self._vocabulary_terms = np.fromiter(
                (get(word, -1) for word in vocabulary), dtype=np.int32, count=len(vocabulary)
            )
            self._vocabulary = vocabulary
            self._vocabulary_partial = True
        return self._vocabulary_terms

    def remove(self, doc_id: str) -> None:
        """Drop one document; a missing one is ignored."""
        slot = self._slot_of.get(doc_id)
        if slot is not None:
            self._unindex(slot)
            self._compact_if_due()

    def _new_slot(self, doc_id: str) -> int:
        if not self._own_docs:
            self._slot_of, self._doc_ids = dict(self._slot_of), list(self._doc_ids)
            self._own_docs = True
        slot = len(self._doc_ids)
        if self._ids_rising and slot and not doc_id > self._doc_ids[-1]:
            self._ids_rising = False
        self._slot_of[doc_id] = slot
        self._doc_ids.append(doc_id)
        self._id_rank = None
        self._stamp = _grown(self._stamp, slot + 1)
        self._doc_len = _grown(self._doc_len, slot + 1)
        self._stamps.append(0)
        self._lengths.append(0)
        self._fwd_start = _grown(self._fwd_start, slot + 1)
        self._fwd_len = _grown(self._fwd_len, slot + 1, fill=-1)
        self._in_base = _grown(self._in_base, slot + 1)
        return slot

    def _new_term(self, term: str) -> int:
        if not self._own_terms:
            self._term_id, self._terms = self._term_id.copy(), self._terms.copy()
            self._own_terms = True
        tid = len(self._terms)
        self._term_id[term] = tid
        self._terms.append(term)
        if tid >= self._term.size:
            size = max(tid + 1, 2 * self._term.size, 16)
            table = _term_table(size, self._term)
            table["log_head"][self._term.size :] = -1
            self._set_terms(table)
            self._set_base_terms(_spare(self._base_term, self._base_term.size, size))
        return tid

    def _unindex(self, slot: int) -> None:
        """Stale a document's cells and un-count its terms (nothing if it is not indexed)."""
        n = int(self._fwd_len[slot])
        if n < 0:
            return
        start, base = int(self._fwd_start[slot]), self._fwd_base
        if start >= base:
            terms = self._fwd_term[start - base : start - base + n]
        else:
            terms = self._fwd_base_term[start : start + n]
        # numpy indexes with intp: int32 indices are converted at each use (twice in each
        # ``-=``), which took as long as the writes (250x: 55 µs a save for these two, 25 µs cast once)
        terms = terms.astype(np.intp)
        self._df[terms] -= 1
        # (the stamps and the lengths as lists mirror their arrays: read from the lists)
        stamp = self._stamps[slot] + 1
        self._stamp[slot] = self._stamps[slot] = stamp
        self._total_len -= self._lengths[slot]
        self._lengths[slot] = 0
        if self._in_base[slot]:  # its cells in the base: stale there, costing this index nothing
            self._base_live[terms] -= 1
            self._in_base[slot] = False
            self._base_dead += n
        else:
            self._cell_dead += n
        self._fwd_dead += n
        self._fwd_len[slot] = -1
        self._n_docs -= 1
        self._doc_len[slot] = 0.0

    def _index(self, slot: int, tids: np.ndarray, tfs: np.ndarray, old_len: int = -1) -> None:
        """Write a document's cells (terms ``tids``, distinct, with counts ``tfs``) to the log
        and to its forward cells; ``old_len``: how many forward cells it had (-1: none)."""
        k = tids.size
        end = self._log_end
        if end + k > self._log_term.size:
            self._merge_log()
            end = 0
            if k > self._log_term.size:
                for name in _LOG_ARRAYS:
                    setattr(self, name, np.zeros(k, dtype=np.int32))
        stop = end + k
        self._log_term[end:stop] = tids
        self._log_slot[end:stop] = slot
        self._log_tf[end:stop] = tfs
        self._log_stamp[end:stop] = self._stamps[slot]
        self._log_prev[end:stop] = self._log_head[tids]
        self._log_head[tids] = np.arange(end, stop)
        self._log_end = stop
        self._df[tids] += 1
        # the forward cells: in place of the document's last ones when it has its own and the
        # new ones fit (the rest of them dead), else at the end
        start, base = int(self._fwd_start[slot]), self._fwd_base
        if start >= base and k <= old_len:
            self._fwd_dead -= k
        else:
            if self._fwd_end + k > base + self._fwd_term.size:
                self._compact_forward(k)
            start, base = self._fwd_end, self._fwd_base
            self._fwd_end += k
        self._fwd_term[start - base : start - base + k] = tids
        self._fwd_tf[start - base : start - base + k] = tfs
        self._fwd_start[slot] = start
        self._fwd_len[slot] = k

    def _merge_log(self) -> None:
        """Write the log's live cells into their terms' blocks, and empty it."""
        n = self._log_end
        self._log_end = 0
        if not n:
            return
        terms, slots = self._log_term[:n], self._log_slot[:n]
        self._log_head[terms] = -1
        live = np.flatnonzero(self._log_stamp[:n] == self._stamp[slots])
        self._cell_dead -= n - live.size
        if not live.size:
            return
        order = live[np.argsort(terms[live], kind="stable")]
        terms = terms[order]
        first = _group_starts(terms)
        tids = terms[first].astype(np.int64)
        group_start = np.flatnonzero(first)
        added = np.diff(np.append(group_start, terms.size))
        grow = self._used[tids] + added > self._cap[tids]
        if grow.any():
            self._make_room(tids[grow], added[grow])
        at = np.repeat(self._start[tids] + self._used[tids] - group_start, added) + np.arange(terms.size)
        self._cell_slot[at] = self._log_slot[order]
        self._cell_tf[at] = self._log_tf[order]
        self._cell_stamp[at] = self._log_stamp[order]
        self._used[tids] += added
        self._compact_if_due()

    def _make_room(self, tids: np.ndarray, added: np.ndarray) -> None:
        """Room for ``added`` more cells in each block of ``tids`` (distinct terms), keeping
        its live cells (the term's live postings less the ``added`` ones in the log and those
        in the base): in place when they and the new ones fill at most half of it, else in a
        block twice their size at the end of the arena."""
        start, cap, used = self._start[tids], self._cap[tids], self._used[tids]
        live = self._df[tids] - self._base_live[tids] - added
        cells = _ranges(start, used)
        cells = cells[self._cell_stamp[cells] == self._stamp[self._cell_slot[cells]]]
        in_place = 2 * (live + added) <= cap
        new_cap = np.where(in_place, cap, np.maximum(_MIN_BLOCK, 2 * (live + added)))
        moved = np.where(in_place, 0, new_cap)
        new_start = np.where(in_place, start, self._cell_end + np.cumsum(moved) - moved)
        end = self._cell_end + int(moved.sum())
        if end > self._cell_slot.size:
            size = max(end, 2 * self._cell_slot.size, 1024)
            for name in _CELL_ARRAYS:  # the cells past the end are zeros: not copied, not mapped
                setattr(self, name, _spare(getattr(self, name), self._cell_end, size))
        target = _ranges(new_start, live)
        for name in _CELL_ARRAYS:
            array = getattr(self, name)
            array[target] = array[cells]
        self._cell_end = end
        # the stale cells are dropped; a moved block's old cells, all of them, abandoned
        self._cell_dead += int(cap[~in_place].sum()) - int((used - live).sum())
        self._start[tids] = new_start
        self._cap[tids] = new_cap
        self._used[tids] = live

    def _compact_if_due(self) -> None:
        if self._base_cells > _COMPACT_MIN and 4 * self._base_dead > 3 * self._base_cells:
            # searches would read three stale cells of the base for each live one: the live
            # ones laid out into the arena (costing as much memory as the base's live cells)
            self._compact_cells(with_base=True)
        elif self._cell_end > _COMPACT_MIN and 2 * self._cell_dead > self._cell_end:
            # half of the arena stale or abandoned. (At a third, the 250x day's arena held
            # 1.9 cells for each live one at its end rather than 2.9, but its peak rose: a
            # layout holds the old arena and the new one at once, and it made five more.)
            self._compact_cells()

    def _compact_cells(self, *, with_base: bool = False) -> None:
        """Lay the arena's live cells out afresh, each block with room for as many again;
        ``with_base``: the base's too, into the arena (this index shares no base after it)."""
        if self._log_end:
            self._merge_log()  # which may lay them out
            if not self._cell_dead and not (with_base and self._base_slot.size):
                return
        arrays, start, cap, live = self._laid_out(with_base)
        self._cell_slot, self._cell_tf, self._cell_stamp = arrays
        n_terms = len(self._terms)
        self._start[:n_terms], self._cap[:n_terms], self._used[:n_terms] = start, cap, live
        self._cell_end = int(start[-1] + cap[-1]) if n_terms else 0
        self._cell_dead = 0
        if with_base:
            self._drop_base()

    def _drop_base(self) -> None:
        """Let go of the base (its cells are all stale, or laid out into the arena)."""
        for name in _BASE_ARRAYS:
            setattr(self, name, np.zeros(0, dtype=np.int32))
        # new arrays, not these zeroed: copies may share them (the terms' table is this index's own)
        self._set_base_terms(np.zeros_like(self._base_term))
        self._in_base = np.zeros_like(self._in_base)
        self._base_live[:] = 0
        self._base_cells = self._base_dead = 0

    def _laid_out(self, with_base: bool):
        """The arena's live cells (``with_base``: and the base's, each term's base cells
        first) in new arrays, each block with room for as many again (``_MIN_BLOCK`` at
        least; none for a term without postings): the three arrays, and each term's block
        start, capacity and cells. The arrays are zeros the system maps only when written, so
        a block's room costs memory only once it is used: appends fill it in place, instead
        of moving the block and abandoning its old cells.

        Made a chunk of terms at a time (each chunk's cells at most a few million), so no
        array of every cell's position is made on the way; and one array at a time, each of
        the arena's own let go once its new one is made (which cells are live is found
        first, a byte a cell), so the old arena and the new one are not held whole at once:
        that was the 1,000,000-article day's peak (330 MiB over the rest of its day).
        """
        n_terms = len(self._terms)
        live = self._df[:n_terms].astype(np.int64)
        if not with_base:
            live -= self._base_live[:n_terms]
        cap = live + np.where(live > 0, np.maximum(_MIN_BLOCK, live), 0)
        start = np.cumsum(cap) - cap
        end = int(cap.sum())
        # each source's arrays by name (read when laid out, so the arena's old ones can go),
        # its terms' starts, and its cells of each term
        sources = [(_CELL_ARRAYS, self._start, self._used[:n_terms].astype(np.int64))]
        if with_base:
            sources.insert(0, (_BASE_ARRAYS, self._base_start, self._base_used[:n_terms].astype(np.int64)))
        ends = sum((np.cumsum(used) for _, _, used in sources), np.zeros(n_terms, dtype=np.int64))
        chunks, first = [], 0
        while first < n_terms:
            done = int(ends[first - 1]) if first else 0
            last = min(n_terms, max(first + 1, int(np.searchsorted(ends, done + _BLOCK_TOKENS, side="right"))))
            chunks.append((first, last))
            first = last
        # which of each source's cells are live, chunk by chunk
        kept = []
        for first, last in chunks:
            masks = []
            for names, starts, used in sources:
                cells = _ranges(starts[first:last], used[first:last])
                masks.append(getattr(self, names[2])[cells] == self._stamp[getattr(self, names[0])[cells]])
            kept.append(masks)
        arrays = []
        for column in range(len(_CELL_ARRAYS)):
            new = np.zeros(max(end + end // 4, 1024), dtype=np.int32)  # and room to move into
            for (first, last), masks in zip(chunks, kept, strict=True):
                parts, owners = [], []
                for (names, starts, used), keep in zip(sources, masks, strict=True):
                    cells = _ranges(starts[first:last], used[first:last])[keep]
                    parts.append(getattr(self, names[column])[cells])
                    owners.append(np.repeat(np.arange(first, last), used[first:last])[keep])
                if len(parts) == 1:
                    values = parts[0]
                else:  # each term's cells together, its base ones first
                    values = np.concatenate(parts)[np.argsort(np.concatenate(owners), kind="stable")]
                if column == 2 and not values.any():
                    continue  # stamps of 0, as the new array's are: writing them would only map pages
                new[_ranges(start[first:last], live[first:last])] = values
            setattr(self, _CELL_ARRAYS[column], new)  # the arena's old array let go
            arrays.append(new)
        return arrays, start, cap, live

    def _compact_forward(self, extra: int) -> None:
        """Room for ``extra`` more forward cells of this index's own: every indexed
        document's laid out afresh, its own, when at least half of all are dead, else its own
        arrays doubled."""
        own = self._fwd_end - self._fwd_base
        if 2 * self._fwd_dead < self._fwd_end:
            self._fwd_term = _grown(self._fwd_term, own + extra)
            self._fwd_tf = _grown(self._fwd_tf, own + extra)
            return
        n_slots = len(self._doc_ids)
        lengths = np.maximum(self._fwd_len[:n_slots], 0).astype(np.int64)
        terms, tfs = self._forward_cells(_ranges(self._fwd_start[:n_slots], lengths))
        size = max(2 * (terms.size + extra), 1024)
        self._fwd_term, self._fwd_tf = _spare(terms, terms.size, size), _spare(tfs, tfs.size, size)
        self._fwd_base_term = self._fwd_base_tf = np.zeros(0, dtype=np.int32)
        self._fwd_base = 0
        self._fwd_start[:n_slots] = np.cumsum(lengths) - lengths
        self._fwd_end = terms.size
        self._fwd_dead = 0

    def _forward_run(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """An indexed document's forward cells: its terms and their counts."""
        start, n, base = int(self._fwd_start[slot]), int(self._fwd_len[slot]), self._fwd_base
        if start >= base:
            return self._fwd_term[start - base : start - base + n], self._fwd_tf[start - base : start - base + n]
        return self._fwd_base_term[start : start + n], self._fwd_base_tf[start : start + n]

    def _forward_cells(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The terms and counts of the forward cells at ``positions``."""
        base = self._fwd_base
        if not base:
            return self._fwd_term[positions], self._fwd_tf[positions]
        own = positions >= base
        terms, tfs = np.empty(positions.size, dtype=np.int32), np.empty(positions.size, dtype=np.int32)
        terms[own], tfs[own] = self._fwd_term[positions[own] - base], self._fwd_tf[positions[own] - base]
        shared = ~own
        terms[shared], tfs[shared] = self._fwd_base_term[positions[shared]], self._fwd_base_tf[positions[shared]]
        return terms, tfs

    # -- first fills ------------------------------------------------------------------

    def fill(self, doc_ids: list[str], vocabulary: Sequence[str], content_words, title_words) -> None:
        """Index documents into an empty index from their words as vocabulary indices: row
        ``i`` of ``content_words`` and of ``title_words`` are the tokens of document
        ``doc_ids[i]``'s content and title, as the index's analyzer gives them (2-D integer
        arrays, or ragged sequences of rows). The state is :meth:`add` called for each in turn.

        The caller vouches that the indices are the texts' tokens. The postings are laid out
        from the documents' (term, count) entries with a few sorts, a block of documents at
        a time, with no Python object per posting.
        """
        if self._doc_ids:
            raise ValueError("fill() builds an empty index; use add() on one that has documents")
        n = len(doc_ids)
        slot_of = {doc_id: slot for slot, doc_id in enumerate(doc_ids)}
        if len(slot_of) != n:  # add() would re-index a repeated one; fill() numbers each once
            raise ValueError("fill(): a document id repeats")
        # the same string at two indices is one term: number the distinct strings (the
        # padding of ragged rows gets one more number, a token no document has)
        terms: list[str] | tuple[VocabularyTermIds, VocabularyTerms]
        if type(vocabulary) is PackedVocabulary:  # numbered alike, with no string a word
            numbers, firsts = vocabulary.first_numbers()
            terms = (VocabularyTermIds(vocabulary, numbers), VocabularyTerms(vocabulary, firsts))
            canonical, distinct = numbers.astype(np.int64), firsts.size
        else:
            number: dict[str, int] = {}
            canonical = np.fromiter(
                (number.setdefault(word, len(number)) for word in vocabulary), dtype=np.int64, count=len(vocabulary)
            )
            terms, distinct = list(number), len(number)
        canonical = np.append(canonical, distinct)

        def entries():
            blocks = token_blocks(content_words, title_words, n, len(vocabulary), self.title_weight)
            for first, tokens, weights in blocks:
                doc, word, tf = _entries(canonical[tokens], weights)
                real = word != distinct
                yield (doc[real] + first).astype(np.int32), word[real].astype(np.int32), tf[real].astype(np.int32)

        if isinstance(content_words, np.ndarray) and isinstance(title_words, np.ndarray):
            bound = content_words.size + title_words.size
        else:
            bound = sum(map(len, content_words)) + sum(map(len, title_words))
        self._fill_entries(doc_ids, slot_of, terms, entries(), bound)
        # each vocabulary word's term number, for add_words: every distinct word is a term
        # (one no document has holds no postings, and searches skip it as the plain path does)
        self._vocabulary, self._vocabulary_terms = vocabulary, canonical[:-1].astype(np.int32)
        self._vocabulary_partial = False

    def fill_texts(self, docs: Sequence[tuple[str, str, str]]) -> None:
        """:meth:`fill` from ``(doc_id, title, content)`` texts: each tokenized, its tokens
        numbered in a vocabulary of their own. The state :meth:`add` gives for each in turn.

        Why it exists: a first fill of 100,000 help articles from files. Every token is
        numbered into one flat list (a dict lookup each, in C), and each block of documents'
        (document, term) counts is one sort of its tokens: no array or padding per document.
        """
        code_of: defaultdict[str, int] = defaultdict(count().__next__)  # a new token: the next number
        number = code_of.__getitem__
        codes: list[int] = []
        extend = codes.extend
        content_len, title_len = [], []
        terms_of = self._tokenize
        for _doc_id, title, content in docs:
            tokens = terms_of(content)
            extend(map(number, tokens))
            content_len.append(len(tokens))
            tokens = terms_of(title)
            extend(map(number, tokens))
            title_len.append(len(tokens))
        doc_ids = [doc_id for doc_id, _, _ in docs]
        if self._doc_ids:
            raise ValueError("fill() builds an empty index; use add() on one that has documents")
        slot_of = {doc_id: slot for slot, doc_id in enumerate(doc_ids)}
        if len(slot_of) != len(doc_ids):
            raise ValueError("fill(): a document id repeats")
        entries = _token_entries(
            np.array(codes, dtype=np.int64), np.array(content_len, dtype=np.int64),
            np.array(title_len, dtype=np.int64), len(code_of), self.title_weight,
        )
        self._fill_entries(doc_ids, slot_of, list(code_of), entries, len(codes))

    def _fill_entries(self, doc_ids, slot_of, terms, entries, bound: int) -> None:
        """The state of an index of ``doc_ids`` whose (document, term, count) entries come in
        ``entries``, blocks of three int32 arrays (documents in order, each one's terms
        distinct; terms numbered as in ``terms``, the index's terms in order, or a term
        table and its terms' list made already), at most ``bound`` of them in all.

        The entries are written straight into the forward cells (each document's terms and
        counts), then laid out into the terms' blocks a block of documents at a time, so no
        array of every posting is made on the way (at a million articles, 54 million).
        """
        n = len(doc_ids)
        fwd_term = np.zeros(max(bound, 1), dtype=np.int32)  # zeros: pages mapped only once written
        fwd_tf = np.zeros(max(bound, 1), dtype=np.int32)
        fwd_len = np.zeros(n, dtype=np.int64)
        doc_len = np.zeros(n)
        end = 0
        for doc, word, tf in entries:
            k = word.size
            fwd_term[end : end + k] = word
            fwd_tf[end : end + k] = tf
            if k:
                first, last = int(doc[0]), int(doc[-1]) + 1
                fwd_len[first:last] += np.bincount(doc - first, minlength=last - first)
                doc_len[first:last] += np.bincount(doc - first, weights=tf, minlength=last - first)
            end += k
        fwd_term, fwd_tf = fwd_term[:end], fwd_tf[:end]
        if isinstance(terms, list):
            self._term_id, self._terms = {term: tid for tid, term in enumerate(terms)}, list(terms)
        else:
            self._term_id, self._terms = terms
        df = np.bincount(fwd_term, minlength=len(self._terms)).astype(np.int32)
        cap = _room(df)
        start = np.cumsum(cap) - cap
        cell_end = int(cap.sum(dtype=np.int64))
        cell_slot = np.zeros(max(cell_end, 1024), dtype=np.int32)
        cell_tf = np.zeros(cell_slot.size, dtype=np.int32)
        # each block of documents' entries grouped by term (stably: documents stay in order
        # within a term), after the cells earlier blocks gave each term
        filled = start.copy()
        ends = np.cumsum(fwd_len)
        first_doc = 0
        while first_doc < n:
            done = int(ends[first_doc - 1]) if first_doc else 0
            last_doc = min(n, max(first_doc + 1, int(np.searchsorted(ends, done + _BLOCK_TOKENS, side="right"))))
            stop = int(ends[last_doc - 1])
            words = fwd_term[done:stop]
            order = stable_argsort(words)
            grouped = words[order]
            group = np.flatnonzero(_group_starts(grouped))
            counts = np.diff(np.append(group, grouped.size))
            at = filled[grouped] + (np.arange(grouped.size) - np.repeat(group, counts))
            docs = np.repeat(np.arange(first_doc, last_doc, dtype=np.int32), fwd_len[first_doc:last_doc])
            cell_slot[at] = docs[order]
            cell_tf[at] = fwd_tf[done:stop][order]
            filled[grouped[group]] += counts
            first_doc = last_doc
        self._slot_of = slot_of
        self._doc_ids = list(doc_ids)
        self._ids_rising = all(a < b for a, b in zip(self._doc_ids, self._doc_ids[1:], strict=False))
        self._id_rank = None
        self._stamp = np.zeros(n, dtype=np.int32)
        self._doc_len = doc_len
        self._stamps = [0] * n
        self._lengths = doc_len.astype(np.int64).tolist()
        self._fwd_start = np.cumsum(fwd_len) - fwd_len
        self._fwd_len = fwd_len.astype(np.int32)
        self._fwd_term, self._fwd_tf = fwd_term, fwd_tf
        self._fwd_end = end
        self._fwd_dead = 0
        table = _term_table(df.size)
        table["start"], table["cap"], table["used"], table["df"], table["log_head"] = start, cap, df, df, -1
        self._set_terms(table)
        self._set_base_terms(np.zeros(df.size, dtype=_BASE_TERM))
        self._in_base = np.zeros(n, dtype=bool)
        self._cell_slot, self._cell_tf = cell_slot, cell_tf
        self._cell_stamp = np.zeros(cell_slot.size, dtype=np.int32)
        self._cell_end = cell_end
        self._cell_dead = 0
        self._n_docs = n
        self._total_len = int(fwd_tf.sum(dtype=np.int64))

    # -- searches ---------------------------------------------------------------------

    def _weight(self, df: int) -> float:
        """A term's idf times ``k1 + 1`` (:func:`kbsim.store.bm25.term_weight`)."""
        return term_weight(self._n_docs, df, self.k1)

    def _norms(self) -> tuple[float, float]:
        k1, b = self.k1, self.b
        # score = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))
        return k1 * (1.0 - b), k1 * b * self._n_docs / self._total_len

    def _cells_of(self, tids: list[int]):
        """The live cells of terms ``tids`` (distinct): their slots, counts, and each one's
        position in ``tids``; each term's cells in the base then in its block, term by term,
        then the log's term by term. A document's live cells are all in the base, all in the
        blocks, or (saved since the log was last merged) all in the log, so any way its own
        come in the order of ``tids``."""
        start, used, base_start, base_used = self._start, self._used, self._base_start, self._base_used
        cell = (self._cell_slot, self._cell_tf, self._cell_stamp)
        base = (self._base_slot, self._base_tf, self._base_stamp)
        parts, counts = [], []
        for tid in tids:
            first, n = int(base_start[tid]), int(base_used[tid])
            if n:
                parts.append((base, slice(first, first + n)))
            first, m = int(start[tid]), int(used[tid])
            parts.append((cell, slice(first, first + m)))
            counts.append(n + m)
        if len(parts) == 1:
            (slots, tf, stamps), part = parts[0]
            slots, tf, stamps = slots[part], tf[part], stamps[part]
        else:
            slots, tf, stamps = (np.concatenate([arrays[i][part] for arrays, part in parts]) for i in range(3))
        owner = np.repeat(np.arange(len(tids)), counts)
        if self._log_end:
            head, prev = self._log_head, self._log_prev
            logged, logged_owner = [], []
            for position, tid in enumerate(tids):
                at = int(head[tid])
                while at >= 0:
                    logged.append(at)
                    logged_owner.append(position)
                    at = int(prev[at])
            if logged:
                slots = np.concatenate([slots, self._log_slot[logged]])
                tf = np.concatenate([tf, self._log_tf[logged]])
                stamps = np.concatenate([stamps, self._log_stamp[logged]])
                owner = np.concatenate([owner, logged_owner])
        live = stamps == self._stamp[slots]
        if not live.all():
            slots, tf, owner = slots[live], tf[live], owner[live]
        return slots, tf, owner

    def _query(self, query: str) -> list[str]:
        """A query's terms: the analyzer's, its compound words split against the terms this
        index has (:meth:`~kbsim.store.analyzer.Analyzer.query_terms`), as :class:`BM25Index` splits them."""
        analyzer = self.analyzer
        if analyzer.split_query is None:
            return self._tokenize(query)
        get, df_of = self._term_id.get, self._df

        def known(term: str) -> bool:
            tid = get(term)
            return tid is not None and bool(df_of[tid])

        return analyzer.query_terms(query, known)

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` best ``(doc_id, score)`` pairs, best first, ties by id."""
        if self._n_docs == 0 or self._total_len == 0:  # no document has a term (text of no word)
            return []
        get, df_of = self._term_id.get, self._df
        tids, dfs = [], []
        for term in dict.fromkeys(self._query(query)):
            tid = get(term)
            if tid is not None:
                df = int(df_of[tid])
                if df:
                    tids.append(tid)
                    dfs.append(df)
        if not tids:
            return []
        weights = [self._weight(df) for df in dfs]
        base, per_len = self._norms()
        if len(tids) >= 2 and max(dfs) > _LONG_POSTINGS:
            pruned = self._pruned(tids, dfs, weights, limit, base, per_len)
            if pruned is not None:
                return pruned
        if sum(int(self._used[tid]) + int(self._base_used[tid]) for tid in tids) <= _LOOP_CELLS:
            return self._ranked(self._looped_scores(tids, weights, base, per_len), limit)
        slots, tf, owner = self._cells_of(tids)
        values = np.array(weights)[owner] * tf / ((tf + base) + per_len * self._doc_len[slots])
        if len(tids) == 1:
            return self._best(slots, values, limit)
        # each document's cells, in query-term order, added one by one: its score summed as
        # the plain path sums it
        order = np.argsort(slots, kind="stable")
        slots = slots[order]
        first = _group_starts(slots)
        scores = np.bincount(np.cumsum(first) - 1, weights=values[order])
        return self._best(slots[first], scores, limit)

    def _looped_scores(self, tids: list[int], weights: list[float], base: float, per_len: float) -> dict[int, float]:
        """``{slot: score}`` of the documents with terms ``tids``, by the plain path's loop:
        term by term, each live cell's contribution added to its document's score (the
        base's cells, the blocks', then the log's; a document's are all in one of the three)."""
        scores: dict[int, float] = {}
        add = scores.get
        stamps, lengths = self._stamps, self._lengths
        start, used, base_start, base_used = self._start, self._used, self._base_start, self._base_used
        cell_slot, cell_tf, cell_stamp = self._cell_slot, self._cell_tf, self._cell_stamp
        base_slot, base_tf, base_stamp = self._base_slot, self._base_tf, self._base_stamp
        logged = self._log_end > 0
        for tid, weight in zip(tids, weights, strict=True):
            first = int(base_start[tid])
            based = slice(first, first + int(base_used[tid]))
            first = int(start[tid])
            block = slice(first, first + int(used[tid]))
            cells = chain(
                zip(base_slot[based].tolist(), base_tf[based].tolist(), base_stamp[based].tolist(), strict=True),
                zip(cell_slot[block].tolist(), cell_tf[block].tolist(), cell_stamp[block].tolist(), strict=True),
            )
            for slot, tf, stamp in cells:
                if stamp == stamps[slot]:
                    scores[slot] = add(slot, 0.0) + weight * tf / (tf + base + per_len * lengths[slot])
            if logged:
                cell = int(self._log_head[tid])
                while cell >= 0:
                    slot = int(self._log_slot[cell])
                    if int(self._log_stamp[cell]) == stamps[slot]:
                        tf = int(self._log_tf[cell])
                        scores[slot] = add(slot, 0.0) + weight * tf / (tf + base + per_len * lengths[slot])
                    cell = int(self._log_prev[cell])
        return scores

    def _ranked(self, scores: dict[int, float], limit: int) -> list[tuple[str, float]]:
        """The ``limit`` best of ``{slot: score}``, best first, ties by id (as the plain path)."""
        doc_ids = self._doc_ids
        if len(scores) > limit:
            cutoff = sorted(scores.values(), reverse=True)[limit - 1]
            ranked = [(-score, doc_ids[slot]) for slot, score in scores.items() if score >= cutoff]
        else:
            ranked = [(-score, doc_ids[slot]) for slot, score in scores.items()]
        ranked.sort()
        return [(doc_id, -negated) for negated, doc_id in ranked[:limit]]

    def _best(self, slots: np.ndarray, scores: np.ndarray, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` best of distinct ``slots`` by ``scores``, best first, ties by id."""
        if scores.size > limit:
            keep = scores >= np.partition(scores, scores.size - limit)[scores.size - limit]
            slots, scores = slots[keep], scores[keep]
        doc_ids = self._doc_ids
        ranked = sorted(zip((-scores).tolist(), map(doc_ids.__getitem__, slots.tolist()), strict=True))
        return [(doc_id, -negated) for negated, doc_id in ranked[:limit]]

    def _pruned(self, tids: list[int], dfs: list[int], weights: list[float], limit: int, base: float, per_len: float):
        """The best ``limit`` of a query with long postings, scoring only the candidates its
        short postings give, when that is exact (as :meth:`BM25Index._pruned_scores`); else
        None. A candidate's count of a long term is read from its forward cells."""
        short = [i for i, df in enumerate(dfs) if df <= _LONG_POSTINGS]
        if not short:
            return None
        long_bound = 0.0
        for df, weight in zip(dfs, weights, strict=True):
            if df > _LONG_POSTINGS:
                long_bound += weight  # tf / (tf + norm) < 1
        slots, tf, owner = self._cells_of([tids[i] for i in short])
        position = np.array(short)[owner]
        values = np.array(weights)[position] * tf / ((tf + base) + per_len * self._doc_len[slots])
        candidates, group = np.unique(slots, return_inverse=True)
        if candidates.size < limit:
            return None
        partial = np.bincount(group, weights=values, minlength=candidates.size)
        if np.partition(partial, partial.size - limit)[partial.size - limit] <= long_bound * (1 + 1e-9):
            return None
        # each candidate's contribution of every term (0.0 where it has none: adding +0.0 to a
        # positive score leaves it as it is), the columns added in query-term order
        columns = np.zeros((len(dfs), candidates.size))
        columns[position, group] = values
        lengths = self._fwd_len[candidates].astype(np.int64)
        terms, counts = self._forward_cells(_ranges(self._fwd_start[candidates], lengths))
        which = np.repeat(np.arange(candidates.size), lengths)
        for i, df in enumerate(dfs):
            if df > _LONG_POSTINGS:
                hit = terms == tids[i]
                tf, doc = counts[hit], which[hit]
                columns[i, doc] = weights[i] * tf / ((tf + base) + per_len * self._doc_len[candidates[doc]])
        scores = columns[0].copy()
        for column in columns[1:]:
            scores += column
        return self._best(candidates, scores, limit)

    def search_many(self, queries: list[str], limit: int) -> list[list[str]]:
        """The doc ids :meth:`search` ranks first for each query (best first), all found at once.

        Why it exists: the agent's title check searches a hundred titles or more (tens of
        thousands at 100,000 articles) at one instant against one state of the index. The
        live cells of every query's terms are read at once, each (term, document)
        contribution computed by :meth:`search`'s expression, and each (query, document)
        score summed by ``np.bincount`` over cells sorted into query-term order (one add at
        a time), so every score equals :meth:`search`'s bit for bit; stable sorts rank them
        all (score descending, ties by doc id). A query with a term of very long postings is
        ranked alone by :meth:`search`, which can prune them.
        """
        counts, doc_ids = self.search_many_flat(queries, limit)
        hits = iter(doc_ids)
        return [list(islice(hits, n)) for n in counts]

    def search_many_flat(self, queries: list[str], limit: int) -> tuple[list[int], list[str]]:
        """:meth:`search_many`'s rankings laid end to end: how many doc ids each query has,
        and all of them, query after query (no list per query)."""
        if self._n_docs == 0 or self._total_len == 0 or not queries:
            return [0] * len(queries), []
        rows = self._query_rows(queries)
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        tids = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=int(lengths.sum()))
        owners = np.repeat(np.arange(len(rows)), lengths)
        cells = self._used[tids] + self._base_used[tids]
        parts = []  # (query, rank within it, slot) of every hit
        heavy = np.unique(owners[cells > _BATCH_TERM_CELLS])
        if heavy.size:
            slot_of = self._slot_of
            for q in heavy.tolist():
                hits = [slot_of[doc_id] for doc_id, _ in self.search(queries[q], limit)]
                parts.append((np.full(len(hits), q), np.arange(len(hits)), np.array(hits, dtype=np.int64)))
            keep = ~np.isin(owners, heavy)
            tids, owners, cells = tids[keep], owners[keep], cells[keep]
        # batches of whole queries: at most _BATCH_QUERIES queries and (past one query)
        # _BATCH_CELLS cells each
        ends = np.cumsum(np.bincount(owners, weights=cells, minlength=len(rows)))
        first, pair = 0, 0
        while first < len(rows):
            last = int(np.searchsorted(ends, (ends[first - 1] if first else 0) + _BATCH_CELLS, side="right"))
            last = min(max(last, first + 1), first + _BATCH_QUERIES, len(rows))
            pair_end = int(np.searchsorted(owners, last))
            query_of, rank, slots = self._batch(tids[pair:pair_end], owners[pair:pair_end] - first, last - first, limit)
            parts.append((query_of + first, rank, slots))
            first, pair = last, pair_end
        query_of, rank, slots = (np.concatenate(column) for column in zip(*parts, strict=True))
        if heavy.size:  # the queries ranked alone, in their places
            order = np.argsort(query_of * limit + rank, kind="stable")
            query_of, slots = query_of[order], slots[order]
        return np.bincount(query_of, minlength=len(rows)).tolist(), list(map(self._doc_ids.__getitem__, slots.tolist()))

    def _query_rows(self, queries: list[str]) -> list[tuple[int, ...]]:
        """Each query's distinct terms that the index has, as term numbers, in order. A
        query's are kept once all of its terms have numbers (a term's number never changes)."""
        query_terms, get = self._query_terms, self._term_id.get
        rows = []
        for query in queries:
            row = query_terms.get(query)
            if row is None:
                if len(query_terms) >= _QUERY_TERMS_KEPT:
                    query_terms.clear()
                tids = tuple(map(get, dict.fromkeys(self._query(query))))
                row = tuple(tid for tid in tids if tid is not None)
                if len(row) == len(tids) and not self.analyzer.splits_compounds:  # those follow the index
                    query_terms[query] = row
            rows.append(row)
        return rows

    def _batch(self, tids: np.ndarray, owners: np.ndarray, n_queries: int, limit: int):
        """The rankings of ``n_queries`` queries whose terms are ``tids`` (each query's
        distinct terms in order, ``owners`` numbering the queries, in order): the query, the
        rank within it and the slot of every hit, query after query, best first."""
        none = np.zeros(0, dtype=np.int64)
        dfs = self._df[tids]
        keep = dfs > 0
        tids, owners, dfs = tids[keep], owners[keep], dfs[keep]
        if not tids.size:
            return none, none, none
        # each term's weight by math.log as search() computes it, once per distinct df
        distinct, which = np.unique(dfs, return_inverse=True)
        weights = np.array([self._weight(df) for df in distinct.tolist()])[which]
        base, per_len = self._norms()
        slots, tf, pair = self._pair_cells(tids)
        values = weights[pair] * tf / ((tf + base) + per_len * self._doc_len[slots])
        # each pair's position among its query's terms
        position = np.arange(tids.size) - np.searchsorted(owners, owners)
        width = int(position.max()) + 1
        n_slots = len(self._doc_ids)
        groups = owners[pair] * n_slots + slots
        # (query, document) groups, each one's cells in query-term order, added one by one
        if n_queries * n_slots * width < 1 << 62:
            order = np.argsort(groups * width + position[pair], kind="stable")
        else:
            order = np.lexsort((position[pair], groups))
        groups = groups[order]
        first = _group_starts(groups)
        scores = np.bincount(np.cumsum(first) - 1, weights=values[order])
        groups = groups[first]
        query_of = groups // n_slots
        slot_of = groups - query_of * n_slots
        # best first within each query, ties by doc id: groups are in (query, slot) order, so
        # stable sorts by id rank (when ids do not rise with slots), by score, then by query
        ranking = np.arange(scores.size)
        if not self._ids_rising:
            ranking = np.argsort(self._id_ranks()[slot_of], kind="stable")
        ranking = ranking[np.argsort(-scores[ranking], kind="stable")]
        ranking = ranking[np.argsort(query_of[ranking].astype(np.uint16), kind="stable")]
        query_of = query_of[ranking]
        rank = np.arange(query_of.size) - np.searchsorted(query_of, np.arange(n_queries))[query_of]
        kept = rank < limit
        return query_of[kept], rank[kept], slot_of[ranking[kept]]

    def _pair_cells(self, tids: np.ndarray):
        """:meth:`_cells_of` for terms that may repeat (a batch's (query, term) pairs): the
        live cells of each, their slots and counts, and the pair each belongs to (the base's
        cells, the blocks', then the log's)."""
        used = self._used[tids]
        cells = _ranges(self._start[tids], used)
        slots, tf, stamps = self._cell_slot[cells], self._cell_tf[cells], self._cell_stamp[cells]
        pair = np.repeat(np.arange(tids.size), used)
        if self._base_slot.size:
            based = self._base_used[tids]
            cells = _ranges(self._base_start[tids], based)
            slots = np.concatenate([self._base_slot[cells], slots])
            tf = np.concatenate([self._base_tf[cells], tf])
            stamps = np.concatenate([self._base_stamp[cells], stamps])
            pair = np.concatenate([np.repeat(np.arange(tids.size), based), pair])
        if self._log_end:
            terms = self._log_term[: self._log_end]
            by_term = np.argsort(terms, kind="stable")
            ordered = terms[by_term]
            low = np.searchsorted(ordered, tids, side="left")
            logged = np.searchsorted(ordered, tids, side="right") - low
            cells = by_term[_ranges(low, logged)]
            slots = np.concatenate([slots, self._log_slot[cells]])
            tf = np.concatenate([tf, self._log_tf[cells]])
            stamps = np.concatenate([stamps, self._log_stamp[cells]])
            pair = np.concatenate([pair, np.repeat(np.arange(tids.size), logged)])
        live = stamps == self._stamp[slots]
        if not live.all():
            slots, tf, pair = slots[live], tf[live], pair[live]
        return slots, tf, pair

    def _id_ranks(self) -> np.ndarray:
        """Each slot's position among the doc ids in sorted order (ties of equal scores)."""
        doc_ids = self._doc_ids
        if self._id_rank is None or self._id_rank.size != len(doc_ids):
            ranks = np.empty(len(doc_ids), dtype=np.int64)
            ranks[sorted(range(len(doc_ids)), key=doc_ids.__getitem__)] = np.arange(len(doc_ids))
            self._id_rank = ranks
        return self._id_rank

    # -- copies and views -------------------------------------------------------------

    def copy(self) -> ArenaIndex:
        """An independent copy, which shares this index's cells copy-on-write.

        The arena's cells become the base of both (this index's own arena starts empty, as
        the copy's does): neither writes the base again, each one's saves going to an arena
        of its own, and each reads the base's cells through its own documents' stamps (a
        document saved since is stale there). When this index already has cells of its own
        beside a base, they are all laid out into one arena first. The forward cells already
        written are shared the same way, and the dicts and lists of documents and terms until
        either adds to them; the rest is copied.

        Why: a day's copy of a 1,000,000-article starting index laid out every cell afresh
        (about a gigabyte), though the day's saves re-write only the documents they save.
        """
        if self._fwd_base == 0 and self._fwd_end:  # this index's forward cells: shared from now on
            tfs = self._fwd_tf[: self._fwd_end]  # (counts, never written again: as narrow as they fit)
            self._fwd_base_term, self._fwd_base_tf = self._fwd_term[: self._fwd_end], tfs.astype(_narrowest(tfs))
            self._fwd_base = self._fwd_end
            self._fwd_term = self._fwd_tf = np.zeros(0, dtype=np.int32)
        self._merge_log()
        if self._cell_end:
            if self._base_slot.size:
                self._compact_cells(with_base=True)
            self._make_base()
        twin = ArenaIndex(self.k1, self.b, self.title_weight, analyzer=self.analyzer)
        own = self._fwd_end - self._fwd_base
        roomy = {"_fwd_term": own, "_fwd_tf": own}
        # never written again (the base's, and each term's place in it), so shared; the
        # tables' views are made anew from the tables
        shared = {"_fwd_base_term", "_fwd_base_tf", *_BASE_ARRAYS, "_base_term"}
        views = {*_TERM_VIEWS, *_BASE_TERM_VIEWS}
        for name, value in vars(self).items():
            if name in roomy:
                value = _spare(value, roomy[name], max(2 * roomy[name], 1024))
            elif name in views:
                continue
            elif name == "_term":
                value = _term_table(value.size, value)
            elif isinstance(value, np.ndarray) and name not in shared:
                value = value.copy()
            setattr(twin, name, value)
        twin._set_terms(twin._term)
        twin._set_base_terms(twin._base_term)
        twin._stamps, twin._lengths = list(self._stamps), list(self._lengths)
        twin._query_terms = {}
        self._own_docs = self._own_terms = False
        twin._own_docs = twin._own_terms = False
        return twin

    def _make_base(self) -> None:
        """This index's arena as its base (never written again), and an empty arena. The
        base holds each term's cells and no room after them (:meth:`_trimmed`)."""
        (self._base_slot, self._base_tf, self._base_stamp), base_start = self._trimmed()
        base = np.zeros(self._term.size, dtype=_BASE_TERM)
        base["start"], base["used"] = base_start, self._used
        self._base_live[:] = self._df
        self._in_base = self._fwd_len >= 0
        # after a merge every live cell is in a block: the rest of the blocks' cells are stale
        self._base_cells = int(self._used.sum(dtype=np.int64))
        self._base_dead = self._base_cells - int(self._df.sum(dtype=np.int64))
        self._set_base_terms(base)
        for name in _CELL_ARRAYS:
            setattr(self, name, np.zeros(0, dtype=np.int32))
        for name in ("_start", "_cap", "_used"):
            getattr(self, name)[:] = 0
        self._cell_end = self._cell_dead = 0

    def _trimmed(self) -> tuple[list[np.ndarray], np.ndarray]:
        """The arena's blocks, each one's used cells in order and none of its room after
        them, in new arrays back to back (the stamps left zeros where all of a chunk's are,
        pages the system maps only when written), and each term's start in them.

        Why: a base is never appended to, so its blocks' room (a fill leaves an eighth more,
        two cells at least: about a fifth of a 1,000,000-article index's cells, 100 MB) would
        be held for nothing. Copied a chunk of terms at a time (at most a few million cells),
        so no array of every cell's position is made on the way.
        """
        n_terms = len(self._terms)
        start, used = self._start[:n_terms], self._used[:n_terms].astype(np.int64)
        ends = np.cumsum(used)
        new_start = np.zeros(self._start.size, dtype=np.int64)
        new_start[:n_terms] = ends - used
        total = int(ends[-1]) if n_terms else 0
        # the counts as narrow as they fit (a byte each in a synthetic corpus: 160 MB less at a
        # million articles); the reads widen them, and scores are computed in float64 alike
        tf_dtype = _narrowest(self._cell_tf[: self._cell_end])
        arrays = [np.zeros(total, dtype=tf_dtype if name == "_cell_tf" else np.int32) for name in _CELL_ARRAYS]
        first = 0
        while first < n_terms:
            done = int(ends[first - 1]) if first else 0
            last = min(n_terms, max(first + 1, int(np.searchsorted(ends, done + _BLOCK_TOKENS, side="right"))))
            cells = _ranges(start[first:last], used[first:last])
            for new, name in zip(arrays, _CELL_ARRAYS, strict=True):
                values = getattr(self, name)[cells]
                if name != "_cell_stamp" or values.any():
                    new[done : done + cells.size] = values
            first = last
        return arrays, new_start

    def postings(self) -> dict[str, dict[str, int]]:
        """Every term's live postings as ``{doc_id: count}`` (terms with none left out): what
        the index holds, as plain data (for tests)."""
        held: dict[str, dict[str, int]] = {}
        doc_ids = self._doc_ids
        for tid, term in enumerate(self._terms):
            if self._df[tid]:
                slots, tf, _ = self._cells_of([tid])
                held[term] = dict(zip(map(doc_ids.__getitem__, slots.tolist()), tf.tolist(), strict=True))
        return held

    def document_terms(self, doc_id: str) -> dict[str, int] | None:
        """One indexed document's terms and their counts, or None if it is not indexed (for tests)."""
        slot = self._slot_of.get(doc_id)
        if slot is None or self._fwd_len[slot] < 0:
            return None
        terms, tfs = self._forward_run(slot)
        return {self._terms[term]: tf for term, tf in zip(terms.tolist(), tfs.tolist(), strict=True)}

    @property
    def total_length(self) -> int:
        """The indexed documents' weighted lengths, summed."""
        return self._total_len


def _token_entries(codes: np.ndarray, content_len: np.ndarray, title_len: np.ndarray, n_codes: int, title_weight: int):
    """The (document, token, weighted count) entries of documents whose tokens are ``codes``
    laid end to end (each document's ``content_len`` content tokens, then its ``title_len``
    title tokens, each title one counting ``title_weight``): blocks of three int32 arrays,
    documents in order, tokens in order within one."""
    lengths = content_len + title_len
    ends = np.cumsum(lengths)
    n = lengths.size
    first = 0
    while first < n:
        start = int(ends[first - 1]) if first else 0
        last = min(n, max(first + 1, int(np.searchsorted(ends, start + _BLOCK_TOKENS, side="right"))))
        block = lengths[first:last]
        stop = int(ends[last - 1])
        local = np.repeat(np.arange(last - first, dtype=np.int64), block)
        position = np.arange(stop - start) - np.repeat(ends[first:last] - block - start, block)
        weight = np.where(position >= np.repeat(content_len[first:last], block), float(title_weight), 1.0)
        keys = local * n_codes + codes[start:stop]
        order = np.argsort(keys)
        keys = keys[order]
        group = _group_starts(keys)
        counts = np.bincount(np.cumsum(group) - 1, weights=weight[order])
        keys = keys[group]
        yield (keys // n_codes + first).astype(np.int32), (keys % n_codes).astype(np.int32), counts.astype(np.int32)
        first = last


def _entries(tokens: np.ndarray, weights: np.ndarray):
    """Each document's distinct tokens with their weighted counts, for a (documents x
    positions) array of token ids and a weight per position: the (document, token, count)
    entries, documents in order, tokens in order within one."""
    rows = tokens.shape[0]
    order = np.argsort(tokens, axis=1, kind="stable")
    ranked = np.take_along_axis(tokens, order, axis=1)
    new = np.ones(ranked.shape, dtype=bool)
    new[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
    flat_new = new.ravel()
    counts = np.bincount(np.cumsum(flat_new) - 1, weights=weights[order].ravel(), minlength=int(flat_new.sum()))
    words = ranked.ravel()[flat_new]
    docs = np.repeat(np.arange(rows), new.sum(axis=1))
    return docs, words, counts.astype(np.int64)
