"""A knowledge base's articles from files: a folder of Markdown or text files, a JSONL
file or a CSV file (or :data:`SAMPLE`, the sample knowledge base kbsim ships).

- **Folder**: every ``.md``, ``.markdown`` and ``.txt`` file in it and its subfolders
  (hidden ones skipped), in order of their relative path. The title is a ``title`` in
  YAML front matter (as Hugo, Jekyll and MkDocs read it), else the first heading
  (``# Title``, or a line underlined with ``===``), else the file name (``-`` and ``_``
  read as spaces); the content is the rest. Front matter may also give ``id``
  (default: the path relative to the folder, without its extension) and ``popularity``.
- **JSONL** (``.jsonl``, ``.ndjson``): one object a line with ``title`` and
  ``content``, optionally ``id`` and ``popularity``; other fields are ignored.
- **CSV** (``.csv``): a header row naming ``title`` and ``content``, optionally
  ``id`` and ``popularity``; other columns are ignored. Quoted values may span lines.

``popularity`` (page views or any weight >= 0), given for every article or for none,
sets the popularity ranking and weights in place of the seeded Zipf shuffle.

An article's id is its source's own (front matter's or the row's ``id``, a file's path):
the agent reads, cites and edits it by that id. An id the tools cannot carry
(:func:`kbsim.store.rules.article_id_problem`) or a repeated one is refused, naming the
file. A row without an id is numbered ``art-000001``, ``art-000002``, ... in file order.

Reading streams: files one by one, JSONL and CSV in batches through pyarrow's
readers. A batch pyarrow cannot take (a number where text belongs, bytes that are
not UTF-8) or a row that breaks a rule sends the file through a careful
line-by-line reader, which either reads it or raises an :class:`InputError` naming
the file, the line and the field. Nothing is kept of a file that fails.
"""

from __future__ import annotations

import csv
import difflib
import errno
import hashlib
import io
import json
import math
import os
import re
import unicodedata
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from kbsim.errors import brief
from kbsim.files import FileWriteError, atomic_write_text, path_problem
from kbsim.inputs import safe_read
from kbsim.inputs.errors import InputError, decode_utf8
from kbsim.inputs.loaded import SAMPLE, LoadedCorpus
from kbsim.inputs.sample import SAMPLES, sample
from kbsim.store.rules import (
    MAX_CONTENT_CHARS,
    MAX_TITLE_CHARS,
    MIN_TITLE_CHARS,
    article_id_for,
    article_id_problem,
    shown,
)

__all__ = ["MAX_CONTENT_CHARS", "MAX_TITLE_CHARS", "MIN_TITLE_CHARS", "SAMPLE", "LoadedCorpus", "load_corpus"]

# MAX_CONTENT_CHARS, MIN_TITLE_CHARS and MAX_TITLE_CHARS are the store's (kbsim.store.rules):
# the limits the edit tool holds an agent to, set in one place. Files are read within the
# bounds of kbsim.inputs.safe_read.
TEXT_SUFFIXES = (".md", ".markdown", ".txt")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
CSV_SUFFIXES = (".csv",)
FIELDS = ("id", "title", "content", "popularity")

_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_BATCH_BYTES = 1 << 22


# -- one article at a time: the rules every format shares -------------------------------------


def _twin_spellings(first: str, second: str) -> str:
    """When two file names print alike but are spelled with different code points (NFC and
    NFD twins, read as one id), the part of a message that tells them apart; else ''."""
    if first == second or unicodedata.normalize("NFC", first) != unicodedata.normalize("NFC", second):
        return ""
    names = [Path(first).name, Path(second).name]
    if names[0] == names[1]:  # the folders differ, not the names
        names = [first, second]
    def spelled(name: str) -> str:
        form = next((form for form in ("NFC", "NFD") if unicodedata.is_normalized(form, name)), "mixed")
        return f"{name.encode('ascii', 'backslashreplace').decode()} ({form})"

    return (f" (the two names are spelled with different code points: that one {spelled(names[0])}, "
            f"this one {spelled(names[1])}; kbsim reads both as one id: rename one, or give one an id)")


