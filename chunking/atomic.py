"""Writing a file atomically: the one writer of every final file the toolkit replaces whole.

The content goes to a temporary file with a unique name (so concurrent writers never share one), is flushed and
fsynced, and the temporary is renamed over the target with :func:`os.replace`: a reader sees the old file or the
new one, never a part. The temporary is created with mode ``0o666`` and the kernel applies the process's umask,
so the file gets the permissions a plain ``open(path, "w")`` would give it (no umask is read, so no other thread
sees it changed). On any failure the temporary is removed and an existing target is left as it was.

It lives in the most upstream package so every package can use it. Directories made whole under a temporary name
are another thing (:func:`swe_explore.indexes.store.atomic_directory`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from pathlib import Path

__all__ = ["replace_directory", "write_bytes_atomic", "write_text_atomic"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


def _create_temporary(directory: Path, name: str) -> tuple[int, Path]:
    """Create ``<directory>/.<name>.<16 random hex>.tmp`` exclusively, mode ``0o666`` minus the umask.

    :param directory: where the temporary goes.
    :param name: the target file's name.
    :return: the open file descriptor and the temporary's path.
    :raises FileExistsError: if 100 random names were all taken.
    """
    for _ in range(100):
        tmp = directory / f".{name}.{secrets.token_hex(8)}.tmp"
        try:
            return os.open(tmp, _FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{directory}: no free temporary name for {name}")


def write_bytes_atomic(path: str | Path, data: bytes, *, temp_dir: str | Path | None = None) -> None:
    """Replace ``path`` with ``data`` atomically (temporary file, fsync, :func:`os.replace`).

    :param path: the file to (re)write; its directory is created.
    :param data: the whole content.
    :param temp_dir: where the temporary goes (default: ``path``'s directory); it must be on the same file system.
    :raises OSError: if the file cannot be written or renamed (the temporary is removed, ``path`` is unchanged).
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_temporary(path.parent if temp_dir is None else Path(temp_dir), path.name)
    except OSError as exc:
        raise _naming(exc, path) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise _naming(exc, path) from exc
        raise


def _naming(exc: OSError, path: Path) -> OSError:
    """The error of a failed write, naming the target file (not the temporary, nor none as a full disk does).

    :param exc: the error (one without ``errno`` is returned as it is: its message is its own).
    :param path: the target file.
    :return: an error of the same class with ``filename`` set to ``path``.
    """
    if exc.errno is None or exc.filename == str(path):
        return exc
    try:
        return type(exc)(exc.errno, exc.strerror, str(path))
    except TypeError:  # a subclass with another constructor
        return OSError(exc.errno, exc.strerror, str(path))


def write_text_atomic(path: str | Path, text: str, *, encoding: str = "utf-8") -> None:
    """Replace ``path`` with ``text`` atomically (:func:`write_bytes_atomic`); newlines are written as they are.

    :param path: the file to (re)write; its directory is created.
    :param text: the whole content.
    :param encoding: the text encoding.
    :raises OSError: if the file cannot be written or renamed (the temporary is removed, ``path`` is unchanged).
    :raises UnicodeEncodeError: if ``text`` cannot be encoded (nothing is written).
    """
    write_bytes_atomic(path, text.encode(encoding))


def replace_directory(tmp: Path, target: Path, old: Path) -> None:
    """Put a fully written directory ``tmp`` in place of ``target``: an existing ``target`` is first renamed to
    ``old`` (a free sibling name the caller chose) and deleted only after ``tmp`` is in place, so a reader sees the
    old directory or the new one.

    :param tmp: the new directory (a sibling of ``target``).
    :param target: the directory to replace or create.
    :param old: where an existing ``target`` is moved before it is removed.
    """
    moved = False
    if target.exists():
        os.replace(target, old)
        moved = True
    os.replace(tmp, target)
    if moved:
        shutil.rmtree(old, ignore_errors=True)
