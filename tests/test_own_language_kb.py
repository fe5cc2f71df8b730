"""Your own knowledge base in any language: a folder of German, Hindi or Japanese articles
is checked, run as a day and searched by plain queries; the day is sized to the corpus;
people's saves revise each article's own text and retitle it recognisably."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kbsim.inputs import load_corpus
from kbsim.inputs.corpus import write_corpus
from kbsim.params import DayParams
from kbsim.sim import run_day
from kbsim.sim.corpus import RevisingCorpus, sentences, split_item
from kbsim.sim.day import starting_knowledge_base

REPO = Path(__file__).resolve().parents[1]

JAPANESE = [
    ("printer", "プリンターがオフラインになる", "ドライバーの更新後にプリンターがオフラインと表示されます。"
     "プリンターを削除して、もう一度追加してください。"),
    ("password", "パスワードをリセットする", "パスワードを忘れた場合は、ポータルでリセットできます。"
     "新しいパスワードは十四文字以上にしてください。"),
    ("wifi", "会社のWi-Fiに接続する", "社員用のネットワークを選び、会社のアカウントでサインインします。"),
    ("mail", "メールが送信できない", "添付ファイルが大きすぎると、メールは送信トレイに残ります。"),
    ("laptop", "ノートパソコンが遅い", "再起動して、更新プログラムをインストールしてください。"),
]

#: language -> plain queries and the title of the article that answers each
QUERIES = {
    "de": {"Passwort vergessen": "Netzwerkpasswort zurücksetzen", "Drucker ist offline": "Drucker wird als offline "
           "angezeigt", "Papier steckt fest": "Papierstau im Drucker", "Laptop langsam": "Laptop ist sehr langsam"},
    "hi": {"पासवर्ड भूल गया": "नेटवर्क पासवर्ड रीसेट करें", "प्रिंटर ऑफ़लाइन है": "प्रिंटर ऑफ़लाइन दिख रहा है",
           "काग़ज़ अटक गया": "प्रिंटर में काग़ज़ फँस गया", "लैपटॉप धीमा है": "लैपटॉप बहुत धीमा चल रहा है"},
    "ja": {"プリンターがオフライン": "プリンターがオフラインになる", "パスワードを忘れた": "パスワードをリセットする",
           "メールを送れない": "メールが送信できない", "パソコンが遅い": "ノートパソコンが遅い"},
}


def language_folder(tmp_path: Path, language: str) -> Path:
    """A folder of Markdown articles in ``language``: some of a shipped sample's, or Japanese."""
    folder = tmp_path / f"{language}-kb"
    if language == "ja":
        write_corpus(iter([(title, body) for _, title, body in JAPANESE]), folder, "markdown",
                     ids=tuple(article_id for article_id, _, _ in JAPANESE))
        return folder
    sample = load_corpus(f"kbsim:sample-{language}")
    wanted = set(QUERIES[language].values())
    keep = [i for i, title in enumerate(sample.titles) if title in wanted or i % 4 == 0]
    write_corpus(iter([(sample.titles[i], sample.contents[i]) for i in keep]), folder, "markdown",
                 ids=tuple(sample.ids[i] for i in keep))
    return folder


@pytest.mark.parametrize("language", ["de", "hi", "ja"])
def test_a_folder_in_any_language_is_checked_run_and_searched(tmp_path, language):
    folder = language_folder(tmp_path, language)
    check = subprocess.run([sys.executable, "-m", "kbsim", "corpus", "check", str(folder), "--language", language],
                           capture_output=True, text=True, cwd=REPO, timeout=120)
    assert check.returncode == 0, check.stderr
    analyzer = "unicode" if language == "ja" else f"unicode:{language}"
    assert f"analyzer: {analyzer} " in check.stdout and "a day on it:" in check.stdout
    assert "warning" not in check.stdout

    params = DayParams.model_validate({"corpus": {"source": str(folder), "language": language},
                                       "edit": {"delay_s": 60}, "day_hours": 2})
    starting = starting_knowledge_base(params.corpus, 1)
    assert starting.analyzer.name == analyzer
    client = starting.template.client({"kb-1"}, clock=lambda: 0.0)
    for query, title in QUERIES[language].items():
        hits = client.call("search_knowledge_base", {"knowledge_base_id": "kb-1", "query": query})["results"]
        assert title in [hit["title"] for hit in hits[:2]], (query, [hit["title"] for hit in hits])

    tables = run_day(params, 1)
    articles = len(starting.article_ids)
    people = tables["saves"].query("actor == 'people'")
    assert len(people) == round(0.75 * articles + 1e-9)  # sized to the corpus, no count given
    assert set(tables["citations"]["article_id"]) <= set(starting.article_ids)
    assert not any(article_id.startswith("art-") for article_id in starting.article_ids)


