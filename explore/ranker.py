"""The learned ranker: a LightGBM LambdaRank model over the candidate features of :mod:`.features`.

A model is two small text files shipped in the package (``explore/models/``): ``<name>.txt``, LightGBM's own
text format (``Booster.model_to_string``), and ``<name>.json``, its card: the feature names in column order, the
candidate configuration it was trained with, the training parameters, and the training manifest (every
repository and commit the training records came from, counts, seed, library versions). Loading checks that the
two belong together (the text's SHA-256 is in the card) and needs no network.

Training (:func:`train`) is LightGBM's ``lambdarank`` objective (Burges, "From RankNet to LambdaRank to
LambdaMART: An Overview", MSR-TR-2010-82), one query group per bench record, relevance labels from the
overlap of each candidate with the record's core regions (:func:`relevance`); LightGBM is run single-threaded
with ``deterministic=True`` and a fixed seed, so the same data gives the same model. ``scripts/train_ranker.py``
is the one reproducible command that builds the shipped model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from swe_explore.chunking.types import Chunk

#: Where the shipped models live.
MODELS_DIR = Path(__file__).resolve().parent / "models"
#: The models the default explorer averages (:class:`RankerEnsemble`): the same training data, two feature sets.
DEFAULT_RANKER_MODEL = "ranker-mentions-history,ranker-mentions-graph-history"

#: Old spellings (still importable, with a DeprecationWarning).
_RENAMED = {"DEFAULT_MODEL": "DEFAULT_RANKER_MODEL", "load_model": "load_ranker"}

if not TYPE_CHECKING:  # a type checker flags the old spellings

    def __getattr__(name: str) -> Any:
        from swe_explore.deprecation import renamed_attribute

        return renamed_attribute(__name__, name, _RENAMED, globals())


#: LightGBM parameters of :func:`train` (the objective's defaults otherwise).
TRAIN_PARAMS: dict[str, Any] = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "ndcg_eval_at": [5, 10],
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 50,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambdarank_truncation_level": 20,
    "num_threads": 1,
    "deterministic": True,
    "force_row_wise": True,
    "verbosity": -1,
}


class ModelError(ValueError):
    """A model file is missing, malformed or does not match its card (the message names the file)."""


@dataclass
class RankerModel:
    """A trained ranker: the LightGBM booster and its card.

    :param booster: the LightGBM booster.
    :param card: the card (``features``, ``candidates``, ``params``, ``manifest``, ...).
    :param name: the model's name (file stem).
    """

    booster: Any
    card: dict[str, Any]
    name: str = ""
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def features(self) -> tuple[str, ...]:
        """The feature names, in column order."""
        return tuple(self.card["features"])

    def score(self, matrix: np.ndarray) -> np.ndarray:
        """Scores of candidates (higher is better).

        :param matrix: float32 ``(n, len(features))`` feature rows.
        :return: float64 ``(n,)``.
        :raises ValueError: if the number of columns differs from the model's.
        """
        if matrix.shape[1] != len(self.features):
            raise ValueError(f"model {self.name} takes {len(self.features)} features, got {matrix.shape[1]}")
        if matrix.shape[0] == 0:
            return np.zeros(0)
        return np.asarray(self.booster.predict(matrix, num_threads=1), dtype=np.float64)

    def save(self, directory: Path, name: str) -> tuple[Path, Path]:
        """Write ``<name>.txt`` and ``<name>.json`` (the card with the text's SHA-256).

        :param directory: target directory (created).
        :param name: file stem.
        :return: the two paths.
        """
        directory.mkdir(parents=True, exist_ok=True)
        text = self.booster.model_to_string()
        txt, card = directory / f"{name}.txt", directory / f"{name}.json"
        txt.write_text(text, encoding="utf-8")
        self.card["model_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        card.write_text(json.dumps(self.card, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return txt, card


@dataclass
class RankerEnsemble:
    """Several rankers whose scores are averaged: models trained on the same data with different feature sets
    make errors that partly cancel (measured in ``docs/benchmarks.md``: the average of ``ranker-mentions`` and
    ``ranker-mentions-graph`` beats each alone on dev and the held-out set).

    :param models: the members (one or more).
    """

    models: list[RankerModel]

    @property
    def name(self) -> str:
        """The members' names joined by ``,``."""
        return ",".join(m.name for m in self.models)

    @property
    def features(self) -> tuple[str, ...]:
        """The union of the members' features, in first-seen order (the columns :meth:`score` takes)."""
        return tuple(dict.fromkeys(f for m in self.models for f in m.features))

    @property
    def candidates(self) -> dict[str, Any]:
        """The candidate configuration: the first member's, with mentions and the graph on if any member uses them
        and the most history files any member takes (``history`` only when one does)."""
        out = dict(self.models[0].card["candidates"])
        for key in ("mentions", "graph"):
            out[key] = any(m.card["candidates"].get(key) for m in self.models)
        history = max(int(m.card["candidates"].get("history", 0)) for m in self.models)
        if history:
            out["history"] = history
        return out

    @property
    def fingerprint(self) -> list[dict[str, str]]:
        """Every member's name and text SHA-256 (written into result rows)."""
        return [{"name": m.name, "sha256": str(m.card.get("model_sha256"))} for m in self.models]

    def score(self, matrix: np.ndarray) -> np.ndarray:
        """The mean of the members' scores.

        :param matrix: float32 ``(n, len(features))`` in :attr:`features` order.
        :return: float64 ``(n,)``.
        """
        columns = {f: j for j, f in enumerate(self.features)}
        scores = [m.score(matrix[:, [columns[f] for f in m.features]]) for m in self.models]
        return np.mean(scores, axis=0) if scores else np.zeros(matrix.shape[0])


def load_ensemble(names: str | Path | Sequence[str | Path] = DEFAULT_RANKER_MODEL) -> RankerEnsemble:
    """Load one or several models (a comma-separated string or a sequence) as an ensemble.

    :param names: shipped model names or paths.
    :return: the ensemble.
    :raises ModelError: if a member cannot be loaded.
    """
    items = str(names).split(",") if isinstance(names, (str, Path)) else [str(n) for n in names]
    return RankerEnsemble([load_ranker(n.strip()) for n in items if n.strip()])


def model_paths(name_or_path: str | Path) -> tuple[Path, Path]:
    """The text and card files of a model given by shipped name (``ranker-lexical``) or by path.

    :param name_or_path: a name in :data:`MODELS_DIR`, or a path to ``X.txt``/``X.json``/``X``.
    :return: ``(text file, card file)``.
    """
    path = Path(name_or_path)
    if path.suffix in (".txt", ".json"):
        path = path.with_suffix("")
    if (not path.parent.parts or str(path.parent) == ".") and not path.with_suffix(".json").exists():
        path = MODELS_DIR / path.name
    return path.with_suffix(".txt"), path.with_suffix(".json")


def load_ranker(name_or_path: str | Path) -> RankerModel:
    """Load one model and check it against its card: the one path from model files to a :class:`RankerModel`
    (:func:`load_ensemble` loads each member with it).

    :param name_or_path: a shipped model name or a path (see :func:`model_paths`).
    :return: the model.
    :raises ModelError: if a file is missing, the card is malformed, or the text is not the one the card records.
    """
    import lightgbm

    txt, card_path = model_paths(name_or_path)
    for path in (txt, card_path):
        if not path.is_file():
            raise ModelError(f"{path}: ranker model file is missing")
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"{card_path}: unreadable model card ({exc})") from None
    if not isinstance(card, dict) or not isinstance(card.get("features"), list):
        raise ModelError(f"{card_path}: the card lacks its feature list")
    text = txt.read_text(encoding="utf-8")
    if card.get("model_sha256") != hashlib.sha256(text.encode("utf-8")).hexdigest():
        raise ModelError(f"{txt}: SHA-256 differs from the one in {card_path.name} (edited or mismatched files)")
    try:
        booster = lightgbm.Booster(model_str=text)
    except lightgbm.basic.LightGBMError as exc:
        raise ModelError(f"{txt}: not a LightGBM model ({exc})") from None
    if booster.num_feature() != len(card["features"]):
        raise ModelError(f"{txt}: {booster.num_feature()} features, the card lists {len(card['features'])}")
    return RankerModel(booster, card, txt.stem)


