"""The one error a bad input file raises."""

from __future__ import annotations

import os
from pathlib import Path

from kbsim.errors import UsageError


class InputError(UsageError):
    """An input file kbsim cannot use: names the file, and the line and the column (or
    field) where there is one, then the problem.

    Attributes:
        path: the file (or folder).
        line: 1-based line number, or None.
        column: the CSV column or JSON/front-matter field at fault, or None.
        problem: what is wrong and what was expected.
    """

    def __init__(self, path: str | os.PathLike[str], problem: str, *, line: int | None = None,
                 column: str | None = None, field: str | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.column = column if column is not None else field
        self.problem = problem
        where = [self.path]
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column!r}")
        elif field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {problem}")


def line_of_offset(data: bytes, offset: int) -> int:
    """The 1-based line holding byte ``offset`` of ``data``."""
    return data.count(b"\n", 0, offset) + 1


def decode_utf8(path: str | Path, data: bytes, first_line: int = 1) -> str:
    """``data`` as text, refusing (naming the line) bytes that are not UTF-8; a BOM is dropped."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            path,
            f"bytes that are not UTF-8 (0x{data[exc.start]:02x} at byte {exc.start}); save the file as UTF-8",
            line=first_line - 1 + line_of_offset(data, exc.start),
        ) from None
