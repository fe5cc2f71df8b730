"""An incrementally maintained BM25 index over article titles and content.

Each document's postings are added on publish, replaced on save and dropped
on unpublish, so a query touches only the postings of its own terms: no
rebuild per query, no scan over every article.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from itertools import chain
from sys import intern

import numpy as np

from kbsim.store.analyzer import ASCII, Analyzer
from kbsim.store.bulk import bulk_postings
from kbsim.store.tokens import tokenize  # noqa: F401 - kbsim.store.bm25.tokenize, as before
from kbsim.store.written import content_text

#: Postings longer than this are probed for candidates instead of scanned, when that is exact.
_LONG_POSTINGS = 256
#: search_many scores at most this many (query x document) cells at a time (2 MiB of floats)...
_TABLE_CELLS = 262_144
#: ...and searches query by query past this many documents (a row of the table costs more
#: than a query's postings).
_TABLE_DOCS = 20_000
#: ...and only while it has at most this many cells per posting its queries add up (past it,
#: most cells stay empty and walking the postings query by query is cheaper: a 4,000-article
#: corpus, say, against 400).
_CELLS_PER_POSTING = 24
#: A first fill (fill) of at least this many postings is kept frozen, as flat arrays, until
#: the index is next searched or changed (smaller ones are faster to copy as dicts:
#: benchmarks/bench_index_memory.py times both).
_FREEZE_POSTINGS = 1_000_000
#: ...and thaws it this many postings at a time.
_THAW_CHUNK = 1 << 20
#: Queries whose terms search_many keeps (a query's terms do not depend on the index).
_QUERY_TERMS_KEPT = 100_000



def term_weight(n_docs: int, df: int, k1: float) -> float:
    """A term's idf times ``k1 + 1`` among ``n_docs`` documents, ``df`` of which hold it: the
    most one of its postings can add to a score. The one expression every index scores with
    (:class:`BM25Index` and :class:`kbsim.store.arena.ArenaIndex`), by ``math.log``, so that
    their scores agree bit for bit."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)) * (k1 + 1.0)

