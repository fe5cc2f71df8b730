"""Languages (issue 38, item 3): ``auto`` picks a corpus's analyzer from its text and is the
default for corpora from files, changing nothing for the English sample; a mixed knowledge
base finds each query's article in its own language; ``serve`` warns of articles its
analyzer cannot search; the five small language knowledge bases keep their floors."""

from __future__ import annotations

import logging

import pytest

from kbsim.inputs import load_corpus
from kbsim.inputs.corpus import write_corpus
from kbsim.inputs.language_kbs import LANGUAGE_KBS
from kbsim.inputs.resolve import corpus_analyzer
from kbsim.params import DayParams
from kbsim.report.search_quality import language_rows
from kbsim.store import MemoryStore, SQLiteStore
from kbsim.store.analyzer import ASCII, analyzer_for, auto_analyzer

MIXED = next(kb for kb in LANGUAGE_KBS if kb.language == "mixed")


def _analyzer(source: str, **corpus):
    params = DayParams.model_validate({"corpus": {"source": source, **corpus}})
    return corpus_analyzer(params.corpus, load_corpus(params.corpus.source))


def test_auto_gives_the_english_sample_the_ascii_analyzer_so_it_ranks_as_before():
    """The default for a corpus from files is auto; on the English sample that is the very
    ascii analyzer every published result used, so every ranking is today's."""
    assert _analyzer("kbsim:sample") is ASCII
    assert _analyzer("kbsim:sample", language="auto") is ASCII
    assert _analyzer("kbsim:sample-de") is analyzer_for("unicode", "de")  # its declared language, as before
    assert _analyzer("kbsim:sample-hi", language="auto") is analyzer_for("unicode", "hi")
    assert _analyzer("kbsim:sample-hi", analyzer="ascii") is ASCII
    assert "language" not in DayParams.model_validate({"corpus": {"source": "x"}}).model_dump()["corpus"]


def _folder(tmp_path, kb):
    folder = tmp_path / kb.name
    write_corpus(iter([(title, content) for _, title, content in kb.articles]), folder, "markdown",
                 ids=tuple(article_id for article_id, _, _ in kb.articles))
    return str(folder)


@pytest.mark.parametrize("kb", LANGUAGE_KBS, ids=lambda kb: kb.name)
def test_a_corpus_from_files_with_no_language_gets_its_own_languages_analyzer(tmp_path, kb):
    """Before, a Hindi or Japanese folder with no language was searched by the ascii
    analyzer, and every search answered nothing."""
    analyzer = _analyzer(_folder(tmp_path, kb))
    expected = {"de": "unicode:de", "hi": "unicode:hi", "ja": "unicode", "fr": "unicode:fr", "mixed": "auto:de,en,hi"}
    assert analyzer.name == expected[kb.language]
    assert _analyzer(_folder(tmp_path / "again", kb), language="auto") is analyzer


@pytest.mark.parametrize("backend", [MemoryStore, lambda: SQLiteStore(":memory:")])
def test_a_query_finds_its_own_languages_article_in_a_mixed_knowledge_base(backend):
    """Each of the mixed knowledge base's twelve queries (three each in German, Hindi,
    Japanese, English) finds the article on its topic in its own language among the top
    two, on both backends; a SQLite file rebuilds the auto analyzer from its name."""
    store = backend()
    analyzer = auto_analyzer([(title, content) for _, title, content in MIXED.articles])
    store.create_knowledge_base("kb", [(title, content) for _, title, content in MIXED.articles],
                                article_ids=[article_id for article_id, _, _ in MIXED.articles], analyzer=analyzer)
    assert store.analyzer_name("kb") == "auto:de,en,hi"
    client = store.client({"kb"}, clock=lambda: 0.0)
    for query, answer in MIXED.queries:
        hits = client.call("search_knowledge_base", {"knowledge_base_id": "kb", "query": query})["results"]
        assert answer in [hit["article_id"] for hit in hits[:2]], (query, hits[:2])


def test_the_five_language_knowledge_bases_keep_their_floors():
    """auto is at least as good as the language given, and the mixed knowledge base under
    auto finds every query's article in the top two (it found 4 of 12 with no language)."""
    rows = {(row.name, row.setting): row for row in language_rows()}
    for kb in LANGUAGE_KBS:
        auto = rows[kb.name, "auto"]
        assert auto.recall_at_2 >= max(row.recall_at_2 for (name, _), row in rows.items() if name == kb.name)
        assert auto.mrr >= 0.9, auto
    assert rows["mixed", "auto"].recall_at_2 == 1.0
    assert rows["German", "language de"].recall_at_1 == 1.0  # Reisekostenabrechnung, Urlaubstage: compounds


def test_serve_warns_when_its_analyzer_leaves_articles_unsearchable(tmp_path, caplog):
    """As ``kbsim corpus check`` warns: a Hindi corpus served with the ascii analyzer has
    titles no query can find; served with its default (auto), it has none."""
    from kbsim.serve.server import build_store, served_corpus

    hindi = next(kb for kb in LANGUAGE_KBS if kb.language == "hi")
    folder = _folder(tmp_path, hindi)
    base = DayParams.model_validate({"corpus": {"source": folder, "analyzer": "ascii"}})
    with caplog.at_level(logging.WARNING, logger="kbsim.serve"):
        build_store(served_corpus(base, None), 1)
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert any("10 title(s) give no search term under the ascii analyzer" in message for message in warnings)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kbsim.serve"):
        store = build_store(served_corpus(DayParams(), folder), 1)
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert store.analyzer_name("kb-1") == "unicode:hi"


def test_corpus_check_and_serve_take_language_auto(tmp_path):
    """``--language auto`` was refused; now corpus check names the analyzer auto picked."""
    from kbsim.cli.corpus_cmd import check_report
    from kbsim.serve.server import served_corpus

    folder = _folder(tmp_path, MIXED)
    report = check_report(load_corpus(folder), "auto")
    assert "analyzer: auto:de,en,hi (NFKC" in "\n".join(report) and "among de,en,hi" in "\n".join(report)
    assert not [line for line in report if line.startswith("warning")]
    params = served_corpus(DayParams(), folder, "auto")
    assert params.corpus.language == "auto"
    assert corpus_analyzer(params.corpus, load_corpus(folder)).name == "auto:de,en,hi"
    with pytest.raises(ValueError, match="or 'auto'"):
        DayParams.model_validate({"corpus": {"source": folder, "language": "automatic"}})
