"""Optional path normalisation for *external* predictions (the ``--normalize-paths`` option).

The reference evaluator compares paths as exact strings (spec §0): ``./a.py`` and ``a.py`` are different files,
and so are ``a\\b.py`` and ``a/b.py``. :mod:`evaluation.metrics` keeps that behaviour. When a user explicitly
asks for it, :func:`normalize_path` is applied to predicted paths only (never to the ground truth, whose paths
are already repo-relative POSIX paths).
"""

from __future__ import annotations


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