def test_the_day_is_sized_to_the_corpus_unless_counts_are_given():
    params = DayParams.model_validate({"corpus": {"source": "kbsim:sample-de"}})
    sized = params.sized_to(52)
    assert (sized.saves.count, sized.questions.count) == (39, 16)
    assert sized.sized_to(10) is sized  # counts now given: not sized again
    given = DayParams.model_validate({"corpus": {"source": "x"}, "saves": {"count": 7}}).sized_to(52)
    assert (given.saves.count, given.questions.count) == (7, 16)
    assert DayParams().sized_to(52) == DayParams()  # the synthetic corpus keeps its counts
    sample = DayParams.model_validate({"corpus": {"source": "kbsim:sample"}})
    assert sample.sized_to(400).model_dump() == sample.model_dump()  # 300 and 120, as before
    round_trip = DayParams.model_validate(sized.model_dump(mode="json"))
    assert round_trip.sized_to(10).saves.count == 39


def test_the_language_settings_are_refused_where_they_do_not_apply():
    with pytest.raises(ValueError, match="language applies to a corpus from files"):
        DayParams.model_validate({"corpus": {"language": "de"}})
    with pytest.raises(ValueError, match="language 'klingon' is not one kbsim knows"):
        DayParams.model_validate({"corpus": {"source": "x", "language": "klingon"}})
    with pytest.raises(ValueError, match="the ascii analyzer has no language"):
        DayParams.model_validate({"corpus": {"source": "x", "language": "de", "analyzer": "ascii"}})
    # unset, they leave the dump, and so every run id, as it was
    assert "language" not in DayParams.model_validate({"corpus": {"source": "x"}}).model_dump()["corpus"]


def _revising(source: str) -> tuple[RevisingCorpus, list[str]]:
    loaded = load_corpus(source)
    ids = list(loaded.ids or [f"art-{n:06d}" for n in range(1, len(loaded) + 1)])
    return RevisingCorpus.from_articles(loaded.titles, loaded.contents, ids), ids


@pytest.mark.parametrize("source", ["kbsim:sample", "kbsim:sample-de", "kbsim:sample-hi"])
def test_a_content_save_revises_the_articles_own_text(source):
    corpus, ids = _revising(source)
    rng = np.random.default_rng(3)
    for article_id in ids[:40]:
        original = corpus.originals[article_id]
        own = {sentence for line in original.split("\n") for sentence in sentences(line)}
        own |= {split_item(line)[1] for line in original.split("\n")}
        content = original
        for _ in range(6):  # a few saves in a row: each one a revision of the last
            revised = corpus.rewrite(content, rng, article_id=article_id)
            for line in revised.split("\n"):
                for sentence in sentences(line):  # every sentence is one of the article's own
                    assert sentence in own, (article_id, sentence)
            assert abs(len(revised.split("\n")) - len(content.split("\n"))) <= 1
            content = revised
        assert content != original


def test_a_revision_deletes_puts_back_and_reorders():
    corpus = RevisingCorpus.from_articles(["Reset a password"], [
        "Use the portal. It works anywhere.\n\n## Steps\n\n1. Open the portal.\n2. Choose Reset.\n3. Sign in."],
        ["pw"])
    rng = np.random.default_rng(0)
    seen = set()
    content = corpus.originals["pw"]
    for _ in range(60):
        content = corpus.rewrite(content, rng, article_id="pw")
        seen.add(content)
        numbers = [line.split(".", 1)[0] for line in content.split("\n") if line[:1].isdigit()]
        assert numbers == [str(n) for n in range(1, len(numbers) + 1)]  # steps numbered again
    assert any("2. Choose Reset." not in text for text in seen)  # a step deleted
    assert any(text.count("\n") == corpus.originals["pw"].count("\n") and text != corpus.originals["pw"]
               for text in seen)  # reordered or put back
    assert corpus.originals["pw"] in seen or len(seen) > 5


@pytest.mark.parametrize("source", ["kbsim:sample", "kbsim:sample-de", "kbsim:sample-hi"])
def test_a_retitle_keeps_the_title_recognisable(source):
    corpus, ids = _revising(source)
    loaded = load_corpus(source)
    rng = np.random.default_rng(1)
    for article_id, title in list(zip(ids, loaded.titles, strict=True))[:40]:
        once = corpus.retitle(title, rng, article_id=article_id)
        twice = corpus.retitle(once, rng, article_id=article_id)
        assert once.startswith(title + " (") and once.endswith(")")
        assert twice.startswith(title + " (") and twice.count("(") == title.count("(") + 1
        qualifier = twice[len(title) + 2:-1]
        assert qualifier in corpus.originals[article_id]


def test_the_english_sample_keeps_the_edits_its_study_ran_with():
    from kbsim.sim.corpus import TextCorpus

    assert isinstance(starting_knowledge_base(DayParams.model_validate(
        {"corpus": {"source": "kbsim:sample"}}).corpus, 1).corpus, TextCorpus)
    revised = starting_knowledge_base(DayParams.model_validate(
        {"corpus": {"source": "kbsim:sample", "edits": "revise"}}).corpus, 1).corpus
    assert isinstance(revised, RevisingCorpus)
