"""Analyzers: the default's terms unchanged, the Unicode analyzer's words in any script,
stemming and stop words per language, and both backends ranking alike under each.

The differential test runs the same knowledge base, saves and queries (text drawn from
Latin with accents, Devanagari with its signs, Han, Kana, Thai, full-width forms and
punctuation) on MemoryStore and SQLiteStore under every analyzer setting: every
search must return the same articles in the same order.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbsim import MemoryStore, SQLiteStore
from kbsim.store import tokenize
from kbsim.store.analyzer import (
    ASCII,
    LANGUAGES,
    analyzer_for,
    analyzer_named,
    auto_analyzer,
    detect_latin,
    normalize,
    text_languages,
)
from kbsim.store.stopwords import STOP_WORDS

UNICODE = analyzer_for("unicode")
#: One analyzer of each kind the differential test holds both backends to.
SETTINGS = [ASCII, UNICODE, analyzer_for("unicode", "en"), analyzer_for("unicode", "de"),
            analyzer_for("unicode", "hi"), analyzer_for("unicode", "fr"), analyzer_for("unicode", "ja"),
            analyzer_for("unicode", "tr"), analyzer_named("auto:de,en,hi")]


def test_the_default_analyzer_is_todays_tokenize():
    assert ASCII.tokenize is tokenize
    assert ASCII.is_default and analyzer_for() is ASCII and analyzer_named("ascii") is ASCII
    assert tokenize("Réinitialiser das Überprüfen") == ["r", "initialiser", "das", "berpr", "fen"]


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_the_unicode_analyzer_gives_the_default_terms_on_ascii_text(text):
    assert UNICODE.tokenize(text) == tokenize(text)


def test_a_devanagari_word_stays_one_word_where_re_splits_it():
    text = "पासवर्ड रीसेट करें"
    assert re.findall(r"\w+", text) != text.split()  # re's \w splits at the vowel signs and virama
    assert UNICODE.tokenize(text) == ["पासवर्ड", "रीसेट", "करें"]
    assert tokenize(text) == []


def test_scripts_without_spaces_give_overlapping_bigrams():
    assert UNICODE.tokenize("打印机") == ["打印", "印机"]
    assert UNICODE.tokenize("印") == ["印"]
    assert UNICODE.tokenize("Windows10の設定") == ["windows10", "の設", "設定"]
    assert UNICODE.tokenize("パスワード") == ["パス", "スワ", "ワー", "ード"]
    # a Thai vowel sign or tone mark stays with its consonant
    assert UNICODE.tokenize("ง่าย") == ["ง่า", "าย"]


def test_normalisation_folds_width_case_and_ligatures():
    assert UNICODE.tokenize("ＡＢＣ１２３ ﬁle Straße ÉCRAN") == ["abc123", "file", "strasse", "écran"]
    assert normalize("Ｋ") == "k"


def test_a_language_drops_its_stop_words_and_stems():
    en = analyzer_for("unicode", "en")
    assert en.tokenize("the") == []
    assert en.tokenize("password expired") == en.tokenize("the password expires")
    assert en.tokenize("screen flickering") == en.tokenize("Screen flickers")
    de = analyzer_for("unicode", "de")
    assert de.tokenize("Der Drucker druckt nicht") == de.tokenize("Drucker druckt")
    assert de.tokenize("Passwörter") == de.tokenize("Passwort")
    hi = analyzer_for("unicode", "hi")
    assert hi.tokenize("कंप्यूटरों पर") == hi.tokenize("कंप्यूटर")


def test_every_snowball_stemmer_has_a_language_code():
    import snowballstemmer

    stemmers = set(LANGUAGES.values()) - {None}
    assert stemmers == set(snowballstemmer.algorithms()) - {"porter", "dutch_porter"}


def test_every_stop_list_belongs_to_a_language_with_a_stemmer():
    for code, words in STOP_WORDS.items():
        assert LANGUAGES[code] is not None and words
        assert all(word == word.strip() and " " not in word for word in words)


@pytest.mark.parametrize("code", sorted(LANGUAGES))
def test_every_language_has_an_analyzer_its_name_gives_back(code):
    analyzer = analyzer_for("unicode", code)
    assert analyzer_named(analyzer.name) is analyzer
    assert analyzer.tokenize("Ein Test, 一个测试") is not None
    own_case = code in ("tr", "az")  # Turkic case folding is a language's own even without a stemmer
    expected = "unicode" if LANGUAGES[code] is None and code not in STOP_WORDS and not own_case else f"unicode:{code}"
    assert analyzer.name == expected


@pytest.mark.parametrize(("kind", "language", "message"), [
    ("porter", None, "analyzer must be 'ascii' or 'unicode'"),
    ("unicode", "xx", "language must be one of"),
    ("ascii", "de", "the ascii analyzer has no language"),
])
def test_unknown_settings_are_refused_by_name(kind, language, message):
    with pytest.raises(ValueError, match=message):
        analyzer_for(kind, language)


@pytest.mark.parametrize("name", ["", "unicode:", "unicode:ja", "ascii:en", "snowball"])
def test_a_name_no_analyzer_has_is_refused(name):
    with pytest.raises(ValueError, match="unknown analyzer"):
        analyzer_named(name)


#: Text of many scripts: Latin with accents, Devanagari (with signs and virama), Han,
#: Kana, Thai, full-width, combining marks, punctuation and spaces.
ALPHABET = st.sampled_from(
    list("abcdeéèüöäßxyzABÉÜ0123456789") + list("पासवर्डरीसेटकरेंमहिं्ािीुूे") + list("打印机设定密码")
    + list("パスワードをリセットするがの") + list("ภาษาไทยง่") + list("ＡＢ１２ﬁ\u0301\u200d")
    + list(" ,.;:!?-_'\"()\n\t/@#")
)
TEXT = st.text(alphabet=ALPHABET, max_size=60)


@given(TEXT, st.sampled_from(SETTINGS))
def test_terms_are_one_fts5_ascii_token_each(text, analyzer):
    for term in analyzer.tokenize(text):
        assert term and not any(char.isspace() for char in term)
        assert all(char.isalnum() and char.islower() or char.isdigit() for char in term if char.isascii())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    analyzer=st.sampled_from(SETTINGS),
    articles=st.lists(st.tuples(TEXT.filter(str.strip), TEXT), min_size=1, max_size=8),
    saves=st.lists(st.tuples(st.integers(0, 7), TEXT, st.booleans()), max_size=4),
    queries=st.lists(TEXT.filter(lambda q: len(q) >= 2), min_size=1, max_size=6),
)
def test_both_backends_rank_alike_under_every_analyzer(analyzer, articles, saves, queries):
    ids = [f"own/{n}" for n in range(len(articles))]
    answers = []
    for store in (MemoryStore(), SQLiteStore(":memory:")):
        store.create_knowledge_base("kb", articles, article_ids=ids, analyzer=analyzer)
        for at, (index, text, retitle) in enumerate(saves, start=1):
            target = ids[index % len(ids)]
            if retitle and text.strip():
                store.save_article("kb", target, at=float(at), title=text)
            else:
                store.save_article("kb", target, at=float(at), content=text)
        client = store.client({"kb"}, clock=lambda: 100.0)
        ranked = []
        for query in queries:
            hits = client.call("search_knowledge_base", {"knowledge_base_id": "kb", "query": query, "limit": 20})
            ranked.append([hit["article_id"] for hit in hits["results"]])
        answers.append(ranked)
        assert store.analyzer_name("kb") == analyzer.name
    assert answers[0] == answers[1]


def test_a_file_keeps_its_analyzer_and_its_ids(tmp_path):
    path = tmp_path / "kb.db"
    german = analyzer_for("unicode", "de")
    with SQLiteStore(path) as store:
        store.create_knowledge_base("kb", [("Passwort zurücksetzen", "Öffnen Sie das Portal.")],
                                    article_ids=["konto/passwort"], analyzer=german)
        store.create_knowledge_base("plain", [("Reset a password", "Open the portal.")])
    with SQLiteStore(path) as store:
        assert store.analyzer_name("kb") == "unicode:de" and store.analyzer_name("plain") == "ascii"
        client = store.client({"kb"}, clock=lambda: 1.0)
        hits = client.call("search_knowledge_base", {"knowledge_base_id": "kb", "query": "Passwörter"})
        assert [hit["article_id"] for hit in hits["results"]] == ["konto/passwort"]
        new_id = store.publish_article("kb", title="Drucker", content="Der Drucker druckt nicht.", at=2.0)
        assert new_id == "art-000002"


# -- Turkish case, compound words, auto ------------------------------------------------------------


@pytest.mark.parametrize("language", ["tr", "az"])
def test_turkish_and_azerbaijani_fold_the_dotted_capital_i_to_i(language):
    """``İstanbul`` under tr is ``istanbul``, not ``i`` and a combining dot (issue 40, 7)."""
    analyzer = analyzer_for("unicode", language)
    assert analyzer.tokenize("İstanbul") == analyzer.tokenize("istanbul")
    assert analyzer.tokenize("ISPARTA") == analyzer.tokenize("ısparta")  # dotless I is ı in Turkish
    assert normalize("İstanbul", language) == "istanbul" and normalize("Iğdır", language) == "ığdır"


def test_any_other_language_folds_the_dotted_capital_i_without_its_dot():
    for analyzer in (UNICODE, analyzer_for("unicode", "de")):
        assert analyzer.tokenize("İstanbul") == analyzer.tokenize("istanbul")


def test_istanbul_finds_the_article_on_istanbul_under_turkish_on_both_backends():
    articles = [("İstanbul ofisi", "Ofisimiz İstanbul'da."), ("Ankara ofisi", "Ofisimiz Ankara'da.")]
    for store in (MemoryStore(), SQLiteStore(":memory:")):
        store.create_knowledge_base("kb", articles, article_ids=["ist", "ank"], analyzer=analyzer_for("unicode", "tr"))
        hits = store.client({"kb"}, clock=lambda: 1.0).call(
            "search_knowledge_base", {"knowledge_base_id": "kb", "query": "istanbul"})
        assert [hit["article_id"] for hit in hits["results"]] == ["ist"]


COMPOUND_KB = [
    ("Reisekosten abrechnen", "Die Abrechnung der Reisekosten erfolgt im Portal. Belege bitte einscannen."),
    ("Urlaub beantragen", "Den Urlaub beantragen Sie im Portal. Ihre Tage sehen Sie dort auch."),
    ("Drucker einrichten", "Der Drucker wird über das Netzwerk eingerichtet."),
]


@pytest.mark.parametrize("language", ["de", "auto"])
def test_a_compound_word_finds_the_article_on_its_parts_on_both_backends(language):
    """``Reisekostenabrechnung`` is no term of the knowledge base; split against its own
    terms it is ``Reisekosten`` and ``Abrechnung``, and finds that article."""
    analyzer = analyzer_for("unicode", "de") if language == "de" else analyzer_named("auto:de,en")
    for store in (MemoryStore(), SQLiteStore(":memory:")):
        store.create_knowledge_base("kb", COMPOUND_KB, article_ids=["reise", "urlaub", "drucker"], analyzer=analyzer)
        client = store.client({"kb"}, clock=lambda: 1.0)
        for query, first in (("Reisekostenabrechnung", "reise"), ("Urlaubstage", "urlaub")):
            hits = client.call("search_knowledge_base", {"knowledge_base_id": "kb", "query": query})
            assert [hit["article_id"] for hit in hits["results"]][:1] == [first], (store, query)


def test_a_compound_splits_into_the_fewest_known_parts_with_a_linking_s():
    german = analyzer_for("unicode", "de")
    known = set(german.tokenize("Urlaub Tage Reise Kosten Reisekosten Abrechnung")).__contains__
    assert german.query_terms("Urlaubstage", known) == ["urlaubstag", "urlaub", "tag"]
    assert german.query_terms("Reisekostenabrechnung", known) == ["reisekostenabrechn", "reisekost", "abrechn"]
    assert german.query_terms("Reisekosten", known) == ["reisekost"]  # a known word is never split
    assert german.query_terms("Abc", known) == ["abc"]
    assert analyzer_for("unicode", "fr").splits_compounds is False and not ASCII.splits_compounds
    for code in ("nl", "sv", "da", "no"):
        assert analyzer_for("unicode", code).splits_compounds


def test_stop_words_tell_the_latin_languages_apart():
    def words(text):
        return UNICODE.tokenize(text)

    assert detect_latin(words("Die Abrechnung der Reisekosten erfolgt im Portal")) == "de"
    assert detect_latin(words("You can reset the password in the portal")) == "en"
    assert detect_latin(words("Le mot de passe est dans le portail")) == "fr"
    assert detect_latin(words("Reisekostenabrechnung")) is None  # no evidence: undecided
    assert detect_latin(words("in the Drucker"), among=("de",)) == "de"


def test_a_texts_languages_come_from_its_scripts_and_stop_words():
    assert text_languages("पासवर्ड बदलने के लिए पोर्टल खोलें") == ["hi"]
    assert text_languages("パスワードをリセットする") == ["ja"]
    assert text_languages("打印机设定") == ["zh"]
    assert text_languages("Der Drucker ist im Netzwerk und die Tür ist zu") == ["de"]


def test_auto_gives_an_english_ascii_corpus_the_ascii_analyzer_and_one_language_its_own():
    english = [("Reset a password", "Open the portal and choose a new password."),
               ("Printer offline", "Restart the printer and it is back.")]
    assert auto_analyzer(english) is ASCII
    assert auto_analyzer([("Café menu", "The menu of the café is on the wall.")]) is UNICODE
    german = [("Drucker", "Der Drucker ist im Netzwerk und die Tür ist zu.")]
    assert auto_analyzer(german) is analyzer_for("unicode", "de")
    assert auto_analyzer([("पासवर्ड", "पासवर्ड बदलने के लिए पोर्टल खोलें और नया पासवर्ड दें")]) is analyzer_for("unicode", "hi")


def test_auto_on_a_mixed_corpus_analyses_each_text_in_its_language():
    mixed = auto_analyzer(COMPOUND_KB + [("Reset a password", "Open the portal and choose a new password."),
                                         ("पासवर्ड", "पासवर्ड बदलने के लिए पोर्टल खोलें और नया पासवर्ड दें"),
                                         ("パスワード", "パスワードをリセットする")])
    assert mixed.name == "auto:de,en,hi" and analyzer_named(mixed.name) is mixed
    assert mixed.tokenize("Die Drucker sind im Netzwerk") == analyzer_for("unicode", "de").tokenize(
        "Die Drucker sind im Netzwerk")
    assert mixed.tokenize("Open the printers") == ["open", "the", "printers"]  # English: unstemmed, as ever
    assert mixed.tokenize("पासवर्ड बदलने के लिए") == analyzer_for("unicode", "hi").tokenize("पासवर्ड बदलने के लिए")
    assert mixed.tokenize("パスワード") == UNICODE.tokenize("パスワード")
    # a text that does not tell its language is searched in each of the knowledge base's
    assert mixed.tokenize("Drucker printers") == ["druck", "drucker", "print", "printers"]


@pytest.mark.parametrize("name", ["auto:en", "auto:en,de", "auto:de,xx", "auto:", "auto:de,ja"])
def test_an_auto_name_that_is_no_analyzer_is_refused(name):
    with pytest.raises(ValueError, match="unknown analyzer"):
        analyzer_named(name)


@pytest.mark.parametrize("backend", [MemoryStore, lambda: SQLiteStore(":memory:")])
def test_an_id_and_a_query_sent_decomposed_find_their_article(backend):
    """macOS writes file names decomposed (NFD): an id or query so sent is read as NFC."""
    import unicodedata

    store = backend()
    store.create_knowledge_base("kb", [("Café à Zürich", "Le café est ouvert."), ("Other", "Nothing here.")],
                                article_ids=[unicodedata.normalize("NFD", "café-zürich"), "other"])
    client = store.client({"kb"}, clock=lambda: 1.0)
    decomposed = unicodedata.normalize("NFD", "café-zürich")
    read = client.call("read_knowledge_article", {"knowledge_base_id": "kb", "article_id": decomposed})
    assert read["article_id"] == "café-zürich" == unicodedata.normalize("NFC", decomposed)
    edit = client.call("edit_knowledge_article", {"knowledge_base_id": "kb", "article_id": decomposed,
                                                  "expected_version": read["updated_at"], "idempotency_key": "k1",
                                                  "content": "Fermé."})
    assert edit["article_id"] == "café-zürich"
    for query in (unicodedata.normalize("NFD", "Zürich"), "Zürich"):
        hits = client.call("search_knowledge_base", {"knowledge_base_id": "kb", "query": query})
        assert [hit["article_id"] for hit in hits["results"]] == ["café-zürich"]
