"""Files read within bounds and written atomically: the one place kbsim touches a file's bytes.

Reading (:func:`read_regular`): a file is opened without blocking, checked to be a
regular file (not a FIFO, a device such as ``/dev/zero``, a folder or a symbolic link
loop) and to be no larger than the caller's limit, all before a byte is read; then at
most the limit plus one byte is read, so a file growing meanwhile is refused too.

Writing (:func:`atomic_write_bytes`, :func:`atomic_write_text`): the bytes go to a
temporary file in the target's folder (``.NAME.PID.RANDOM.tmp``), are flushed and
fsynced, and the temporary file is renamed over the target. A failure at any point (a
full disk, a read-only folder, a file where a folder should be) removes the temporary
file and leaves the previous file as it was; the error is one line naming the target.

A refusal either way is a :class:`FileReadError` or :class:`FileWriteError` (both
:class:`~kbsim.errors.UsageError`), whose ``problem`` callers may wrap in their own
error naming the same file. This module imports nothing of kbsim's but its errors, so
every layer may use it.
"""

from __future__ import annotations

import errno as errnos
import os
import secrets
import stat
from collections.abc import Callable, Generator
from pathlib import Path

from kbsim.errors import UsageError

__all__ = [
    "FileReadError",
    "FileWriteError",
    "atomic_write_bytes",
    "atomic_write_text",
    "cache_dir",
    "path_problem",
    "read_regular",
    "read_regular_chunks",
]


def cache_dir() -> Path:
    """The cache folder of kbsim, for what a command keeps to reuse but was not asked to write
    anywhere: ``$XDG_CACHE_HOME/kbsim``, else ``~/Library/Caches/kbsim`` on macOS,
    ``%LOCALAPPDATA%/kbsim/Cache`` on Windows, ``~/.cache/kbsim`` elsewhere. Not created here."""
    import sys

    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "kbsim"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "kbsim"
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "kbsim" / "Cache"
    return Path.home() / ".cache" / "kbsim"


class FileReadError(UsageError):
    """A file that cannot be read within its bounds: names it and what is wrong.

    Attributes:
        path: the file.
        problem: what is wrong (no content of the file is ever quoted).
        errno: the ``errno`` of the failing system call, or None (a size or kind refusal).
    """

    def __init__(self, path: str | os.PathLike[str], problem: str, errno: int | None = None) -> None:
        self.path = os.fspath(path)
        self.problem = problem
        self.errno = errno
        super().__init__(f"{self.path}: {problem}")


class FileWriteError(UsageError):
    """A file that could not be written; the previous file, if any, is intact.

    Attributes:
        path: the target file (never the temporary one).
        problem: ``cannot write: <reason>``.
        errno: the ``errno`` of the failing system call.
        strerror: its text (``No space left on device``).
    """

    def __init__(self, path: str | os.PathLike[str], strerror: str, errno: int | None = None) -> None:
        self.path = os.fspath(path)
        self.strerror = strerror
        self.errno = errno
        self.problem = f"cannot write: {strerror}"
        super().__init__(f"{self.path}: {self.problem}")


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _os_problem(exc: OSError) -> str:
    if exc.errno == errnos.ENOENT:
        return "no such file"
    if exc.errno == errnos.ELOOP:
        return "a loop of symbolic links; expected a file"
    return f"cannot read it: {exc.strerror or exc}"


def path_problem(path: str | os.PathLike[str], what: str = "file", *, folder_ok: bool = False) -> str | None:
    """Why ``path`` is not a regular file (or, with ``folder_ok``, a folder), else None.

    Told apart without opening it: ``no such file``, a loop of symbolic links, a symbolic
    link to nothing, a FIFO or device (``is a FIFO (named pipe); expected a regular WHAT``).
    For a reader that does not read the bytes itself (SQLite opens its file), or that must
    say why a path that "does not exist" does not.
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno == errnos.ENOENT and os.path.islink(path):
            return "a symbolic link to nothing (its target does not exist)"
        return _os_problem(exc)
    if stat.S_ISREG(info.st_mode) or (folder_ok and stat.S_ISDIR(info.st_mode)):
        return None
    return f"is {_kind(info.st_mode)}; expected a regular {what}"


def _a(what: str) -> str:
    return f"{'an' if what[:1].lower() in 'aeiou' else 'a'} {what}"


def _describe_size(n: int) -> str:
    """``1,048,576 bytes (1 MiB)``: a size limit as a message states it."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n:,} bytes ({n // scale} {unit})"
    return f"{n:,} bytes"


