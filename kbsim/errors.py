"""The one base of every error a user's input or environment causes: :class:`UsageError`.

A config, a results folder, an input file, an advice question, a serve option, a
run to export: when kbsim refuses one, it raises a subclass of :class:`UsageError`
whose message names the file, key or option at fault and what was expected. The
command line turns any such error that escapes a command into one line on stderr
and exit status 2, in one place (:func:`kbsim.cli.main`); a library caller can
catch them all with ``except UsageError``.

It is a ``ValueError``, so code that caught the subclasses as ``ValueError``
(as :class:`~kbsim.runner.config.ConfigError` and
:class:`~kbsim.inputs.InputError` always were) keeps working.

Text a user's file supplied (a title, an id, a path) may hold control characters: an
escape sequence would drive the terminal it is printed on. :func:`printable` escapes
them; :func:`kbsim.cli.main` prints every error line through it, and commands print
user text through it too.

This module imports nothing of kbsim's: every layer may raise its errors.
"""

from __future__ import annotations

import reprlib
import unicodedata

__all__ = ["OptionError", "UsageError", "brief", "first_problem", "printable"]

_brief = reprlib.Repr()
_brief.maxstring = 60
_brief.maxother = 60
_brief.maxlist = _brief.maxtuple = _brief.maxdict = _brief.maxset = 6
_brief.maxlevel = 3

#: Characters shown escaped besides the control characters (Cc): the bidirectional
#: overrides and isolates (which reorder what a terminal shows), line and paragraph
#: separators, and lone surrogates.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def _unsafe(character: str) -> bool:
    if character.isprintable() and character not in _BIDI:
        return False
    return unicodedata.category(character) in ("Cc", "Cs", "Zl", "Zp") or character in _BIDI


def printable(text: str) -> str:
    r"""``text`` with control characters, bidirectional controls, line separators and lone
    surrogates escaped as ``\\x1b``, ``\\n``, ``\\u202e``: safe on one terminal line.

    Other characters (accents, CJK, emoji, spaces) are kept as they are.
    """
    if text.isascii() and text.isprintable():
        return text
    out = []
    for character in text:
        if not _unsafe(character):
            out.append(character)
        elif character in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[character])
        else:
            code = ord(character)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(out)


def brief(value: object) -> str:
    """``repr(value)``, cut short (60 characters of a string, 6 items, 3 levels): a value a
    message quotes, however large the file that held it."""
    return _brief.repr(value)


def first_problem(exc: Exception) -> str:
    """One line for ``exc``: a pydantic ``ValidationError``'s first error as ``key: problem``
    (``corpus: language 'zz' is not one kbsim knows; ...``), not its many-line dump with a
    link to pydantic's site; any other exception's own text."""
    errors = getattr(exc, "errors", None)
    try:
        found = errors() if callable(errors) else None
    except Exception:  # noqa: BLE001 - not a pydantic error after all
        found = None
    if not found or not isinstance(found[0], dict):
        return str(exc)
    err = found[0]
    message = str(err.get("msg", ""))
    if err.get("type") == "value_error":
        problem = message.removeprefix("Value error, ")
    else:
        problem = f"expected {message.removeprefix('Input should be ')}, got {brief(err.get('input'))}"
    where = ".".join(str(part) for part in err.get("loc", ()))
    return f"{where}: {problem}" if where else problem


class UsageError(ValueError):
    """Something the user gave (a file, a key, an option) that kbsim cannot use.

    The message is one line that names what is at fault and what was expected;
    the subclasses add the structured fields (``source`` and ``key_path``,
    ``path``, ``flag``, ...) their callers read.
    """


class OptionError(UsageError):
    """A command-line option that cannot be used as given; ``flag`` names it (``--seed``)."""

    def __init__(self, flag: str, problem: str) -> None:
        self.flag = flag
        self.problem = problem
        super().__init__(f"{flag}: {problem}")
