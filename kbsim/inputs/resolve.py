"""What a corpus from files implies for a day: its analyzer and how people's saves write
its text (``corpus.language``, ``corpus.analyzer``, ``corpus.edits``, or what the corpus
itself declares).

The day's size is :meth:`kbsim.params.DayParams.sized_to`.
"""

from __future__ import annotations

from kbsim.inputs.loaded import SAMPLE, LoadedCorpus
from kbsim.params import CorpusParams
from kbsim.store.analyzer import ASCII, Analyzer, analyzer_for

__all__ = ["corpus_analyzer", "corpus_edits", "corpus_language"]


def corpus_language(params: CorpusParams, loaded: LoadedCorpus) -> str | None:
    """The corpus's language: ``corpus.language``, else the one the corpus declares (the
    German and Hindi samples), else None."""
    return params.language if params.language is not None else loaded.language


def corpus_analyzer(params: CorpusParams, loaded: LoadedCorpus) -> Analyzer:
    """The analyzer a day on ``loaded`` indexes and searches with: ``corpus.analyzer``
    (``ascii`` ignores the corpus's own language), else the Unicode analyzer for the
    corpus's language when it has one, else :data:`~kbsim.store.analyzer.ASCII`."""
    language = corpus_language(params, loaded)
    kind = params.analyzer or ("unicode" if language is not None else "ascii")
    return ASCII if kind == "ascii" else analyzer_for("unicode", language)


def corpus_edits(params: CorpusParams, loaded: LoadedCorpus) -> str:
    """How people's saves write the corpus's text: ``corpus.edits``, else ``swap_lines`` on
    the English sample (the edits its published study, kbsim/experiments/sample_kb.yaml, ran
    with), else ``revise``."""
    if params.edits is not None:
        return params.edits
    return "swap_lines" if loaded.source == SAMPLE else "revise"