class _Articles:
    """Collects articles, holding each to the rules; ``where(line)`` locates a problem."""

    def __init__(self) -> None:
        self.titles: list[str] = []
        self.contents: list[str] = []
        self.ids: list[str | None] = []
        self.weights: list[float | None] = []
        self._id_lines: dict[str, tuple[str, int | None]] = {}
        self._numbered: set[str] = set()  # the art-NNNNNN of the articles without an id
        self._first_weight: tuple[str, int | None] | None = None
        self._first_unweighted: tuple[str, int | None] | None = None

    def add(self, path: Path | str, line: int | None, title: Any, content: Any,
            article_id: Any = None, popularity: Any = None, *, kind: str = "field") -> None:
        def error(problem: str, name: str | None = None) -> InputError:
            return InputError(path, problem, line=line, **({kind: name} if name else {}))

        if title is None:
            raise error("no title: expected a non-empty title", "title")
        if not isinstance(title, str):
            raise error(f"expected the title as text, got {shown(title)}", "title")
        title = title.strip()
        if not title:
            raise error("no title: the title is empty", "title")
        if len(title) < MIN_TITLE_CHARS:
            raise error(
                f"title {title!r} is shorter than {MIN_TITLE_CHARS} characters (the title check "
                "searches for it, and a search query needs at least 2)", "title")
        if len(title) > MAX_TITLE_CHARS:
            raise error(
                f"title of {len(title):,} characters is over the limit of {MAX_TITLE_CHARS} (the title check "
                f"searches for it, and a search query holds at most {MAX_TITLE_CHARS})", "title")
        if content is None:
            raise error("no content: expected the article's text (it may be empty)", "content")
        if not isinstance(content, str):
            raise error(f"expected the content as text, got {shown(content)}", "content")
        if len(content) > MAX_CONTENT_CHARS:
            raise error(
                f"content of {len(content):,} characters is over the limit of {MAX_CONTENT_CHARS:,} "
                "(a read returns the whole article; split it into several)", "content")
        if article_id is not None:
            if isinstance(article_id, bool) or not isinstance(article_id, (str, int)):
                raise error(f"expected the id as text or an integer, got {shown(article_id)}", "id")
            article_id = str(article_id).strip()
            if not article_id:
                raise error("the id is empty (leave it out to number articles in order)", "id")
            problem = article_id_problem(article_id)
            if problem is not None:
                raise error(f"{problem}; an agent could not read the article back by it", "id")
            if article_id in self._id_lines:
                first_path, first_line = self._id_lines[article_id]
                first = first_path if first_path != str(path) else f"line {first_line}"
                raise error(f"duplicate id {brief(article_id)}: already used by {first}"
                            f"{_twin_spellings(first_path, str(path))}", "id")
            if article_id in self._numbered:
                raise error(f"the id {brief(article_id)} is also the number kbsim gives an earlier article without an "
                            "id; give every article an id, or choose another", "id")
            self._id_lines[article_id] = (str(path), line)
        else:
            number = article_id_for(len(self.titles) + 1)
            if number in self._id_lines:
                raise error(f"no id, and the number kbsim would give it, {number!r}, is an earlier article's id; "
                            "give every article an id, or none", "id")
            self._numbered.add(number)
        weight = None
        if popularity is not None:
            weight = _weight(popularity, error)
            self._first_weight = self._first_weight or (str(path), line)
        else:
            self._first_unweighted = self._first_unweighted or (str(path), line)
        if self._first_weight and self._first_unweighted:
            missing_path, missing_line = self._first_unweighted
            raise InputError(
                missing_path,
                "no popularity, while other articles have one; give a weight >= 0 for every "
                "article or for none",
                line=missing_line, **{kind: "popularity"},
            )
        self.titles.append(title)
        self.contents.append(content)
        self.ids.append(article_id)
        self.weights.append(weight)

    def finish(self, source: str, digest: str) -> LoadedCorpus:
        if not self.titles:
            raise InputError(source, "no articles: the source holds none")
        weights = None
        if self._first_weight is not None:
            weights = np.asarray(self.weights, dtype=float)
            if not weights.sum() > 0:
                raise InputError(source, "every popularity weight is 0: give at least one article a weight > 0",
                                 field="popularity")
        ids = None
        if any(i is not None for i in self.ids):
            ids = tuple(i if i is not None else article_id_for(n) for n, i in enumerate(self.ids, start=1))
        return LoadedCorpus(source, tuple(self.titles), tuple(self.contents), ids, weights, digest)


