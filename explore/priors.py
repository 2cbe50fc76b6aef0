"""Ranking priors: a small, retriever-agnostic re-scoring of hits before the packer.

Any retriever's hits are re-scored with a few signals that hold across repositories, then re-sorted. Every
signal is a multiplier or an additive term with a named weight; ``RankPriors.off()`` turns all of them off so
the raw retriever can be measured (``docs/benchmarks.md`` has the ablation on the dev set).

1. **Code over prose** (``doc_weight``): chunks of documentation/config files (language ``text``: ``.rst``,
   ``.md``, ``.yml``, ``.toml`` ...) are multiplied by ``doc_weight``. Issue texts quote versions, tracebacks and
   prose that match changelogs, issue templates and user guides, while SWE-Explore's ground truth is the code
   repair trajectories read.
2. **Auxiliary directories** (``aux_dir_weight``): chunks under ``docs/``, ``doc/``, ``examples/``,
   ``.github/``, ``ci/``, ``benchmarks/`` or ``asv_bench/`` (at any depth) are multiplied by ``aux_dir_weight``.
   Tests are *not* penalised: trajectories read them (10 of the 23 dev instances have a test file as core).
3. **Symbol mentioned in the issue** (``symbol_boost``): a chunk whose definition name (the last component of
   ``symbol``, at least 4 characters) occurs as an identifier in the issue text is multiplied by
   ``1 + symbol_boost``.
4. **File mentioned in the issue** (``path_boost``): a chunk whose file is named in the issue, by path
   (``requests/sessions.py``), dotted module (``xarray.core.dataset``) or file stem as a word (``sessions``,
   at least 4 characters, not ``__init__``), is multiplied by ``1 + path_boost``.
5. **File evidence** (``file_weight``): every chunk gains ``file_weight`` times the sum of the best three
   scores (after 1–4) of its file's hits, so a file with several matching chunks outranks a single stray match.

Scores are then sorted descending, ties by chunk index, so the result is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from swe_explore.chunking.languages import CODE_LANGUAGES
from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import Hit

_AUX_DIR_RE = re.compile(r"(?:^|/)(?:docs?|examples?|\.github|ci|benchmarks?|asv_bench)/")
_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MIN_NAME_CHARS = 4
_FILE_TOP = 3


@dataclass(frozen=True)
class RankPriors:
    """Weights of the ranking priors (module docstring); the defaults are those of our baselines.

    :param doc_weight: multiplier for chunks of non-code (``text``) files, in ``[0, 1]``.
    :param aux_dir_weight: multiplier for chunks under docs/examples/CI directories, in ``[0, 1]``.
    :param symbol_boost: extra factor for chunks whose definition the issue names (``>= 0``).
    :param path_boost: extra factor for chunks of files the issue names (``>= 0``).
    :param file_weight: weight of the file's summed top-3 chunk scores added to each chunk (``>= 0``).
    :raises ValueError: if a weight is out of range.
    """

    doc_weight: float = 0.5
    aux_dir_weight: float = 0.5
    symbol_boost: float = 0.5
    path_boost: float = 0.5
    file_weight: float = 0.3

    def __post_init__(self) -> None:
        bad = [
            f"{k}={v!r}"
            for k, v in asdict(self).items()
            if not (0 <= v <= 1 if k.endswith("_weight") and k != "file_weight" else v >= 0)
        ]
        if bad:
            raise ValueError(f"invalid RankPriors: {', '.join(bad)} (multipliers in [0, 1], boosts >= 0)")

    @classmethod
    def off(cls) -> RankPriors:
        """Priors that change nothing: the raw retriever ranking."""
        return cls(doc_weight=1.0, aux_dir_weight=1.0, symbol_boost=0.0, path_boost=0.0, file_weight=0.0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable weights (written into result rows' ``explorer_config``)."""
        return asdict(self)


def apply_priors(query: str, chunks: Sequence[Chunk], hits: Sequence[Hit], priors: RankPriors) -> list[Hit]:
    """Re-score and re-sort hits with the priors.

    :param query: the issue text the hits answer.
    :param chunks: the index's chunks (``hits[i].index`` points into it).
    :param hits: a retriever's hits, any order.
    :param priors: the weights.
    :return: the hits with new scores, best first, ties by chunk index.
    """
    if not hits:
        return []
    identifiers = set(_IDENTIFIER_RE.findall(query))
    mentioned: dict[str, bool] = {}
    scores: dict[int, float] = {}
    for hit in hits:
        chunk = chunks[hit.index]
        score = hit.score
        if chunk.language not in CODE_LANGUAGES:
            score *= priors.doc_weight
        if _AUX_DIR_RE.search(chunk.path):
            score *= priors.aux_dir_weight
        if priors.symbol_boost and chunk.symbol:
            name = chunk.symbol.rsplit(".", 1)[-1]
            if len(name) >= _MIN_NAME_CHARS and name in identifiers:
                score *= 1 + priors.symbol_boost
        if priors.path_boost:
            if chunk.path not in mentioned:
                mentioned[chunk.path] = _file_mentioned(chunk.path, query, identifiers)
            if mentioned[chunk.path]:
                score *= 1 + priors.path_boost
        scores[hit.index] = score
    if priors.file_weight:
        per_file: dict[str, list[float]] = {}
        for index, score in scores.items():
            per_file.setdefault(chunks[index].path, []).append(score)
        evidence = {path: sum(sorted(values, reverse=True)[:_FILE_TOP]) for path, values in per_file.items()}
        scores = {i: s + priors.file_weight * evidence[chunks[i].path] for i, s in scores.items()}
    return [Hit(i, scores[i]) for i in sorted(scores, key=lambda i: (-scores[i], i))]


def _file_mentioned(path: str, query: str, identifiers: set[str]) -> bool:
    """Whether the issue names the file by path, dotted module or stem (see the module docstring)."""
    if path in query:
        return True
    module = path.rsplit(".", 1)[0]
    if "/" in module and module.replace("/", ".") in query:
        return True
    stem = module.rsplit("/", 1)[-1]
    return len(stem) >= _MIN_NAME_CHARS and stem != "__init__" and stem in identifiers
