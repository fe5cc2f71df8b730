"""Reading hostile files within bounds: every reader of kbsim's inputs goes through here.

Corpus folders and files, Markdown front matter, traces and YAML configs (with their
``extends``) are read with the same guards, each set before any work starts:

- **what is read**: regular files only; a FIFO, a device (``/dev/zero``), a folder where
  a file belongs, a loop of symbolic links, or a symbolic link back into a folder being
  listed is refused (:func:`read_input`, :func:`list_text_files`);
- **how much**: a file's size is checked before it is read, and at most its limit plus
  one byte is read (:data:`MAX_ARTICLE_FILE_BYTES`, :data:`MAX_DATA_FILE_BYTES`,
  :data:`MAX_YAML_FILE_BYTES`);
- **how deep**: YAML nested deeper than :data:`MAX_YAML_DEPTH`, YAML aliases expanding to
  more than :data:`MAX_ALIAS_VALUES` values beyond the document's own (an "alias bomb",
  a few hundred bytes that expand to billions of values), and JSON nested deeper than
  Python can parse are refused, at the line they start on (:class:`BoundedSafeLoader`,
  :func:`json_line`);
- **CSV**: values of any length up to the file's are read, so that kbsim's own limits
  (``kbsim.store.rules``) name the column that is too long; a file with only CR line
  endings is read as lines; a quote never closed, or a stray CR inside an unquoted value,
  is refused naming the line it starts on, instead of one value swallowing the rest of the
  file (:func:`csv_records`, :func:`newlines_as_lf`).

Every refusal is one :class:`~kbsim.inputs.errors.InputError` (or, through the
``error`` argument, the caller's own error) naming the file and, where there is one, the
line; none quotes the content of a file that is not what it was supposed to be. The
limits on titles and content are not here: they are the store's
(:data:`kbsim.store.rules.MAX_TITLE_CHARS`, :data:`kbsim.store.rules.MAX_CONTENT_CHARS`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from kbsim.errors import brief
from kbsim.files import read_regular
from kbsim.inputs.errors import InputError

__all__ = [
    "MAX_ALIAS_VALUES",
    "MAX_ARTICLE_FILE_BYTES",
    "MAX_DATA_FILE_BYTES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_FILE_BYTES",
    "BoundedSafeLoader",
    "JSONDuplicateKeyError",
    "JSONTooDeepError",
    "YAMLBoundsError",
    "csv_field_limit",
    "csv_records",
    "duplicate_key_error",
    "json_unique_loads",
    "json_line",
    "json_loads",
    "list_text_files",
    "newlines_as_lf",
    "read_input",
    "unique_header",
    "yaml_location",
    "yaml_problem",
    "yaml_reason",
]

#: The most bytes of one Markdown or text file (one article): an article holds at most
#: 100,000 characters, 400 kB of UTF-8 at the very most, with room for its front matter.
MAX_ARTICLE_FILE_BYTES = 1 << 20
#: The most bytes of a JSONL or CSV corpus file, and of a trace.
MAX_DATA_FILE_BYTES = 1 << 30
#: The most bytes of a YAML config (and of each file it extends), or of ``kbsim serve --config``.
MAX_YAML_FILE_BYTES = 16 << 20
#: The deepest nesting of YAML collections (a config nests five levels at most).
MAX_YAML_DEPTH = 64
#: The most values that YAML aliases may add to a document when expanded: ordinary anchors
#: (``<<: *defaults`` in each scenario) add tens; a bomb adds billions.
MAX_ALIAS_VALUES = 100_000


def read_input(path: str | os.PathLike[str], limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``), else an :class:`InputError`
    naming it: missing, a FIFO or device, a link loop, or over the limit."""
    return read_regular(path, limit, what=what, error=lambda problem: InputError(path, problem))


# -- folders ------------------------------------------------------------------------------------


