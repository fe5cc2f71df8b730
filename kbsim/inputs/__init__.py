"""Material from outside: a corpus from files, the shipped sample knowledge base, traces.

Plain data in and out, no SimPy: :func:`load_corpus` reads a folder of Markdown or
text files, a JSONL or a CSV file (or the sample, :data:`SAMPLE`); :mod:`.traces`
reads and writes logs of saves and questions. Every bad input is an
:class:`InputError` naming the file and, where there is one, the line and the
column or field.
"""

from kbsim.inputs.corpus import MAX_CONTENT_CHARS, load_corpus
from kbsim.inputs.errors import InputError
from kbsim.inputs.loaded import SAMPLE, LoadedCorpus

__all__ = ["MAX_CONTENT_CHARS", "SAMPLE", "InputError", "LoadedCorpus", "load_corpus"]