def read_regular(
    path: str | os.PathLike[str],
    limit: int,
    *,
    what: str = "file",
    error: Callable[[str], Exception] | None = None,
) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    Args:
        path: the file; a symbolic link to a regular file is followed.
        limit: the most bytes the file may hold.
        what: what the file is, for the size message ("config file", "article file").
        error: builds the exception to raise from a problem's text (so a caller raises its
            own error type, naming the file its way); by default a :class:`FileReadError`.

    Raises:
        FileReadError: (or ``error(problem)``) for a missing file, a link loop, a FIFO,
            device or folder, a file over ``limit`` bytes, or any other read failure.
            A missing file's ``errno`` is ``ENOENT``, so callers can word that case.
    """
    return b"".join(read_regular_chunks(path, limit, what=what, error=error))


def read_regular_chunks(
    path: str | os.PathLike[str],
    limit: int,
    *,
    what: str = "file",
    error: Callable[[str], Exception] | None = None,
    chunk_bytes: int = 1 << 20,
) -> Generator[bytes, None, None]:
    """The bytes of the regular file at ``path`` a chunk of at most ``chunk_bytes`` at a time,
    with the checks of :func:`read_regular` (a reader that need not hold the whole file).

    The file is opened, and refused if it is not a regular file of at most ``limit`` bytes,
    before the first chunk; a file that grows past ``limit`` while it is read is refused
    after the chunk that crossed it. The file is closed when the chunks end or the caller
    stops taking them.

    Raises:
        FileReadError: (or ``error(problem)``) as :func:`read_regular`.
    """

    def refuse(problem: str, code: int | None = None) -> Exception:
        return FileReadError(path, problem, code) if error is None else error(problem)

    try:
        # O_NONBLOCK: opening a FIFO with no writer must not wait for one
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise refuse(_os_problem(exc), exc.errno) from None
    try:
        try:
            info = os.fstat(fd)
        except OSError as exc:
            raise refuse(_os_problem(exc), exc.errno) from None
        if not stat.S_ISREG(info.st_mode):
            raise refuse(f"is {_kind(info.st_mode)}; expected a regular {what}")
        if info.st_size > limit:
            raise refuse(f"is {info.st_size:,} bytes, over the limit of {_describe_size(limit)} for {_a(what)}")
        left = limit + 1
        while left > 0:
            try:
                chunk = os.read(fd, min(left, chunk_bytes))
            except OSError as exc:
                raise refuse(_os_problem(exc), exc.errno) from None
            if not chunk:
                break
            left -= len(chunk)
            if left <= 0:
                raise refuse(f"grew past the limit of {_describe_size(limit)} for {_a(what)} while it was read")
            yield chunk
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, fsync: bool = True) -> Path:
    """Write ``data`` to ``path`` all at once: a temporary file beside it, then a rename.

    Args:
        path: the target; its folder must exist. An existing file keeps its permissions.
        data: the whole new content.
        fsync: flush the data (and the rename) to the disk before returning, so that a
            power cut leaves the old file or the new one. The results folder passes False:
            its checksums catch a torn file and a run is recomputed.

    Raises:
        FileWriteError: one line naming ``path`` (a full disk, a read-only folder, a file
            where the folder should be); the previous file is unchanged and no temporary
            file is left.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:
            mode = None
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            with open(fd, "wb", closefd=True) as handle:
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)
                handle.write(data)
                handle.flush()
                if fsync:
                    os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise FileWriteError(path, exc.strerror or str(exc), exc.errno) from None
    if fsync:
        _fsync_folder(path.parent)
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8",
                      fsync: bool = True) -> Path:
    """:func:`atomic_write_bytes` of ``text`` encoded (UTF-8 by default), newlines as given."""
    return atomic_write_bytes(path, text.encode(encoding), fsync=fsync)


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable, where the system allows it (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