def _weight(value: Any, error) -> float:
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text)
        except ValueError:
            raise error(f"popularity {brief(value)} is not a number", "popularity") from None
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(f"popularity {shown(value)} is not a number", "popularity")
    else:
        number = float(value)
    if not math.isfinite(number):
        raise error(f"popularity {brief(value)} is not a finite number", "popularity")
    if number < 0:
        raise error(f"popularity {brief(value)} is negative; expected a weight >= 0", "popularity")
    return number


# -- folders of Markdown or text files ----------------------------------------------------------


def _text_files(root: Path) -> list[tuple[str, str, int, int]]:
    """``(relative posix path, path, mtime_ns, size)`` of every text file under ``root``, sorted
    by relative path (hidden files and folders skipped; link loops and FIFOs refused)."""
    return safe_read.list_text_files(root, TEXT_SUFFIXES)


def parse_text_file(path: Path | str, text: str) -> tuple[str | None, str, dict[str, Any], int]:
    """``(title or None, content, front matter, line of the title)`` of one Markdown or text file.

    The title is front matter's ``title`` (the content is then everything after the
    front matter, a first heading included), else the first heading, else None (the
    caller uses the file name).
    """
    lines = text.splitlines()
    meta: dict[str, Any] = {}
    start = 0
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
        if end is None:
            raise InputError(path, "front matter opened with '---' is never closed with '---'", line=1)
        front = "\n".join(lines[1:end])
        try:
            meta = yaml.load(front, Loader=safe_read.BoundedSafeLoader) or {}  # noqa: S506
        except yaml.YAMLError as exc:
            where = safe_read.yaml_location(exc, front)
            raise InputError(path, f"front matter {safe_read.yaml_problem(exc)}",
                             line=2 + where[0] if where else 1) from None
        if not isinstance(meta, dict):
            raise InputError(path, "front matter must be a mapping (title: ..., id: ..., popularity: ...)",
                             line=2)
        start = end + 1
    if meta.get("title") is not None:
        line = next((i + 1 for i in range(1, start) if lines[i].lstrip().startswith("title")), 2)
        return meta["title"], "\n".join(lines[start:]).strip(), meta, line
    first = start
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first < len(lines):
        atx = _ATX.match(lines[first])
        if atx:
            return (atx.group(1) or "").strip(), "\n".join(lines[first + 1:]).strip(), meta, first + 1
        if first + 1 < len(lines) and _SETEXT.match(lines[first + 1]) and lines[first].strip():
            return lines[first].strip(), "\n".join(lines[first + 2:]).strip(), meta, first + 1
    return None, "\n".join(lines[start:]).strip(), meta, 1


def _read_folder(root: Path, files: list[tuple[str, str, int, int]], articles: _Articles) -> str:
    if not files:
        raise InputError(root, "no articles: the folder (with its subfolders) holds no .md, .markdown or .txt file")
    digest = hashlib.sha256()
    for relative, path, _, _ in files:
        data = safe_read.read_input(path, safe_read.MAX_ARTICLE_FILE_BYTES, "article file")
        digest.update(relative.encode("utf-8", "surrogateescape") + b"\0" + data + b"\0")
        title, content, meta, found_line = parse_text_file(path, decode_utf8(path, data))
        line: int | None = found_line
        if title is None:
            stem = relative.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            title, line = stem.replace("-", " ").replace("_", " "), None
            if not title.strip():
                raise InputError(path, "no title: no heading, no title in front matter, and no file name")
        own_id = meta.get("id", unicodedata.normalize("NFC", relative.rsplit(".", 1)[0]))
        articles.add(path, line, title, content, own_id, meta.get("popularity"), kind="field")
    return digest.hexdigest()


