"""Optional path normalisation for *external* predictions (the ``--normalize-paths`` option).

The reference evaluator compares paths as exact strings (docs/metrics.md §0): ``./a.py`` and ``a.py`` are different
files, and so are ``a\\b.py`` and ``a/b.py``. :mod:`evaluation.metrics` keeps that behaviour. When a user explicitly
asks for it, :func:`normalize_path` is applied to predicted paths only (never to the ground truth, whose paths are
already repo-relative POSIX paths).
"""

from __future__ import annotations

from pathlib import Path


def normalize_path(path: str) -> str:
    """Normalise a predicted path: ``\\`` becomes ``/`` and leading ``./`` segments are removed.

    Leading ``./`` segments are removed one segment at a time (``././a.py`` → ``a.py``, ``.//a.py`` →
    ``a.py``); this is deliberately not ``lstrip("./")``, which would turn ``.github/x.yml`` into
    ``github/x.yml`` and ``../x.py`` into ``x.py``. ``..`` segments, dot-files, dot-directories and
    ``/./`` inside the path are left alone.

    :param path: a path as written by an explorer.
    :return: the normalised path.
    """
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:].lstrip("/")
    return path


def in_snapshot(snapshot: str | Path, path: str) -> bool:
    """Whether ``path`` names a file of the snapshot the way the metrics compare paths (docs/metrics.md §0).

    The ground truth uses repo-relative POSIX paths, so a predicted path scores only in that form: an absolute
    path, a ``\\`` separator, or an empty, ``.`` or ``..`` segment (``sub/../a.py``, ``./a.py``) never matches
    a ground-truth path even when it reaches an existing file.

    :param snapshot: the snapshot directory.
    :param path: a predicted path.
    :return: true if ``path`` is in that form and is a file (or a symlink to one) of the snapshot.
    """
    if not path or path.startswith("/") or "\\" in path:
        return False
    if any(part in ("", ".", "..") for part in path.split("/")):
        return False
    return (Path(snapshot) / path).is_file()
