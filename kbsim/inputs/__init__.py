"""Material from outside: a corpus from files, the shipped sample knowledge base, traces.

Plain data in and out, no SimPy: :func:`load_corpus` reads a folder of Markdown or
text files, a JSONL or a CSV file (or the sample, :data:`SAMPLE`); :mod:`.traces`
reads and writes logs of saves and questions. Every bad input is an
:class:`InputError` naming the file and, where there is one, the line and the
column or field.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kbsim.inputs.errors import InputError

if TYPE_CHECKING:
    from kbsim.inputs.corpus import MAX_CONTENT_CHARS, load_corpus
    from kbsim.inputs.loaded import SAMPLE, LoadedCorpus

__all__ = ["MAX_CONTENT_CHARS", "SAMPLE", "InputError", "LoadedCorpus", "load_corpus"]

#: The names this package gives, each from the module that holds it, imported when first asked
#: for: a config or a bounded file is read (:mod:`.safe_read`) without the corpus reader's numpy
#: and store, so that ``kbsim experiments`` answers at once.
_LAZY = {
    "MAX_CONTENT_CHARS": "kbsim.inputs.corpus",
    "load_corpus": "kbsim.inputs.corpus",
    "SAMPLE": "kbsim.inputs.loaded",
    "LoadedCorpus": "kbsim.inputs.loaded",
}


def __getattr__(name: str) -> Any:
    """Each of :data:`_LAZY`'s names from its module, on first use (PEP 562)."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
