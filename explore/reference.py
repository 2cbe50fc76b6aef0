"""The SWE-Explore reference local baselines (BM25, TF-IDF, Potion), re-implemented faithfully.

These reproduce the *reference* explorers (docs/metrics.md §2.1-§2.5), quirks included, so that our baselines can be
compared with them on the same instances. They are not our baselines (those live in ``retrievers/``) and deliberately do
not use our line definition: the reference reads files with ``errors="ignore"`` and numbers lines with
:meth:`str.splitlines`, so a file containing a form feed gets different line numbers here than in :mod:`chunking.lines`.

Pipeline, shared by the three explorers:

1. :func:`reference_source_files` - files with one of the reference extensions, excluded directory names pruned at
   any depth (case-insensitive), directory symlinks not followed, sorted by repo-relative POSIX path.
2. :func:`reference_chunks` - 80-line windows every 60 lines (:func:`reference_windows`), whitespace-only windows
   skipped, and a global cap of 3000 chunks applied lazily in file order (later files are never read).
3. Scoring: BM25 (``rank_bm25.BM25Okapi``), TF-IDF (scikit-learn) or Potion (model2vec), one region per chunk.

Usage::

    explorer = ReferenceBM25("repos/dev/psf__requests-1142")   # chunks + index built once
    regions = explorer.explore(record.problem_statement, k=5)   # [Region(path, start, end), ...]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from swe_explore.chunking.history import HISTORY_FILE
from swe_explore.chunking.types import Chunk, Region
from swe_explore.chunking.walk import SNAPSHOT_MARKER
from swe_explore.retrievers.potion import load_embedding_model

PAPER_ERA_EXTENSIONS: tuple[str, ...] = (
    ".py", ".md", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".rst",
)  # fmt: skip
"""The reference tests' ten "existing" extensions; probably what paper-era runs indexed (docs/metrics.md §2.1)."""

REFERENCE_EXTENSIONS: tuple[str, ...] = PAPER_ERA_EXTENSIONS + (".ets", ".ts", ".json5")
"""The reference's full extension list (``explorers/source_files.DEFAULT_EXTENSIONS``, docs/metrics.md §2.1)."""

EXCLUDED_DIRS: frozenset[str] = frozenset({
    ".git", "node_modules", "oh_modules", "build", ".hvigor", "dist",
    ".venv", "venv", "__pycache__", ".pytest_cache", ".mypy_cache",
})  # fmt: skip
"""Directory names pruned at any depth, compared case-insensitively (docs/metrics.md §2.1)."""

CHUNK_SIZE = 80
"""Reference window size (lines)."""
CHUNK_OVERLAP = 20
"""Reference window overlap (lines); the step is ``CHUNK_SIZE - CHUNK_OVERLAP`` = 60."""
MAX_CHUNKS = 3000
"""Reference global chunk cap per snapshot, applied in file order."""

TFIDF_TOKEN_PATTERN = r"(?u)\b[A-Za-z_][A-Za-z0-9_]{1,}\b"
"""The reference TF-IDF token pattern: identifiers of at least 2 characters (docs/metrics.md §2.4)."""


# ----------------------------------------------------------------------------------------------------------
# Source discovery and chunking (docs/metrics.md §2.1, §2.2)
# ----------------------------------------------------------------------------------------------------------


def reference_source_files(
    snapshot_dir: str | Path,
    extensions: Iterable[str] = REFERENCE_EXTENSIONS,
    excluded_dirs: Iterable[str] = EXCLUDED_DIRS,
) -> list[str]:
    """A snapshot's source files, as the reference's ``reference_source_files`` lists them (docs/metrics.md §2.1).

    A file is kept if its lower-cased name ends with one of ``extensions`` (so ``.ts`` also matches ``.d.ts``)
    and it is a file (valid file symlinks count, broken ones do not), except our own snapshot marker
    (:data:`chunking.walk.SNAPSHOT_MARKER` at the top level), which the reference never sees. Directories whose
    lower-cased name is in ``excluded_dirs`` are pruned before descending; directory symlinks are not followed.

    :param snapshot_dir: the repository snapshot.
    :param extensions: suffixes, with or without the leading dot, compared case-insensitively.
    :param excluded_dirs: directory names to prune, compared case-insensitively.
    :return: repo-relative POSIX paths, sorted by plain string order (uppercase before lowercase).
    :raises FileNotFoundError: if ``snapshot_dir`` is not a directory.
    """
    root = Path(snapshot_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"snapshot directory {root} does not exist")
    suffixes = tuple(e.lower() if e.startswith(".") else f".{e.lower()}" for e in extensions)
    excluded = {name.lower() for name in excluded_dirs}
    paths: list[str] = []
    for directory, dirs, files in os.walk(root):  # followlinks=False: directory symlinks are not entered
        dirs[:] = [d for d in dirs if d.lower() not in excluded]
        for name in files:
            full = Path(directory, name)
            if name.lower().endswith(suffixes) and full.is_file():
                paths.append(full.relative_to(root).as_posix())
    for written in (SNAPSHOT_MARKER, HISTORY_FILE):  # not part of the repository: written by benchprep.snapshots
        if written in paths:
            paths.remove(written)
    return sorted(paths)


