"""How well the search finds what people ask for: the shipped samples' labelled queries,
under each analyzer setting (docs/results.md, "Search quality").

Each sample's queries (:data:`kbsim.inputs.sample_queries.QUERIES`: what a person types,
and the articles that answer it) are searched in the sample's knowledge base as the
agent searches (``search_knowledge_base``, limit 10). Measured:

- **recall@2**: the share of a query's answering articles among its top two hits (the
  agent reads and cites the top two), averaged over the queries;
- **found in the top 2**: the share of queries with an answer at rank 1 or 2;
- **MRR**: the mean over queries of 1 / the rank of the first answer (0 when none is
  in the ten hits).

The settings: ``ascii`` (kbsim's default analyzer, the study's), ``unicode`` (any script,
no stemming or stop words) and ``unicode`` with the sample's language (its stop words
and Snowball stemmer; German's queries split compound words). The German sample has a
second query set, compound words (:data:`kbsim.inputs.sample_queries.COMPOUND_QUERIES`).
No simulation: the numbers follow from the text alone.

The five small knowledge bases of :mod:`kbsim.inputs.language_kbs` (German, Hindi,
Japanese, French, and a mixed one) are measured apart (:func:`language_section`):
recall@1, recall@2 and MRR under no language (the ascii analyzer), the knowledge base's
language given, and ``auto`` (:func:`kbsim.store.analyzer.auto_analyzer`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from kbsim.inputs import load_corpus
from kbsim.inputs.corpus import SAMPLE
from kbsim.inputs.language_kbs import LANGUAGE_KBS, LanguageKB
from kbsim.inputs.sample import SAMPLE_DE, SAMPLE_HI
from kbsim.inputs.sample_queries import COMPOUND_QUERIES, QUERIES
from kbsim.store import MemoryStore
from kbsim.store.analyzer import ASCII, Analyzer, analyzer_for, auto_analyzer

__all__ = [
    "SAMPLE_LANGUAGES",
    "LanguageQuality",
    "SearchQuality",
    "language_rows",
    "language_section",
    "measure",
    "search_quality_rows",
    "search_quality_section",
]

#: Each sample and the language its articles are written in.
SAMPLE_LANGUAGES = {SAMPLE: "en", SAMPLE_DE: "de", SAMPLE_HI: "hi"}
_NAMES = {SAMPLE: "English (kbsim:sample)", SAMPLE_DE: "German (kbsim:sample-de)", SAMPLE_HI: "Hindi (kbsim:sample-hi)"}
#: Hits the agent reads and cites, and hits a search returns.
CITED, LIMIT = 2, 10


@dataclass(frozen=True)
class SearchQuality:
    """One sample under one analyzer: its labelled queries' recall@2, the share found at
    rank 1 or 2, and MRR."""

    source: str
    analyzer: str
    queries: int
    recall_at_2: float
    found_in_top_2: float
    mrr: float


def settings(source: str) -> list[tuple[str, Analyzer]]:
    """``(label, analyzer)`` of the settings measured on ``source``."""
    language = SAMPLE_LANGUAGES[source]
    analyzer = analyzer_for("unicode", language)
    compounds = ", compounds split" if analyzer.splits_compounds else ""
    return [
        ("ascii (default)", ASCII),
        ("unicode, no stemming", analyzer_for("unicode")),
        (f"unicode, {language}: stop words and stemming{compounds}", analyzer),
    ]


def rankings(source: str, analyzer: Analyzer, compounds: bool = False) -> list[tuple[list[str], set[str]]]:
    """For each labelled query of ``source`` (its compound-word set when ``compounds``): the
    ids its search returns, best first, and the ids of the articles that answer it."""
    corpus = load_corpus(source)
    store = MemoryStore()
    ids = store.create_knowledge_base("kb", corpus.articles(), article_ids=corpus.ids, analyzer=analyzer)
    id_of = dict(zip(corpus.titles, ids, strict=True))
    client = store.client({"kb"}, clock=lambda: 0.0)
    out = []
    for query, answers in (COMPOUND_QUERIES if compounds else QUERIES)[source]:
        hits = client.call("search_knowledge_base", {"knowledge_base_id": "kb", "query": query, "limit": LIMIT})
        out.append(([hit["article_id"] for hit in hits["results"]], {id_of[title] for title in answers}))
    return out


@cache
def measure(source: str, analyzer_name: str, compounds: bool = False) -> SearchQuality:
    """The search quality of ``source``'s labelled queries (its compound-word set when
    ``compounds``) under the analyzer named so."""
    analyzer = next(a for _, a in settings(source) if a.name == analyzer_name)
    ranked = rankings(source, analyzer, compounds)
    recall = found = reciprocal = 0.0
    for hits, answers in ranked:
        top = set(hits[:CITED])
        recall += len(top & answers) / len(answers)
        found += bool(top & answers)
        reciprocal += next((1.0 / rank for rank, hit in enumerate(hits, start=1) if hit in answers), 0.0)
    n = len(ranked)
    return SearchQuality(source, analyzer_name, n, recall / n, found / n, reciprocal / n)


def search_quality_rows() -> list[tuple[str, str, SearchQuality]]:
    """``(sample, setting, quality)`` for every sample and setting, in table order, then
    the compound-word query sets."""
    return [(_NAMES[source], label, measure(source, analyzer.name))
            for source in SAMPLE_LANGUAGES for label, analyzer in settings(source)] + [
        (f"{_NAMES[source]}, compound words", label, measure(source, analyzer.name, compounds=True))
        for source in COMPOUND_QUERIES for label, analyzer in settings(source)]


def search_quality_section() -> list[str]:
    """docs/results.md's "Search quality" section: the table, and how it was measured."""
    lines = [
        "### Search quality: the samples' labelled queries",
        "",
        "Each shipped sample has at least 50 plain-language queries, each labelled with the article or "
        "articles that answer it (`kbsim/inputs/sample_queries.py`); the German sample has a second set of "
        "queries written as one compound word (`Druckerpapierstau`, `Laptopakku`). They are searched as the agent "
        "searches "
        "(limit 10), under each analyzer setting (`corpus.analyzer`, `corpus.language`; docs/model.md, "
        "\"Analyzers\"). recall@2: the share of a query's answers among the top two hits, which the agent "
        "cites; top 2: the share of queries answered at rank 1 or 2; MRR: the mean of 1 / the rank of the "
        "first answer. Computed by `kbsim/report/search_quality.py`, with no simulation.",
        "",
        "| sample | analyzer | queries | recall@2 | top 2 | MRR |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for sample, setting, quality in search_quality_rows():
        lines.append(f"| {sample} | {setting} | {quality.queries} | {quality.recall_at_2:.1%} | "
                     f"{quality.found_in_top_2:.1%} | {quality.mrr:.3f} |")
    lines += [
        "",
        "The study and `kbsim:sample` keep the ascii analyzer (the study's results depend on its terms); "
        "the German and Hindi samples declare their language, so a day or a server on them uses the last "
        "setting. On Hindi the ascii analyzer finds no term at all. German queries split a compound word the "
        "knowledge base does not have into parts it has (`Druckerpapierstau`: Drucker, Papierstau).",
        "",
        *language_section(),
    ]
    return lines


@dataclass(frozen=True)
class LanguageQuality:
    """One small knowledge base under one setting: recall@1, recall@2 (each query has one
    answer) and MRR."""

    name: str
    setting: str
    analyzer: str
    queries: int
    recall_at_1: float
    recall_at_2: float
    mrr: float


def _language_settings(kb: LanguageKB) -> list[tuple[str, Analyzer]]:
    articles = [(title, content) for _, title, content in kb.articles]
    given = ("unicode, no stemming", analyzer_for("unicode")) if kb.language == "mixed" else (
        f"language {kb.language}", analyzer_for("unicode", kb.language))
    return [("no language (ascii)", ASCII), given, ("auto", auto_analyzer(articles))]


def _language_quality(kb: LanguageKB, setting: str, analyzer: Analyzer) -> LanguageQuality:
    store = MemoryStore()
    store.create_knowledge_base("kb", [(title, content) for _, title, content in kb.articles],
                                article_ids=[article_id for article_id, _, _ in kb.articles], analyzer=analyzer)
    client = store.client({"kb"}, clock=lambda: 0.0)
    first = second = reciprocal = 0.0
    for query, answer in kb.queries:
        hits = client.call("search_knowledge_base", {"knowledge_base_id": "kb", "query": query, "limit": LIMIT})
        ids = [hit["article_id"] for hit in hits["results"]]
        first += ids[:1] == [answer]
        second += answer in ids[:CITED]
        reciprocal += 1.0 / (ids.index(answer) + 1) if answer in ids else 0.0
    n = len(kb.queries)
    return LanguageQuality(kb.name, setting, analyzer.name, n, first / n, second / n, reciprocal / n)


@cache
def language_rows() -> tuple[LanguageQuality, ...]:
    """Each of the five language knowledge bases under each setting, in table order."""
    return tuple(_language_quality(kb, setting, analyzer)
                 for kb in LANGUAGE_KBS for setting, analyzer in _language_settings(kb))


def language_section() -> list[str]:
    """docs/results.md's "Search quality: five languages" section."""
    lines = [
        "### Search quality: five languages",
        "",
        "Five small knowledge bases kbsim builds for its tests (`kbsim/inputs/language_kbs.py`): ten HR help "
        "articles each in German, Hindi, Japanese and French with five plain queries, and a mixed one, the same "
        "three topics in German, Hindi, Japanese and English (twelve articles, twelve queries, three a language: "
        "each must find its own language's article). Each query has one answer. Measured with no language "
        "(the ascii analyzer), with the knowledge base's language given (`corpus.language`, `--language`; "
        "for the mixed one, the unicode analyzer with no language), and with `auto`, which picks the analyzer "
        "from the articles' scripts and stop words (the analyzer it picked in brackets). Small and optimistic: "
        "a floor against regressions, not an estimate of quality at scale.",
        "",
        "| knowledge base | setting | queries | recall@1 | recall@2 | MRR |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in language_rows():
        setting = f"{row.setting} ({row.analyzer})" if row.setting == "auto" else row.setting
        lines.append(f"| {row.name} | {setting} | {row.queries} | {row.recall_at_1:.2f} | {row.recall_at_2:.2f} | "
                     f"{row.mrr:.2f} |")
    return [*lines, ""]