def list_text_files(root: Path, suffixes: tuple[str, ...]) -> list[tuple[str, str, int, int]]:
    """``(relative posix path, path, mtime_ns, size)`` of every file under ``root`` whose name
    ends with one of ``suffixes``, sorted by relative path; hidden files and folders skipped.

    Symbolic links are followed, but a folder reached twice (a link back to a folder above,
    or two links to one folder) is refused rather than listed forever, and so are an entry
    that is a loop of links, and a file named like an article that is not a regular file.

    Raises:
        InputError: naming the entry at fault.
    """
    found = []
    seen: dict[tuple[int, int], str] = {}
    top = os.stat(root)
    seen[(top.st_dev, top.st_ino)] = os.fspath(root)
    pending = [("", os.fspath(root))]
    while pending:
        prefix, directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            raise InputError(directory, f"cannot list the folder: {exc.strerror or exc}") from None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir()
                info = entry.stat() if is_dir or entry.name.lower().endswith(suffixes) else None
            except OSError as exc:
                if entry.is_symlink() and not entry.name.lower().endswith(suffixes) and _dangling(entry):
                    continue  # a dangling link to something else: skipped like any other file
                problem = ("a loop of symbolic links" if exc.errno == 40 else
                           f"cannot be read: {exc.strerror or exc}")
                raise InputError(entry.path, problem) from None
            if is_dir and info is not None:  # (a folder's stat is always taken)
                key = (info.st_dev, info.st_ino)
                if key in seen:
                    raise InputError(entry.path, f"leads to the folder {seen[key]} again (a symbolic link loop, "
                                     "or a second link to one folder); remove the link")
                seen[key] = entry.path
                pending.append((f"{prefix}{entry.name}/", entry.path))
            elif info is not None:
                if not entry.is_file():
                    raise InputError(entry.path, "is not a regular file (a FIFO, a device or a socket); "
                                     "expected a Markdown or text file")
                found.append((prefix + entry.name, entry.path, info.st_mtime_ns, info.st_size))
    found.sort()
    return found