def reference_windows(
    n_lines: int, chunk_size: int = CHUNK_SIZE, chunk_overlap: int = CHUNK_OVERLAP
) -> list[tuple[int, int]]:
    """The reference window rule (docs/metrics.md §2.2): 0-based starts ``i = 0, step, 2·step, ...`` up to reaching n.

    Each window covers lines ``[i + 1, min(i + chunk_size, n)]``. With 80/20: n=80 → (1, 80); n=81 →
    (1, 80), (61, 81); n=100 → (1, 80), (61, 100).

    :param n_lines: the file's line count (lines).
    :param chunk_size: window size (lines, >= 1).
    :param chunk_overlap: overlap between windows (lines, ``0 <= overlap < chunk_size``).
    :return: ``(start, end)`` pairs, 1-based and inclusive.
    :raises ValueError: on a window size or overlap outside those ranges.
    """
    _check_window(chunk_size, chunk_overlap)
    step = chunk_size - chunk_overlap
    out: list[tuple[int, int]] = []
    for i in range(0, n_lines, step):
        end = min(i + chunk_size, n_lines)
        out.append((i + 1, end))
        if end >= n_lines:
            break
    return out


def _check_window(chunk_size: int, chunk_overlap: int) -> None:
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(f"chunk_overlap must be in [0, {chunk_size}), got {chunk_overlap}")


def _iter_windows(root: Path, paths: Sequence[str], chunk_size: int, chunk_overlap: int) -> Iterator[Chunk]:
    for rel in paths:
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="ignore")
        except OSError:
            continue
        lines = text.splitlines()  # the reference's line definition, reproduced on purpose
        for start, end in reference_windows(len(lines), chunk_size, chunk_overlap):
            content = "\n".join(lines[start - 1 : end])
            if content.strip():
                yield Chunk(path=rel, start=start, end=end, kind="window", text=content)


def reference_chunks(
    snapshot_dir: str | Path,
    chunk_size: int = CHUNK_SIZE,
    chunk_overlap: int = CHUNK_OVERLAP,
    max_chunks: int | None = MAX_CHUNKS,
    extensions: Iterable[str] = REFERENCE_EXTENSIONS,
) -> list[Chunk]:
    """Chunk a snapshot into the reference's overlapping line windows (``chunk_repo``, docs/metrics.md §2.2).

    Files come from :func:`reference_source_files`, are read as UTF-8 with ``errors="ignore"`` and split with
    :meth:`str.splitlines`; windows follow :func:`reference_windows`; a window whose text is whitespace-only is not
    emitted. Windows are generated lazily and cut once at ``max_chunks``, so files after the cap (in path
    order) are never read.

    :param snapshot_dir: the repository snapshot.
    :param chunk_size: window size (lines).
    :param chunk_overlap: window overlap (lines).
    :param max_chunks: global cap on the number of chunks; ``None`` = no cap, ``<= 0`` = no chunks.
    :param extensions: the extension list (default: the reference's full list; see
        :data:`PAPER_ERA_EXTENSIONS`).
    :return: chunks (``kind="window"``, ``text`` = the window's lines joined with ``"\\n"``), in file order.
    :raises FileNotFoundError: if ``snapshot_dir`` is not a directory.
    :raises ValueError: on an invalid window size or overlap.
    """
    _check_window(chunk_size, chunk_overlap)
    root = Path(snapshot_dir)
    windows = _iter_windows(root, reference_source_files(root, extensions), chunk_size, chunk_overlap)
    return list(islice(windows, None if max_chunks is None else max(max_chunks, 0)))


# ----------------------------------------------------------------------------------------------------------
# Explorers (docs/metrics.md §2.3-§2.5)
# ----------------------------------------------------------------------------------------------------------