# -- JSONL ---------------------------------------------------------------------------------------


def _read_jsonl(path: Path, data: bytes) -> _Articles:
    data = safe_read.newlines_as_lf(data)
    try:
        return _jsonl_fast(data, path)
    except Exception:  # noqa: BLE001 - anything pyarrow or the rules refuse: read it line by line
        return _jsonl_careful(data, path)


def _jsonl_fast(data: bytes, path: Path) -> _Articles:
    import pyarrow as pa
    import pyarrow.json as pa_json

    schema = pa.schema([("id", pa.string()), ("title", pa.string()), ("content", pa.string()),
                        ("popularity", pa.float64())])
    reader = pa_json.open_json(
        io.BytesIO(data),
        read_options=pa_json.ReadOptions(block_size=_BATCH_BYTES),
        parse_options=pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"),
    )
    articles = _Articles()
    with reader:  # closed however the loop ends: an abandoned reader's thread could abort the exit
        for batch in reader:
            ids, titles, contents, weights = (batch.column(name).to_pylist() for name in FIELDS)
            for row in zip(titles, contents, ids, weights, strict=True):
                articles.add(path, None, *row)
    return articles


def _jsonl_careful(data: bytes, path: Path) -> _Articles:
    articles = _Articles()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        text = decode_utf8(path, raw, first_line=number)
        if not text.strip():
            continue
        row = safe_read.json_line(path, text, number)
        if not isinstance(row, dict):
            raise InputError(path, f"expected a JSON object with title and content, got {type(row).__name__}",
                             line=number)
        articles.add(path, number, row.get("title"), row.get("content"), row.get("id"), row.get("popularity"))
    return articles


# -- CSV -----------------------------------------------------------------------------------------


def _csv_header(path: Path, data: bytes) -> list[str]:
    first = data.split(b"\n", 1)[0]
    header = next(safe_read.csv_records(path, decode_utf8(path, first).rstrip("\r")), (1, []))[1]
    names = [name.strip() for name in header]
    for required in ("title", "content"):
        if required not in names:
            raise InputError(
                path, f"no {required!r} column; expected a header row with title, content and optionally "
                f"id and popularity, got {_shown_header(names)}", line=1, column=required)
    return names


def _shown_header(names: list[str]) -> str:
    """The header's names for a message, only if it looks like a header of articles: the first
    line of a file that is no corpus at all (a token, a system file) is not quoted."""
    if not any(name in FIELDS or difflib.get_close_matches(name.lower(), FIELDS, cutoff=0.7)
               for name in names[:100] if len(name) <= 40):
        return f"a first line with {len(names)} value{'s' if len(names) != 1 else ''} naming none of them"
    return ", ".join(repr(name[:40]) for name in names[:20]) + (", ..." if len(names) > 20 else "")


def _read_csv(path: Path, data: bytes) -> _Articles:
    data = safe_read.newlines_as_lf(data)
    names = _csv_header(path, data)
    if b'"' in data:  # a quote never closed would swallow the rest of the file: refuse it, naming its line
        for _ in safe_read.csv_records(path, decode_utf8(path, data)):
            pass
    try:
        return _csv_fast(data, path, names)
    except Exception:  # noqa: BLE001 - anything pyarrow or the rules refuse: read it row by row
        return _csv_careful(data, path)


