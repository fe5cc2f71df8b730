"""What reading a corpus gives: :class:`LoadedCorpus`, and :data:`SAMPLE`, the source that
names the sample knowledge base.

Both the file readers (:mod:`kbsim.inputs.corpus`) and the sample
(:mod:`kbsim.inputs.sample`) build a :class:`LoadedCorpus`; it lives here so that
neither imports the other to name it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["SAMPLE", "LoadedCorpus"]

#: ``corpus.source`` naming the sample knowledge base kbsim ships (:mod:`kbsim.inputs.sample`).
SAMPLE = "kbsim:sample"


@dataclass(frozen=True, eq=False)
class LoadedCorpus:
    """Articles read from a source, in publication order.

    ``ids`` are the articles' ids, the source's own (a folder's relative paths, an
    ``id`` field; ``art-NNNNNN`` for a row without one), or None when the source has
    none (the articles are then ``art-000001``, ``art-000002``, ... in this order);
    ``weights`` the popularity of each article, or None; ``digest`` a SHA-256 of every
    byte read, so that results can tell one version of the files from another;
    ``language`` the language the source declares (the shipped samples), or None.
    """

    source: str
    titles: tuple[str, ...]
    contents: tuple[str, ...]
    ids: tuple[str, ...] | None
    weights: np.ndarray | None
    digest: str
    language: str | None = None

    def __len__(self) -> int:
        return len(self.titles)

    def articles(self) -> Iterator[tuple[str, str]]:
        """``(title, content)`` pairs, in order."""
        return zip(self.titles, self.contents, strict=True)