class ReferenceExplorer:
    """Base of the reference explorers: chunk the snapshot once, then answer many queries.

    :param snapshot_dir: the repository snapshot.
    :param chunk_size: window size (lines).
    :param chunk_overlap: window overlap (lines).
    :param max_chunks: global chunk cap (``None`` = none).
    :param extensions: the extension list used for source discovery.
    :param chunks: prebuilt chunks of this snapshot (e.g. shared between BM25 and TF-IDF); if given, the
        snapshot is not read again and the chunking parameters are only recorded.
    :raises FileNotFoundError: if ``snapshot_dir`` is not a directory (and no chunks are given).
    :raises ValueError: on an invalid window size or overlap.
    """

    name = "reference"

    def __init__(
        self,
        snapshot_dir: str | Path,
        *,
        chunk_size: int = CHUNK_SIZE,
        chunk_overlap: int = CHUNK_OVERLAP,
        max_chunks: int | None = MAX_CHUNKS,
        extensions: Iterable[str] = REFERENCE_EXTENSIONS,
        chunks: Sequence[Chunk] | None = None,
    ) -> None:
        _check_window(chunk_size, chunk_overlap)
        self.snapshot_dir = Path(snapshot_dir)
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.max_chunks = max_chunks
        self.extensions = tuple(extensions)
        if chunks is None:
            chunks = reference_chunks(snapshot_dir, chunk_size, chunk_overlap, max_chunks, self.extensions)
        self.chunks: list[Chunk] = list(chunks)

    @property
    def explorer_config(self) -> dict[str, Any]:
        """A result row's ``explorer_config``: ``{chunk_size, chunk_overlap}`` (docs/metrics.md §3.2)."""
        return {"chunk_size": self.chunk_size, "chunk_overlap": self.chunk_overlap}

    def search(self, query: str, k: int) -> list[tuple[Chunk, float]]:
        """Rank chunks for a query.

        :param query: the raw issue text.
        :param k: number of chunks to return at most (>= 1).
        :return: ``(chunk, score)`` pairs, best first.
        """
        raise NotImplementedError

    def explore(self, query: str, k: int) -> list[Region]:
        """Return the top-k regions for a query, one region per chunk, as the reference explorer does.

        :param query: the raw issue text (``problem_statement``), not preprocessed.
        :param k: number of regions to return at most (>= 1).
        :return: the regions, best first (possibly fewer than ``k``).
        :raises ValueError: if ``k < 1``.
        """
        return [chunk.region for chunk, _ in self.search(query, k)]


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k (regions to return, top-K) must be an integer >= 1, got {k!r}")


class ReferenceBM25(ReferenceExplorer):
    """Reference BM25 (``explorers/bm25.BM25Explorer``, docs/metrics.md §2.3).

    ``rank_bm25.BM25Okapi`` with its defaults (k1 = 1.5, b = 0.75, epsilon = 0.25) over ``str.split()`` tokens
    of the raw chunk text and query (case kept, punctuation attached). All chunks are scored and sorted by
    score descending with a stable sort (ties keep corpus order); the first ``k`` are returned with **no**
    score > 0 filter. An empty corpus returns ``[]``.

    Parameters as in :class:`ReferenceExplorer`.
    """

    name = "reference_bm25"

    def __init__(self, snapshot_dir: str | Path, **kwargs: Any) -> None:
        super().__init__(snapshot_dir, **kwargs)
        from rank_bm25 import BM25Okapi

        self._bm25 = BM25Okapi([chunk.text.split() for chunk in self.chunks]) if self.chunks else None

    def search(self, query: str, k: int) -> list[tuple[Chunk, float]]:
        """Rank all chunks by BM25 score (stable, zero scores kept).

        :param query: the raw issue text.
        :param k: number of chunks to return at most (>= 1).
        :return: ``(chunk, score)`` pairs, best first.
        :raises ValueError: if ``k < 1``.
        """
        _check_k(k)
        if self._bm25 is None:
            return []
        scores = np.asarray(self._bm25.get_scores(query.split()), dtype=np.float64)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.chunks[i], float(scores[i])) for i in order]