def _csv_fast(data: bytes, path: Path, names: list[str]) -> _Articles:
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    if names != [name for name in names if name]:
        raise ValueError("unnamed columns")
    present = [field for field in FIELDS if field in names]
    reader = pa_csv.open_csv(
        io.BytesIO(data),
        read_options=pa_csv.ReadOptions(block_size=_BATCH_BYTES, column_names=names, skip_rows=1),
        parse_options=pa_csv.ParseOptions(newlines_in_values=True),
        convert_options=pa_csv.ConvertOptions(
            include_columns=present, column_types={field: pa.string() for field in present},
            strings_can_be_null=False, quoted_strings_can_be_null=False),
    )
    articles = _Articles()
    with reader:  # closed however the loop ends, as in _jsonl_fast
        for batch in reader:
            columns = {field: batch.column(field).to_pylist() for field in present}
            rows = len(batch)
            empty = [None] * rows
            ids = [i or None for i in columns.get("id", empty)]
            weights = [w if w else None for w in columns.get("popularity", empty)]
            for row in zip(columns["title"], columns["content"], ids, weights, strict=True):
                articles.add(path, None, *row, kind="column")
    return articles


def _csv_careful(data: bytes, path: Path) -> _Articles:
    records = safe_read.csv_records(path, decode_utf8(path, data))
    names = [name.strip() for name in next(records)[1]]
    index = {field: names.index(field) for field in FIELDS if field in names}
    articles = _Articles()
    for line, row in records:
        if not row:
            continue
        if len(row) != len(names):
            raise InputError(path, f"{len(row)} values where the header names {len(names)} columns", line=line)
        optional = [row[index[field]] or None if field in index else None for field in ("id", "popularity")]
        articles.add(path, line, row[index["title"]], row[index["content"]], *optional, kind="column")
    return articles


# -- any source, cached ------------------------------------------------------------------------

_CACHE: OrderedDict[tuple, LoadedCorpus] = OrderedDict()
_CACHE_SIZE = 4


def load_corpus(source: str | os.PathLike[str]) -> LoadedCorpus:
    """The articles of ``source``: a folder, a ``.jsonl`` or ``.csv`` file, or a shipped sample
    (:data:`SAMPLE`, ``kbsim:sample-de``, ``kbsim:sample-hi``).

    Read once per process and version of the files (a changed file is read again).

    Raises:
        InputError: naming the file, and the line and field where there is one: a
            missing or empty source, a file with no title, duplicate ids, bytes that are
            not UTF-8, a popularity that is negative or not a number, content over
            :data:`MAX_CONTENT_CHARS`, an unknown kind of file.
    """
    if str(source).startswith("kbsim:"):
        if str(source) not in SAMPLES:
            raise InputError(str(source), f"no such sample; kbsim ships {', '.join(SAMPLES)}")
        return sample(str(source))
    path = Path(source)
    if not path.exists():
        problem = path_problem(path, folder_ok=True)
        raise InputError(path, "no such file or folder" if problem is None or problem == "no such file" else problem)
    files = None
    if path.is_dir():
        files = _text_files(path)
        key: tuple = (str(path.resolve()), "dir", tuple((rel, mtime, size) for rel, _, mtime, size in files))
    else:
        stat = path.stat()
        key = (str(path.resolve()), "file", stat.st_mtime_ns, stat.st_size, stat.st_ino)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    loaded = _read(path, files)
    _CACHE[key] = loaded
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return loaded


def _read(path: Path, files: list[tuple[str, str, int, int]] | None = None) -> LoadedCorpus:
    if path.is_dir():
        articles = _Articles()
        digest = _read_folder(path, _text_files(path) if files is None else files, articles)
        return articles.finish(str(path), digest)
    suffix = path.suffix.lower()
    if suffix not in JSONL_SUFFIXES + CSV_SUFFIXES:
        raise InputError(
            path, f"unknown kind of corpus file {suffix or '(no suffix)'!r}: expected a folder of .md, .markdown "
            "or .txt files, a .jsonl file or a .csv file")
    data = safe_read.read_input(path, safe_read.MAX_DATA_FILE_BYTES, "corpus file")
    if not data.strip():
        raise InputError(path, "no articles: the file is empty")
    articles = _read_jsonl(path, data) if suffix in JSONL_SUFFIXES else _read_csv(path, data)
    return articles.finish(str(path), hashlib.sha256(data).hexdigest())


