"""What a corpus from files implies for a day: its analyzer and how people's saves write
its text (``corpus.language``, ``corpus.analyzer``, ``corpus.edits``, or what the corpus
itself declares), and whether the title check can find every article by its title.

The day's size is :meth:`kbsim.params.DayParams.sized_to`.
"""

from __future__ import annotations

from functools import lru_cache

from kbsim.errors import brief
from kbsim.inputs.errors import InputError
from kbsim.inputs.loaded import SAMPLE, LoadedCorpus
from kbsim.params import AUTO_LANGUAGE, MAX_TITLE_SEARCH_LIMIT, CorpusParams, DayParams
from kbsim.store.analyzer import ASCII, Analyzer, analyzer_for, auto_analyzer

__all__ = [
    "corpus_analyzer",
    "corpus_edits",
    "corpus_language",
    "largest_title_group",
    "refuse_crowded_titles",
    "unsearchable_warnings",
]


def corpus_language(params: CorpusParams, loaded: LoadedCorpus) -> str | None:
    """The corpus's language: ``corpus.language``, else the one the corpus declares (the
    German and Hindi samples), else None."""
    return params.language if params.language is not None else loaded.language


def corpus_analyzer(params: CorpusParams, loaded: LoadedCorpus) -> Analyzer:
    """The analyzer a day on ``loaded`` indexes and searches with: ``corpus.analyzer``
    (``ascii`` ignores the corpus's own language; ``unicode`` with no language is plain
    ``unicode``), else the Unicode analyzer for the corpus's language (``corpus.language``,
    or the one the corpus declares), else, and for ``corpus.language: auto``, the one the
    articles' text calls for (:func:`~kbsim.store.analyzer.auto_analyzer`: the ascii
    analyzer for an English corpus in ASCII, as before ``auto`` was the default)."""
    language = corpus_language(params, loaded)
    if params.analyzer == "ascii":
        return ASCII
    if language == AUTO_LANGUAGE or (language is None and params.analyzer is None):
        return _auto_analyzer(loaded)
    return analyzer_for("unicode", language)


@lru_cache(maxsize=8)
def _auto_analyzer(loaded: LoadedCorpus) -> Analyzer:
    """:func:`~kbsim.store.analyzer.auto_analyzer` of a corpus (read once per corpus)."""
    return auto_analyzer(loaded.articles())


def corpus_edits(params: CorpusParams, loaded: LoadedCorpus) -> str:
    """How people's saves write the corpus's text: ``corpus.edits``, else ``swap_lines`` on
    the English sample (the edits its published study, experiments/sample_kb.yaml, ran
    with), else ``revise``."""
    if params.edits is not None:
        return params.edits
    return "swap_lines" if loaded.source == SAMPLE else "revise"


@lru_cache(maxsize=8)
def largest_title_group(loaded: LoadedCorpus, analyzer: Analyzer) -> tuple[str, int]:
    """The title whose search terms the most articles' titles share, and how many share them.

    Titles that differ only in what the analyzer drops (case, punctuation, stop words) are
    the same query, so they are grouped by their terms, not their letters. The first such
    title in publication order names a group; a corpus whose titles all differ gives
    ``(its first title, 1)``. Titles with no search term under the analyzer are left out:
    they are no query at all, which ``kbsim corpus check`` warns of on its own.
    """
    counts: dict[tuple[str, ...], int] = {}
    first: dict[tuple[str, ...], str] = {}
    for title in loaded.titles:
        terms = tuple(sorted(analyzer.tokenize(title)))
        if terms:  # a title with no search term is no query at all (corpus check warns of those)
            counts[terms] = counts.get(terms, 0) + 1
            first.setdefault(terms, title)
    if not counts:
        return loaded.titles[0], 1
    terms = max(counts, key=counts.__getitem__)  # the first of the largest, in publication order
    return first[terms], counts[terms]


def refuse_crowded_titles(params: DayParams, loaded: LoadedCorpus) -> None:
    """Refuse a day whose title check could never find some articles by their title.

    The title check searches each cited title and looks for the cited article among the
    ``checks.title_search_limit`` hits. When more articles than that share a title's search
    terms, one query answers for all of them and at most that many can be among its hits:
    the others are reported gone at every check although nothing changed. Fewer sharing a
    title is fine: the check tells them apart by id.

    Raises:
        InputError: naming the corpus, the title, how many articles share it and the ways out.
    """
    hits = params.checks.title_search_limit
    title, count = largest_title_group(loaded, corpus_analyzer(params.corpus, loaded))
    if count > hits:
        raise InputError(
            loaded.source,
            f"{count:,} articles share the title {brief(title)} (or one with its search terms), more than the "
            f"{hits} hits the title check asks for (checks.title_search_limit): it could never find "
            f"{count - hits:,} of them by title and would report their citations gone although nothing changed. "
            "Give them distinct titles"
            + (f", or set checks.title_search_limit to {count}" if count <= MAX_TITLE_SEARCH_LIMIT else ""),
            field="title")


def unsearchable_warnings(loaded: LoadedCorpus, analyzer: Analyzer) -> list[str]:
    """Warnings of text ``analyzer`` cannot search in ``loaded``: titles that give no search
    term (no query can find their articles), or, under the ascii analyzer, letters outside
    ASCII that it drops. ``kbsim corpus check`` prints them and ``kbsim serve`` logs them."""
    unsearched = sum(1 for title in loaded.titles if not analyzer.tokenize(title))
    if unsearched:
        hint = "" if not analyzer.is_default else "; set the corpus's language (--language, corpus.language)"
        return [f"{unsearched:,} title(s) give no search term under the {analyzer.name} analyzer, so no "
                f"query can find them{hint}"]
    if analyzer.is_default and any(not text.isascii() for text in loaded.titles):
        lost = sum(1 for text in loaded.titles + loaded.contents if not text.isascii())
        return [f"{lost:,} title(s) and content(s) hold letters outside ASCII, which the ascii analyzer "
                "drops (Überprüfen is searched as berpr and fen); set the corpus's language "
                "(--language, corpus.language) to search them"]
    return []
