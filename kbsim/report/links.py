"""The pages kbsim writes carry no link to a file that is not beside them.

In a checkout every page's relative link (to ``docs/model.md``, ``validation/PAIRING.md``, the
figures) finds its file. ``kbsim figures --out DIR`` outside a checkout writes the same pages
into DIR, where only the figures and pages it writes exist: a link to the model's page would
lead nowhere. :func:`write_page` writes a page with each such link turned into its text and
the file's place in kbsim's repository, so a reader knows where it is; in a checkout nothing
is missing and the page is written as it is, byte for byte.
"""

from __future__ import annotations

import re
from pathlib import Path

from kbsim.files import atomic_write_text

#: ``[text](target)`` and ``![alt](target)``: a Markdown link whose target has no space.
_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s]+)\)")
_ABSOLUTE = ("http://", "https://", "mailto:", "#", "/")


def _missing(target: str, folder: Path) -> Path | None:
    """The file a relative ``target`` names from ``folder``, when it is not there (else None)."""
    if target.startswith(_ABSOLUTE):
        return None
    file = (folder / target.split("#", 1)[0]).resolve()
    return None if file.exists() else file


def without_missing_links(text: str, page: str | Path) -> str:
    """``text``, a page to be written at ``page``, with each relative link to a file that is
    not there written as its text and the file's place in kbsim's repository (the file's
    folder and name: ``docs/model.md``, ``validation/PAIRING.md``)."""
    folder = Path(page).resolve().parent

    def plain(match: re.Match) -> str:
        file = _missing(match.group(3), folder)
        if file is None:
            return match.group(0)
        where, text = f"{file.parent.name}/{file.name}", match.group(2)
        if text in (where, file.name):
            return f"`{where}` (in kbsim's repository)"
        return f"{text} (`{where}` in kbsim's repository)"

    return _LINK.sub(plain, text)


def write_page(path: str | Path, text: str) -> Path:
    """Write a generated page at ``path`` whole or not at all, with no link to a missing file."""
    return atomic_write_text(path, without_missing_links(text, path))