# -- writing -------------------------------------------------------------------------------------

#: The formats :func:`write_corpus` writes.
WRITE_FORMATS = ("markdown", "jsonl", "csv")


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:80] or "article"


def write_corpus(articles: Iterator[tuple[str, str]], target: str | os.PathLike[str], fmt: str,
                 ids: tuple[str, ...] | None = None) -> Path:
    """Write ``(title, content)`` articles in a format :func:`load_corpus` reads back.

    ``markdown``: a new folder of ``<slug>.md`` files (``<id>.md`` with ``ids``, so the
    paths read back as the ids), each ``# Title`` then the content; ``jsonl`` or ``csv``:
    one file with ``title`` and ``content`` (and ``id`` first, with ``ids``). Refuses to
    overwrite.

    Raises:
        FileExistsError: ``target`` exists (a markdown folder: and is not empty).
        FileWriteError: one line naming ``target`` when it cannot be written (a folder
            inside a file, a read-only folder, a full disk).
    """
    try:
        if ids is not None:
            return _write_with_ids(list(zip(ids, articles, strict=True)), Path(target), fmt)
        return _write_without_ids(articles, Path(target), fmt)
    except OSError as exc:
        if exc.errno is None:  # kbsim's own refusal to overwrite, already one line
            raise
        strerror = exc.strerror or str(exc)
        if exc.errno == errno.EEXIST:  # mkdir of a folder on its path that is a file
            strerror = f"{exc.filename} is a file, not a folder"
        raise FileWriteError(target, strerror, exc.errno) from None


def _write_without_ids(articles: Iterator[tuple[str, str]], target: Path, fmt: str) -> Path:
    if fmt not in WRITE_FORMATS:
        raise ValueError(f"format must be one of {', '.join(WRITE_FORMATS)}, got {fmt!r}")
    if target.exists() and (fmt != "markdown" or any(target.iterdir())):
        raise FileExistsError(f"{target} exists{' and is not empty' if fmt == 'markdown' else ''}")
    if fmt == "markdown":
        target.mkdir(parents=True, exist_ok=True)
        used: set[str] = set()
        for number, (title, content) in enumerate(articles, start=1):
            name = _slug(title)
            if name in used:
                name = f"{name}-{number}"
            used.add(name)
            atomic_write_text(target / f"{name}.md", f"# {title}\n\n{content}\n", fsync=False)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = io.StringIO(newline="")
    if fmt == "jsonl":
        for title, content in articles:
            handle.write(json.dumps({"title": title, "content": content}, ensure_ascii=False) + "\n")
    else:
        writer = csv.writer(handle)
        writer.writerow(("title", "content"))
        writer.writerows(articles)
    return atomic_write_text(target, handle.getvalue())


def _write_with_ids(rows: list[tuple[str, tuple[str, str]]], target: Path, fmt: str) -> Path:
    if fmt not in WRITE_FORMATS:
        raise ValueError(f"format must be one of {', '.join(WRITE_FORMATS)}, got {fmt!r}")
    if target.exists() and (fmt != "markdown" or any(target.iterdir())):
        raise FileExistsError(f"{target} exists{' and is not empty' if fmt == 'markdown' else ''}")
    if fmt == "markdown":
        for article_id, (title, content) in rows:
            path = target / f"{article_id}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, f"# {title}\n\n{content}\n")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = io.StringIO(newline="")
    if fmt == "jsonl":
        for article_id, (title, content) in rows:
            handle.write(json.dumps({"id": article_id, "title": title, "content": content}, ensure_ascii=False) + "\n")
    else:
        writer = csv.writer(handle)
        writer.writerow(("id", "title", "content"))
        writer.writerows((article_id, title, content) for article_id, (title, content) in rows)
    return atomic_write_text(target, handle.getvalue())