class BM25Index:
    """Okapi BM25 with the title weighted ``title_weight`` times the body.

    Args:
        k1: term-frequency saturation.
        b: length normalisation.
        title_weight: how many body occurrences one title occurrence counts as
            (a simple BM25F), so that a query made from a title ranks that
            article first.
        analyzer: how text becomes terms (default :data:`~kbsim.store.analyzer.ASCII`,
            :func:`tokenize`); documents and queries go through the same one (a query's
            compound words split against this index's terms, where the analyzer splits them).
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75, title_weight: int = 3, *,
                 analyzer: Analyzer = ASCII) -> None:
        self.k1 = k1
        self.b = b
        self.title_weight = title_weight
        self.analyzer = analyzer
        self._tokenize = analyzer.tokenize
        # Documents are numbered by a dense slot, kept for the index's life, so postings and
        # lengths hold small ints: less memory, and lookups that stay in cache at 100k articles.
        self._slot_of: dict[str, int] = {}
        self._doc_ids: list[str] = []
        self._postings: dict[str, dict[int, int]] = {}
        self._doc_terms: list[tuple[str, ...] | None] = []
        self._doc_len: list[int] = []
        self._n_docs = 0
        self._total_len = 0
        # doc ids' sort order by slot (the tie-break of search_many), rebuilt when slots are added
        self._id_rank: np.ndarray | None = None
        # query -> its distinct terms, for search_many
        self._query_terms: dict[str, tuple[str, ...]] = {}
        # the postings as (terms, starts, slots, counts) while frozen (see fill), else None
        self._frozen: tuple | None = None

    def __len__(self) -> int:
        return self._n_docs

    def __contains__(self, doc_id: str) -> bool:
        slot = self._slot_of.get(doc_id)
        return slot is not None and self._doc_terms[slot] is not None

    def add(self, doc_id: str, title: str, content: str) -> None:
        """Index (or re-index) one document.

        A re-index touches only what changed: a term the document keeps has its count
        updated in place, so a save does not delete and re-insert the document in the
        long postings of common words.
        """
        if self._frozen is not None:
            self._thaw()
        slot = self._slot_of.get(doc_id)
        if slot is None:
            slot = self._slot_of[doc_id] = len(self._doc_ids)
            self._doc_ids.append(doc_id)
            self._doc_terms.append(None)
            self._doc_len.append(0)
        # term -> count, in order of first occurrence (a plain dict: cheaper than Counter here)
        counts: dict[str, int] = {}
        get = counts.get
        tokens = self._tokenize
        for term in tokens(content):
            counts[term] = get(term, 0) + 1
        title_weight = self.title_weight
        for term in tokens(title):
            counts[term] = get(term, 0) + title_weight
        postings = self._postings
        old_terms = self._doc_terms[slot]
        if old_terms is not None:  # drop the postings of terms the document no longer has
            self._drop_postings(slot, [term for term in old_terms if term not in counts])
            self._n_docs -= 1
            self._total_len -= self._doc_len[slot]
        for term, tf in counts.items():
            try:
                postings[term][slot] = tf
            except KeyError:  # a term no other document has
                postings[intern(term)] = {slot: tf}
        length = sum(counts.values())
        # the document's terms as the one shared string per term (tokenize makes a new string
        # per occurrence): at 10,000 articles these per-document copies were a third of the
        # index's memory
        self._doc_terms[slot] = tuple(map(intern, counts))
        self._doc_len[slot] = length
        self._n_docs += 1
        self._total_len += length

    def add_words(self, doc_id: str, title: str, vocabulary: Sequence[str], words: np.ndarray) -> None:
        """:meth:`add` of the content written from ``vocabulary``'s ``words``
        (:func:`~kbsim.store.written.content_text`)."""
        self.add(doc_id, title, content_text(vocabulary, words.tolist()))

    def fill(self, doc_ids: list[str], vocabulary: Sequence[str], content_words, title_words) -> None:
        """Index documents into an empty index from their words as vocabulary indices: row
        ``i`` of ``content_words`` and of ``title_words`` are the tokens of document
        ``doc_ids[i]``'s content and title, as the index's analyzer gives them. The state is
        :meth:`add` called for each document in turn (the same postings in the same order,
        the same terms per document).

        An index of at least :data:`_FREEZE_POSTINGS` postings is left frozen: its postings
        held as flat arrays (a slot and a count, 4 bytes each, against about 48 bytes a
        posting as dicts) until it is next searched or changed, which thaws it. A seed's
        starting knowledge base is filled once and kept, for the seed's next day, beside
        each day's copy of it; :meth:`copy` builds the copy's dicts from the arrays and
        leaves the original frozen.

        Why it exists: publishing a synthetic corpus spent most of its time counting each
        document's terms and inserting them posting by posting (11 s for 100,000 articles);
        from the words' indices all of it is a few sorts (:func:`kbsim.store.bulk.bulk_postings`).
        The caller vouches that the indices are the texts' tokens
        (:meth:`MemoryStore.create_knowledge_base_from_words` checks them; :meth:`fill_texts`
        makes them).
        """
        if self._doc_ids:
            raise ValueError("fill() builds an empty index; use add() on one that has documents")
        n = len(doc_ids)
        slot_of = {doc_id: slot for slot, doc_id in enumerate(doc_ids)}
        if len(slot_of) != n:  # add() would re-index a repeated one; fill() numbers each once
            raise ValueError("fill(): a document id repeats")
        terms, starts, slots, counts, doc_terms, doc_len = bulk_postings(
            n, vocabulary, content_words, title_words, self.title_weight
        )
        self._slot_of = slot_of
        self._doc_ids = list(doc_ids)
        self._doc_terms = doc_terms
        self._doc_len = doc_len
        self._n_docs = n
        self._total_len = sum(doc_len)
        self._frozen = (terms, starts, slots, counts)
        self._postings = {}
        if slots.size < _FREEZE_POSTINGS:
            self._thaw()

    def fill_texts(self, docs: Sequence[tuple[str, str, str]]) -> None:
        """:meth:`fill` from ``(doc_id, title, content)`` texts: each tokenized, its tokens
        numbered in a vocabulary of their own. The state :meth:`add` gives for each in turn.

        Why it exists: a first fill of a large corpus from files (100,000 help articles)
        took 10 s article by article; numbering the tokens costs a dict lookup each, and the
        rest is :meth:`fill`'s sorts.
        """
        code_of: dict[str, int] = {}
        number = code_of.setdefault
        terms_of = self._tokenize
        content_rows, title_rows = [], []
        for _doc_id, title, content in docs:
            content_rows.append(np.array([number(term, len(code_of)) for term in terms_of(content)], dtype=np.int64))
            title_rows.append(np.array([number(term, len(code_of)) for term in terms_of(title)], dtype=np.int64))
        self.fill([doc_id for doc_id, _, _ in docs], list(code_of), content_rows, title_rows)

    def remove(self, doc_id: str) -> None:
        """Drop one document; a missing one is ignored."""
        if self._frozen is not None:
            self._thaw()
        slot = self._slot_of.get(doc_id)
        terms = None if slot is None else self._doc_terms[slot]
        if slot is None or terms is None:
            return
        self._drop_postings(slot, terms)
        self._doc_terms[slot] = None
        self._total_len -= self._doc_len[slot]
        self._doc_len[slot] = 0
        self._n_docs -= 1

    def _drop_postings(self, slot: int, terms) -> None:
        postings = self._postings
        for term in terms:
            bucket = postings[term]
            del bucket[slot]
            if not bucket:
                del postings[term]

    def _query(self, query: str) -> list[str]:
        """A query's terms: the analyzer's, its compound words split against the terms this
        index has (:meth:`~kbsim.store.analyzer.Analyzer.query_terms`). Call it thawed."""
        analyzer = self.analyzer
        if analyzer.split_query is None:
            return self._tokenize(query)
        postings = self._postings
        return analyzer.query_terms(query, lambda term: bool(postings.get(term)))

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` best ``(doc_id, score)`` pairs, best first, ties by id."""
        n_docs = self._n_docs
        if n_docs == 0 or self._total_len == 0:  # no document has a term (text of no word)
            return []
        if self._frozen is not None:
            self._thaw()
        k1, b = self.k1, self.b
        # score = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))
        base = k1 * (1.0 - b)
        per_len = k1 * b * n_docs / self._total_len
        doc_len = self._doc_len
        postings = self._postings
        terms = []
        for term in dict.fromkeys(self._query(query)):
            bucket = postings.get(term)
            if bucket:
                terms.append((self._weight(len(bucket)), bucket))
        scores = self._pruned_scores(terms, limit, base, per_len)
        if scores is None:
            scores = {}
            for weight, bucket in terms:
                if not scores:  # the first term fills the table in one comprehension
                    scores = {d: weight * tf / (tf + base + per_len * doc_len[d]) for d, tf in bucket.items()}
                    continue
                get = scores.get
                for d, tf in bucket.items():
                    scores[d] = get(d, 0.0) + weight * tf / (tf + base + per_len * doc_len[d])
        # Only documents scoring at least the limit-th best score can rank (ties included);
        # their (-score, id) tuples sort in C: best first, ties by id.
        doc_ids = self._doc_ids
        if len(scores) > limit:
            cutoff = sorted(scores.values(), reverse=True)[limit - 1]
            ranked = [(-score, doc_ids[slot]) for slot, score in scores.items() if score >= cutoff]
        else:
            ranked = [(-score, doc_ids[slot]) for slot, score in scores.items()]
        ranked.sort()
        return [(doc_id, -negated) for negated, doc_id in ranked[:limit]]

    def _weight(self, df: int) -> float:
        """A term's idf times ``k1 + 1``: the most one of its postings can add to a score."""
        return term_weight(self._n_docs, df, self.k1)

    def search_many(self, queries: list[str], limit: int) -> list[list[str]]:
        """The doc ids :meth:`search` ranks first for each query (best first), all found at once.

        Why it exists: the agent's title check searches a hundred titles or more at one
        instant against one state of the index, about 40% of a simulated day when each went
        through :meth:`search`. Here the postings of every query term are read once, each
        (term, document) contribution is computed once with numpy by the very expression
        :meth:`search` uses, and a (query x document) score table adds them up
        (:meth:`_search_table`), so that every score equals :meth:`search`'s bit for bit, and
        the ranking (score descending, ties by doc id) is one sort of the candidates of all
        queries. The table holds at most :data:`_TABLE_CELLS` cells (queries are taken in
        chunks); past :data:`_TABLE_DOCS` documents, or :data:`_CELLS_PER_POSTING` cells per
        posting the queries add up, it is :meth:`search` query by query. The tests hold it to
        :meth:`search` on random indexes and queries.
        """
        counts, doc_ids = self.search_many_flat(queries, limit)
        ranked, start = [], 0
        for count in counts:
            ranked.append(doc_ids[start : start + count])
            start += count
        return ranked

    def search_many_flat(self, queries: list[str], limit: int) -> tuple[list[int], list[str]]:
        """:meth:`search_many`'s rankings laid end to end: how many doc ids each query has,
        and all of them, query after query."""
        n_slots = len(self._doc_ids)
        if self._n_docs == 0 or self._total_len == 0 or n_slots > _TABLE_DOCS:
            return self._search_each_flat(queries, limit)
        if self._frozen is not None:
            self._thaw()
        chunk = max(1, _TABLE_CELLS // n_slots)
        counts: list[int] = []
        slots: list[int] = []
        for start in range(0, len(queries), chunk):
            part = queries[start : start + chunk]
            ranked = self._search_table(part, limit)
            if ranked is None:  # the table would be mostly empty: walk the queries' own postings
                part_counts, part_ids = self._search_each_flat(part, limit)
                counts += part_counts
                slots += map(self._slot_of.__getitem__, part_ids)
            else:
                counts += ranked[0]
                slots += ranked[1]
        return counts, list(map(self._doc_ids.__getitem__, slots))

    def _search_each_flat(self, queries: list[str], limit: int) -> tuple[list[int], list[str]]:
        """:meth:`search_many_flat` query by query through :meth:`search`."""
        ranked = [[doc_id for doc_id, _ in self.search(query, limit)] for query in queries]
        return list(map(len, ranked)), list(chain.from_iterable(ranked))

    def _search_table(self, queries: list[str], limit: int) -> tuple[list[int], list[int]] | None:
        """:meth:`search_many_flat` for a chunk of queries, in one (query x document) table:
        how many hits each query has and their slots, end to end; None when the table would
        hold more than :data:`_CELLS_PER_POSTING` cells per posting the queries add up.

        Each query's terms' postings are laid end to end, query after query and term after
        term in the query's order, and ``np.bincount`` adds each (query, document) cell's
        contributions in that order, onto 0.0 (``0.0 + c == c``): the very additions
        :meth:`search` makes, one IEEE double add each, so the scores are equal bit for bit.
        """
        n_docs = self._n_docs
        n_slots = len(self._doc_ids)
        k1, b = self.k1, self.b
        base = k1 * (1.0 - b)
        per_len = k1 * b * n_docs / self._total_len
        postings = self._postings
        query_terms = self._query_terms
        row_of: dict[str, int] = {}
        buckets: list[dict[int, int]] = []
        query_rows: list[int] = []  # every query's terms' rows, end to end
        terms_of_query: list[int] = []  # how many of them each query has
        for query in queries:
            terms = query_terms.get(query)
            if terms is None and self.analyzer.splits_compounds:  # its terms follow the index's: never kept
                terms = tuple(dict.fromkeys(self._query(query)))
            elif terms is None:
                if len(query_terms) >= _QUERY_TERMS_KEPT:
                    query_terms.clear()
                terms = query_terms[query] = tuple(dict.fromkeys(self._tokenize(query)))
            found = 0
            for term in terms:
                row = row_of.get(term)
                if row is None:
                    bucket = postings.get(term)
                    if not bucket:
                        continue
                    row = row_of[term] = len(buckets)
                    buckets.append(bucket)
                query_rows.append(row)
                found += 1
            terms_of_query.append(found)
        n_queries = len(queries)
        if not buckets:
            return [0] * n_queries, []
        n_rows = len(buckets)
        lengths = np.fromiter(map(len, buckets), dtype=np.int64, count=n_rows)
        rows = np.array(query_rows, dtype=np.int64)
        counts = lengths[rows]  # the postings of each (query, term)
        total = int(counts.sum())
        if n_queries * n_slots > _CELLS_PER_POSTING * total:
            return None
        starts = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        nnz = int(starts[-1])
        slots = np.fromiter(chain.from_iterable(buckets), dtype=np.int64, count=nnz)
        tf = np.fromiter(chain.from_iterable(bucket.values() for bucket in buckets), dtype=np.float64, count=nnz)
        # each term's weight by math.log as search() computes it, once per distinct df
        dfs, df_index = np.unique(lengths, return_inverse=True)
        weights = np.array([self._weight(df) for df in dfs.tolist()], dtype=np.float64)[df_index]
        doc_len = np.array(self._doc_len, dtype=np.float64)
        # weight * tf / (tf + base + per_len * doc_len[d]), operation by operation as in search()
        values = np.repeat(weights, lengths) * tf / ((tf + base) + per_len * doc_len[slots])
        # each (query, term)'s postings, a run of entries from starts[row], end to end
        entries = np.arange(total) + np.repeat(starts[rows] - (np.cumsum(counts) - counts), counts)
        owners = np.repeat(np.repeat(np.arange(n_queries, dtype=np.int64), terms_of_query), counts)
        # bincount adds in the entries' order: each cell's terms in the query's order
        scores = np.bincount(
            owners * n_slots + slots[entries], weights=values[entries], minlength=n_queries * n_slots
        ).reshape(n_queries, n_slots)
        # candidates: every positive score at least each query's limit-th best (ties included)
        matched = scores > 0.0
        if n_slots > limit:
            cutoff = -np.partition(-scores, limit - 1, axis=1)[:, limit - 1]
            matched &= scores >= cutoff[:, None]
        query_of, slot_of = np.nonzero(matched)
        order = np.lexsort((self._id_ranks()[slot_of], -scores[query_of, slot_of], query_of))
        query_of, slot_of = query_of[order], slot_of[order]
        first = np.searchsorted(query_of, np.arange(n_queries))
        keep = np.arange(query_of.size) - first[query_of] < limit
        return np.minimum(np.bincount(query_of, minlength=n_queries), limit).tolist(), slot_of[keep].tolist()

    def _id_ranks(self) -> np.ndarray:
        """Each slot's position among the doc ids in sorted order (ties of equal scores)."""
        doc_ids = self._doc_ids
        if self._id_rank is None or len(self._id_rank) != len(doc_ids):
            ranks = np.empty(len(doc_ids), dtype=np.int64)
            ranks[sorted(range(len(doc_ids)), key=doc_ids.__getitem__)] = np.arange(len(doc_ids))
            self._id_rank = ranks
        return self._id_rank

    def _pruned_scores(self, terms, limit: int, base: float, per_len: float) -> dict[int, float] | None:
        """Exact scores of the only documents that can reach the top ``limit``, or None.

        A query term with a long postings list (a common word, low idf) can add at most its
        weight to any score. When ``limit`` documents of the short lists already score more
        than all long terms together could give a document found only in long lists, those
        lists are probed for the candidates alone instead of scanned. Scores are then summed
        in query-term order exactly as the plain loop does, so rankings are identical.
        """
        if len(terms) < 2 or all(len(bucket) <= _LONG_POSTINGS for _, bucket in terms):
            return None
        doc_len = self._doc_len
        partial: dict[int, float] = {}
        long_bound = 0.0
        for weight, bucket in terms:
            if len(bucket) > _LONG_POSTINGS:
                long_bound += weight  # tf / (tf + norm) < 1
                continue
            get = partial.get
            for d, tf in bucket.items():
                partial[d] = get(d, 0.0) + weight * tf / (tf + base + per_len * doc_len[d])
        if len(partial) < limit or heapq.nlargest(limit, partial.values())[-1] <= long_bound * (1 + 1e-9):
            return None
        scores: dict[int, float] = {}
        for d in partial:
            score = None
            for weight, bucket in terms:
                tf = bucket.get(d)
                if tf is not None:
                    contribution = weight * tf / (tf + base + per_len * doc_len[d])
                    score = contribution if score is None else score + contribution
            scores[d] = score
        return scores

    def _thawed_postings(self) -> dict[str, dict[int, int]]:
        """The frozen postings as dicts again (each term's in its original order).

        Each slot is the one int object the index numbers its document by (as postings made
        by :meth:`add` hold it), not a new int per posting (28 bytes each, for millions of
        postings). Built a chunk of terms at a time, so the lists made on the way stay small.
        """
        terms, starts, slots, counts = self._frozen
        shared = np.empty(len(self._slot_of), dtype=object)
        shared[:] = list(self._slot_of.values())  # slot i's int object, in slot order
        bounds = starts.tolist()
        postings: dict[str, dict[int, int]] = {}
        first = 0
        while first < len(terms):
            # the terms whose postings end within _THAW_CHUNK of this chunk's first (one at least)
            last = int(np.searchsorted(starts, bounds[first] + _THAW_CHUNK, side="right")) - 1
            last = min(len(terms), max(last, first + 1))
            offset = bounds[first]
            slot_list = shared[slots[offset : bounds[last]]].tolist()
            count_list = counts[offset : bounds[last]].tolist()
            ends = zip(terms[first:last], bounds[first:last], bounds[first + 1 : last + 1], strict=True)
            for term, start, stop in ends:
                start, stop = start - offset, stop - offset
                postings[term] = dict(zip(slot_list[start:stop], count_list[start:stop], strict=True))
            first = last
        return postings

    def _thaw(self) -> None:
        self._postings = self._thawed_postings()
        self._frozen = None

    def copy(self) -> BM25Index:
        """An independent copy (postings copied, immutable term tuples shared); the copy of a
        frozen index is not frozen."""
        twin = BM25Index(self.k1, self.b, self.title_weight, analyzer=self.analyzer)
        twin._slot_of = dict(self._slot_of)
        twin._doc_ids = list(self._doc_ids)
        if self._frozen is not None:
            twin._postings = self._thawed_postings()
        else:
            twin._postings = {term: dict(bucket) for term, bucket in self._postings.items()}
        twin._doc_terms = list(self._doc_terms)
        twin._doc_len = list(self._doc_len)
        twin._n_docs = self._n_docs
        twin._total_len = self._total_len
        twin._id_rank = self._id_rank
        return twin