class ReferenceTFIDF(ReferenceExplorer):
    """Reference TF-IDF (``explorers/rag_tfidf.TFIDFExplorer``, docs/metrics.md §2.4).

    ``TfidfVectorizer(max_features=10000, sublinear_tf=True, stop_words="english",
    token_pattern=TFIDF_TOKEN_PATTERN)`` fit on the chunk texts of this snapshot, cosine similarity,
    ``argsort()[-top_k:][::-1]`` (numpy's default, unstable sort: tie order is arbitrary), chunks with score
    <= 0 skipped. Empty query or empty vocabulary → ``[]``.

    Parameters as in :class:`ReferenceExplorer`.
    """

    name = "reference_tfidf"

    def __init__(self, snapshot_dir: str | Path, **kwargs: Any) -> None:
        super().__init__(snapshot_dir, **kwargs)
        from sklearn.feature_extraction.text import TfidfVectorizer

        self._vectorizer = TfidfVectorizer(
            max_features=10000, sublinear_tf=True, stop_words="english", token_pattern=TFIDF_TOKEN_PATTERN
        )
        self._matrix: Any = None
        if self.chunks:
            try:
                self._matrix = self._vectorizer.fit_transform([chunk.text for chunk in self.chunks])
            except ValueError:  # "empty vocabulary": only stop words or no identifiers at all
                self._matrix = None

    def search(self, query: str, k: int) -> list[tuple[Chunk, float]]:
        """Rank chunks by TF-IDF cosine similarity, skipping scores <= 0.

        :param query: the raw issue text.
        :param k: number of chunks to return at most (>= 1).
        :return: ``(chunk, score)`` pairs, best first (possibly fewer than ``k``).
        :raises ValueError: if ``k < 1``.
        """
        _check_k(k)
        if self._matrix is None or not query.strip():
            return []
        from sklearn.metrics.pairwise import cosine_similarity

        scores = cosine_similarity(self._vectorizer.transform([query]), self._matrix)[0]
        top = scores.argsort()[-k:][::-1]
        return [(self.chunks[i], float(scores[i])) for i in top if scores[i] > 0]


def _l2_normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: np.ndarray = vectors / norms
    return normalised


class ReferencePotion(ReferenceExplorer):
    """Reference Potion (``explorers/rag_potion.PotionExplorer``, docs/metrics.md §2.5).

    ``StaticModel.encode`` with library defaults on the chunk texts (model2vec 0.10: ``max_length`` defaults to
    the model's, 512 tokens for potion-base-8M, and the text is first cut to ``512 * median_token_length``
    characters), L2-normalised (zero norms → 1), dot product with the normalised query, top-k by
    ``argsort()[-top_k:][::-1]``, scores <= 0 skipped.

    :param snapshot_dir: the repository snapshot.
    :param model_path: the model directory (e.g. ``/work/shared/models/potion-base-8M``); loaded once per
        process with :func:`~swe_explore.retrievers.potion.load_embedding_model`.
    :param model: an already loaded model (anything with ``encode(list[str]) -> np.ndarray``), used instead of
        ``model_path``; for tests.
    :param kwargs: chunking parameters, as in :class:`ReferenceExplorer`.
    :raises ValueError: if neither ``model_path`` nor ``model`` is given.
    """

    name = "reference_potion"

    def __init__(
        self, snapshot_dir: str | Path, *, model_path: str | Path | None = None, model: Any = None, **kwargs: Any
    ) -> None:
        if model is None:
            if model_path is None:
                raise ValueError("ReferencePotion needs model_path (a model2vec model directory) or model")
            model = load_embedding_model(model_path)[0]
        super().__init__(snapshot_dir, **kwargs)
        self.model_path = None if model_path is None else str(model_path)
        self.model = model
        self._vectors: np.ndarray | None = None
        if self.chunks:
            self._vectors = _l2_normalise(np.asarray(self.model.encode([c.text for c in self.chunks])))

    @property
    def explorer_config(self) -> dict[str, Any]:
        """``{chunk_size, chunk_overlap, model_path}``, as the reference records for potion (docs/metrics.md §3.2)."""
        return {**super().explorer_config, "model_path": self.model_path}

    def search(self, query: str, k: int) -> list[tuple[Chunk, float]]:
        """Rank chunks by cosine similarity of Potion embeddings, skipping scores <= 0.

        :param query: the raw issue text.
        :param k: number of chunks to return at most (>= 1).
        :return: ``(chunk, score)`` pairs, best first (possibly fewer than ``k``).
        :raises ValueError: if ``k < 1``.
        """
        _check_k(k)
        if self._vectors is None:
            return []
        query_vector = _l2_normalise(np.asarray(self.model.encode([query])))[0]
        scores = self._vectors @ query_vector
        top = scores.argsort()[-k:][::-1]
        return [(self.chunks[i], float(scores[i])) for i in top if scores[i] > 0]


REFERENCE_EXPLORERS: dict[str, type[ReferenceExplorer]] = {
    "reference_bm25": ReferenceBM25,
    "reference_tfidf": ReferenceTFIDF,
    "reference_potion": ReferencePotion,
}
"""Registry: explorer name → class; ``REFERENCE_EXPLORERS[name](snapshot_dir, **config).explore(query, k)``."""
