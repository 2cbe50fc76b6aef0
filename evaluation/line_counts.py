"""File line counts (``path_to_lines``) for resolving the ``end == -1`` / negative-start sentinels (docs/metrics.md §0).

As in the reference runner (``eval_runner._build_file_line_counts``), lines are counted only for the paths of
the ground truth (core regions and every optional region), never for ``read_core_files`` alone and never for
predicted paths, and a file missing from the snapshot is simply absent from the map.

Two modes:

- ``"lines"`` (default): our one line definition, :func:`chunking.lines.count_lines` (split on ``\\n``; form
  feeds and other Unicode separators are ordinary characters).
- ``"splitlines"``: the reference's ``len(text.splitlines())`` after decoding UTF-8 with ``errors="ignore"``,
  which also splits on ``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029.

See ``docs/metrics.md`` for where they differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from swe_explore.chunking.lines import count_lines

LINE_COUNT_MODES: tuple[str, ...] = ("lines", "splitlines")
"""Valid values of ``mode``: our line definition, or the reference's ``str.splitlines``."""


def count_file_lines(data: bytes, mode: str = "lines") -> int:
    """Number of lines of a file's raw bytes under the chosen definition.

    :param data: the file's raw bytes.
    :param mode: ``"lines"`` (:func:`chunking.lines.count_lines`) or ``"splitlines"`` (reference:
        ``len(data.decode("utf-8", errors="ignore").splitlines())``).
    :return: the line count (0 for an empty file).
    :raises ValueError: on an unknown mode.
    """
    if mode == "lines":
        return count_lines(data)
    if mode == "splitlines":
        return len(data.decode("utf-8", errors="ignore").splitlines())
    raise ValueError(f"unknown line-count mode {mode!r}; valid modes: {', '.join(LINE_COUNT_MODES)}")


def _iter_gt_paths(gt: Mapping[str, Any]) -> Iterator[str]:
    for region in gt.get("read_core_regions") or []:
        if isinstance(region.get("path"), str):
            yield region["path"]
    for regions in (gt.get("read_optional_regions_map") or {}).values():
        for region in regions:
            if isinstance(region.get("path"), str):
                yield region["path"]


def gt_paths(gt: Mapping[str, Any]) -> list[str]:
    """The paths whose lines the reference counts: those of core regions and of all optional regions.

    :param gt: a record's ``ground_truth`` dict (region dicts with a ``path`` key).
    :return: the distinct paths, sorted.
    """
    return sorted(set(_iter_gt_paths(gt)))


def file_line_counts(gt: Mapping[str, Any], snapshot_dir: str | Path, mode: str = "lines") -> dict[str, int]:
    """Build one instance's ``path_to_lines`` map from its snapshot, as the reference runner does (docs/metrics.md §0).

    :param gt: the record's ``ground_truth`` dict.
    :param snapshot_dir: the repository snapshot the GT paths are relative to.
    :param mode: ``"lines"`` or ``"splitlines"``, see :func:`count_file_lines`.
    :return: ``{path: line count}`` for every GT path that is a readable file in the snapshot.
    :raises ValueError: on an unknown mode.
    :raises FileNotFoundError: if ``snapshot_dir`` is not a directory.
    """
    return snapshot_line_counts(snapshot_dir, gt_paths(gt), mode)


def snapshot_line_counts(snapshot_dir: str | Path, paths: Iterable[str], mode: str = "lines") -> dict[str, int]:
    """Line counts of the given files of a snapshot (GT paths, or predicted paths for the checks of
    :mod:`evaluation.region_checks`).

    :param snapshot_dir: the repository snapshot the paths are relative to.
    :param paths: repo-relative paths.
    :param mode: ``"lines"`` or ``"splitlines"``, see :func:`count_file_lines`.
    :return: ``{path: line count}`` for every path that is a readable file in the snapshot.
    :raises ValueError: on an unknown mode.
    :raises FileNotFoundError: if ``snapshot_dir`` is not a directory.
    """
    if mode not in LINE_COUNT_MODES:
        raise ValueError(f"unknown line-count mode {mode!r}; valid modes: {', '.join(LINE_COUNT_MODES)}")
    root = Path(snapshot_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"snapshot directory {root} does not exist")
    counts: dict[str, int] = {}
    for rel in paths:
        path = root / rel
        if not path.is_file():
            continue
        try:
            counts[rel] = count_file_lines(path.read_bytes(), mode)
        except OSError:
            continue  # unreadable: absent from the map, as in the reference
    return counts