def _dangling(entry: os.DirEntry) -> bool:
    """Whether a symbolic link points nowhere (not a loop)."""
    try:
        os.stat(entry.path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


# -- YAML ---------------------------------------------------------------------------------------


class YAMLBoundsError(yaml.YAMLError):
    """YAML that is refused for its shape, not its syntax: too deep, or an alias bomb."""

    def __init__(self, problem: str, mark: Any) -> None:
        self.problem = problem
        self.problem_mark = mark
        super().__init__(problem)


class BoundedSafeLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader, refusing a document nested deeper than :data:`MAX_YAML_DEPTH` or
    whose aliases expand to more than :data:`MAX_ALIAS_VALUES` values: both are found while
    the document is composed, before any Python object is built from it."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = False

    def compose_node(self, parent, index):  # noqa: D102 - PyYAML's hook
        if self.check_event(yaml.AliasEvent):
            self._aliases = True
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise YAMLBoundsError(f"nested deeper than {MAX_YAML_DEPTH} levels", self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_document(self):  # noqa: D102 - PyYAML's hook
        self._aliases = False
        node = super().compose_document()
        if self._aliases and node is not None:  # without aliases, a document holds no more values than it reads
            _check_expansion(node)
        return node


def _check_expansion(root: yaml.Node) -> None:
    """Refuse a node graph whose aliases expand past :data:`MAX_ALIAS_VALUES` values."""
    distinct: set[int] = set()
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            children = _children(node)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[key] - len(distinct) > MAX_ALIAS_VALUES:
                raise YAMLBoundsError(
                    f"its aliases expand to more than {MAX_ALIAS_VALUES:,} values (an alias bomb?); "
                    "refused before expanding them", node.start_mark)
            continue
        if key in sizes:
            continue
        if key in distinct:  # reached again before its size is known: an alias inside its own anchor
            raise YAMLBoundsError("an alias refers to a collection that holds it (a recursive alias)",
                                  node.start_mark)
        distinct.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def yaml_reason(exc: yaml.YAMLError) -> str:
    """What is wrong with a YAML text PyYAML refused, in words (a character YAML does not
    allow, a NUL or an escape, is named by its code point; it has no ``problem``)."""
    if isinstance(exc, yaml.reader.ReaderError):
        character = exc.character
        shown = f"U+{character:04X}" if isinstance(character, int) else repr(character)
        return f"it holds the character {shown}, which YAML does not allow (a control character)"
    return getattr(exc, "problem", None) or "cannot be parsed"


def yaml_location(exc: yaml.YAMLError, text: str) -> tuple[int, int] | None:
    """``(line, column)``, both from 0, where PyYAML refused ``text``, or None if it says not."""
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return mark.line, mark.column
    if isinstance(exc, yaml.reader.ReaderError) and 0 <= exc.position <= len(text):
        before = text[:exc.position]
        return before.count("\n"), exc.position - (before.rfind("\n") + 1)
    return None


def yaml_problem(exc: yaml.YAMLError) -> str:
    """``is not YAML: <problem>`` or, for a document refused for its shape, ``is refused: ...``
    (to follow what was read: ``front matter is refused: nested deeper than 64 levels``)."""
    problem = yaml_reason(exc)
    if isinstance(exc, YAMLBoundsError):
        return f"is refused: {problem}"
    return f"is not YAML: {problem}"


# -- CSV and JSON lines ---------------------------------------------------------------------------


def newlines_as_lf(data: bytes) -> bytes:
    """``data`` with CR line endings read as LF when CR is its only line ending (files from
    old Mac software); any other file as it is."""
    if b"\r" in data and b"\n" not in data:
        return data.replace(b"\r", b"\n")
    return data


@contextlib.contextmanager
def csv_field_limit(limit: int = MAX_DATA_FILE_BYTES) -> Iterator[None]:
    """Let the csv module read values up to ``limit`` characters (its default, 131,072,
    would fire before kbsim's own 100,000-character content check could name the column)."""
    previous = csv.field_size_limit()
    csv.field_size_limit(max(previous, min(limit, sys.maxsize)))
    try:
        yield
    finally:
        csv.field_size_limit(previous)


#: Appended after a file's last line: it reads as a row of its own unless a quote the file
#: opened is still open, which then swallows it.
_END = "\ufdd0kbsim: end of the file\ufdd0"


def csv_records(path: str | os.PathLike[str], text: str,
                error: Callable[[str, int], Exception] | None = None) -> Iterator[tuple[int, list[str]]]:
    """``(line the record starts on, values)`` of each record of CSV ``text``, the header
    included, blank lines as empty records.

    Raises:
        InputError: (or ``error(problem, line)``) for a quote that is never closed (named
            by the line it opens on), or a line ending the csv module refuses.
    """

    def refuse(problem: str, line: int) -> Exception:
        return InputError(path, problem, line=line) if error is None else error(problem, line)

    if _END in text:
        raise refuse("holds the character U+FDD0, which kbsim reserves", 1)
    ended = not text or text.endswith(("\n", "\r"))
    reader = csv.reader(io.StringIO(f"{text}{'' if ended else chr(10)}{_END}\n", newline=""))
    last_line = 0
    with csv_field_limit():
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise refuse(f"not CSV: {exc} (line endings must be LF or CRLF throughout)",
                             reader.line_num) from None
            line, last_line = last_line + 1, reader.line_num
            if row == [_END]:
                return
            if row and _END in row[-1]:
                raise refuse("a quoted value opened here is never closed: a missing \" swallows the rest "
                             "of the file", line)
            yield line, row


class JSONTooDeepError(ValueError):
    """JSON nested deeper than Python's parser reads (its ``RecursionError``, as one line)."""


def json_loads(text: str | bytes, **options: Any) -> Any:
    """``json.loads`` whose ``RecursionError`` on JSON nested thousands deep is a
    :class:`JSONTooDeepError` (a ``ValueError``, as every other JSON that cannot be read)."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        raise JSONTooDeepError("nested too deeply to read") from None


class JSONDuplicateKeyError(ValueError):
    """A JSON object naming one key twice (``json.loads`` would keep the last value silently)."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"the key {brief(key)} is given twice in one object")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` refusing an object that names a key twice."""
    row = dict(pairs)
    if len(row) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JSONDuplicateKeyError(key)
            seen.add(key)
    return row


def duplicate_key_error(path: str | os.PathLike[str], exc: JSONDuplicateKeyError, line: int | None) -> InputError:
    """The one-line refusal of a JSON object naming a key twice: the file, the line and the key."""
    if len(exc.key) <= 60 and exc.key.isprintable():
        return InputError(path, "the key is given twice in one object (JSON would keep the last value "
                          "silently); expected each key once", line=line, field=exc.key)
    return InputError(path, f"{exc}; expected each key once", line=line)


def json_unique_loads(text: str | bytes) -> Any:
    """:func:`json_loads` refusing, at any depth, an object that names a key twice
    (:class:`JSONDuplicateKeyError`, a ``ValueError``; :func:`duplicate_key_error` words it)."""
    return json_loads(text, object_pairs_hook=_unique_keys)


def unique_header(path: str | os.PathLike[str], names: list[str], line: int = 1) -> None:
    """Refuse a CSV header naming one column twice (a row would keep one value and drop the
    other silently), naming the file, the line and the column."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(path, "the header names this column twice (one of its values would be dropped "
                             "silently); expected each column once", line=line, column=name)
        seen.add(name)


def json_line(path: str | os.PathLike[str], text: str, line: int) -> Any:
    """One line of JSON, refusing (naming the line) what is not JSON, is nested deeper than
    Python parses, or names a key twice in one object (naming the key: read as JSON it
    would keep the last value silently); never quotes the line."""
    try:
        value = json_loads(text)
        # A key can be given twice only if its quoted name is in the text twice, or escaped
        # (``"ti\u0074le"``): only then is the line read again, key by key (that costs half
        # again as long as json.loads alone).
        if isinstance(value, dict) and ("\\u" in text or any(text.count(f'"{key}"') > 1 for key in value)):
            json_loads(text, object_pairs_hook=_unique_keys)
        return value
    except JSONDuplicateKeyError as exc:
        raise duplicate_key_error(path, exc, line) from None
    except ValueError as exc:
        raise InputError(path, f"not a JSON object: {exc}", line=line) from None