#: Relevance label schemes (:func:`relevance`).
LABEL_SCHEMES = ("lines", "file")


def candidate_overlap(
    candidates: Sequence[Chunk], core: Mapping[str, Sequence[tuple[int, int]]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the labels are made from: per candidate, its core lines, its own lines and its file's core lines.

    :param candidates: the candidate chunks.
    :param core: resolved core regions by path: ``[(start, end), ...]`` (1-based, inclusive, merged).
    :return: three int32 arrays ``(n,)``: lines of the chunk that are core, lines of the chunk, core lines of the
        chunk's file (0 when the file has no core region).
    """
    core_lines = {p: sum(e - s + 1 for s, e in spans) for p, spans in core.items()}
    overlap = np.zeros(len(candidates), dtype=np.int32)
    lines = np.zeros(len(candidates), dtype=np.int32)
    file_core = np.zeros(len(candidates), dtype=np.int32)
    for k, c in enumerate(candidates):
        lines[k] = c.end - c.start + 1
        spans = core.get(c.path)
        if spans:
            file_core[k] = core_lines[c.path]
            overlap[k] = sum(max(0, min(e, c.end) - max(s, c.start) + 1) for s, e in spans)
    return overlap, lines, file_core


def relevance(overlap: np.ndarray, lines: np.ndarray, file_core: np.ndarray, scheme: str = "file") -> np.ndarray:
    """Relevance labels of candidates from :func:`candidate_overlap`.

    ``lines``: 2 if at least half of the chunk's lines or half of its file's core lines are core, 1 if it
    overlaps a core region at all, else 0. ``file`` (default): 3 and 2 as ``lines``' 2 and 1, plus 1 for every
    other chunk of a file holding core lines: exploration ground truth is the code read around a change, so
    a ranker trained on the lines a commit changed also learns which files matter.

    :param overlap: core lines of each chunk.
    :param lines: lines of each chunk.
    :param file_core: core lines of each chunk's file.
    :param scheme: ``"lines"`` or ``"file"``.
    :return: int32 labels ``(n,)``.
    :raises ValueError: for an unknown scheme.
    """
    if scheme not in LABEL_SCHEMES:
        raise ValueError(f"unknown label scheme {scheme!r}; valid: {', '.join(LABEL_SCHEMES)}")
    strong = (overlap > 0) & ((overlap * 2 >= lines) | (overlap * 2 >= file_core))
    base = np.where(strong, 2, np.where(overlap > 0, 1, 0)).astype(np.int32)
    if scheme == "lines":
        return base
    return np.where(overlap > 0, base + 1, np.where(file_core > 0, 1, 0)).astype(np.int32)


def train(
    groups: Sequence[tuple[np.ndarray, np.ndarray]],
    features: Sequence[str],
    *,
    rounds: int = 300,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    valid: Sequence[tuple[np.ndarray, np.ndarray]] = (),
) -> Any:
    """Train a LambdaRank booster.

    :param groups: one ``(feature matrix, labels)`` pair per query (record); groups without a positive label
        carry no ranking signal and are skipped.
    :param features: the feature names (columns).
    :param rounds: boosting rounds.
    :param seed: LightGBM's seed (bagging, feature fraction).
    :param params: overrides of :data:`TRAIN_PARAMS`.
    :param valid: optional validation groups (early stopping after 30 rounds without gain on nDCG@5).
    :return: the LightGBM booster.
    :raises ValueError: if no group has a positive label.
    """
    import lightgbm

    def dataset(parts: Sequence[tuple[np.ndarray, np.ndarray]], reference: Any = None) -> Any:
        kept = [(x, y) for x, y in parts if y.size and y.max() > 0]
        if not kept:
            raise ValueError("no training group has a relevant candidate")
        x = np.vstack([x for x, _ in kept]).astype(np.float32)
        y = np.concatenate([y for _, y in kept])
        return lightgbm.Dataset(
            x, y, group=[len(y) for _, y in kept], feature_name=list(features), reference=reference, free_raw_data=False
        )

    train_set = dataset(groups)
    config = {**TRAIN_PARAMS, "seed": seed, **(params or {})}
    callbacks: list[Any] = []
    valid_sets = []
    if valid:
        valid_sets = [dataset(valid, train_set)]
        callbacks.append(lightgbm.early_stopping(30, first_metric_only=True, verbose=False))
    return lightgbm.train(config, train_set, num_boost_round=rounds, valid_sets=valid_sets, callbacks=callbacks)
