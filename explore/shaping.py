"""Regions shaped like the evidence (issue 19): one region per file, sized by how much the ranking trusts the file.

The dev ground truth (``docs/metrics.md`` §3.1) has one core region per core file: the *whole* file when an agent
read it (the modified file and its big neighbours) or a 5-line window when it grepped it (typically a test). The
shared packer (:mod:`swe_explore.explore.packing`) emits chunk-sized regions instead. :func:`shape` plans regions
per file from a scored ranking:

1. **File scores.** A file's score is its best chunk's score; ``top`` is the best file score.
2. **Confident files** — the top file, and every file within ``confident_margin`` of ``top`` — become ONE large
   region each, best first: the whole file when it has at most ``cap`` lines, else its *evidence-dense span*: the
   best chunk, then every further chunk of the file (in rank order) whose addition keeps the span within ``cap``
   lines. ``cap = min(whole_file_lines, budget left - reserve_lines)`` (at least 1), so at B=500 a big file
   gets the dense span of what fits.
3. **Doubtful files and completed tests** compete for the remaining slots by score: a doubtful file (below the
   confident margin) shows its best chunk cut to ``doubtful_lines``; a completed test (``extra``, from
   :mod:`swe_explore.explore.completion`, already small) shows its region as given, and takes the place of its
   file's own doubtful region when it scores higher (the score of the code file it came from, discounted).
4. **Calibrated K.** Anything whose score is below ``top - keep_margin`` is dropped, so weak evidence gives fewer
   than K regions.
5. **Fill** (optional): the budget still unused grows the confident regions, best first, downwards then upwards,
   each to at most ``whole_file_lines``.

Every region is an explicit range ``1 <= start <= end <= file lines`` (never a sentinel), at most one region per
file (so none overlap), at most ``k`` regions, and their lines sum to at most ``budget``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from swe_explore.chunking.types import ScoredChunk, ScoredRegion

__all__ = ["COMPLETIONS", "SHAPES", "ShapeConfig", "file_scores", "shape", "shape_config"]

#: Region shapes of the learned explorer: ``plain`` (the shared packer) and ``evidence`` (:func:`shape`).
SHAPES = ("plain", "evidence")
#: File-set completion modes: ``tests`` (complete the confident code files with their tests) or ``none``.
COMPLETIONS = ("tests", "none")


@dataclass(frozen=True)
class ShapeConfig:
    """Parameters of :func:`shape` (module docstring). The defaults were chosen on the 23-instance dev set only, by
    precision, nDCG@500, HitFile, context efficiency and line recall summed over B = 500, 1000, 2000 (the lead
    confirms them on other sets); on dev they are flat in ``completion_files`` 2-3 and ``test_lines`` 5-10.

    :param whole_file_lines: W, the largest region a confident file gets (its whole file when it fits), lines.
    :param confident_margin: a file within this score margin of the top file is confident (``>= 0``).
    :param keep_margin: a file or test below ``top - keep_margin`` gets no region (``>= confident_margin``).
    :param doubtful_lines: cap on a doubtful file's region (its best chunk), lines.
    :param reserve_lines: lines a confident file leaves for the doubtful files and tests after it.
    :param completion: ``tests`` or ``none`` (:data:`COMPLETIONS`).
    :param completion_files: how many of the top code files are completed with their tests.
    :param test_discount: a completed test scores its code file's score minus this (``>= 0``).
    :param import_discount: a test found by its imports (not its name) is discounted this much more (``>= 0``).
    :param test_lines: cap on a completed test's region (its best BM25 chunk), lines.
    :param fill: grow the confident regions into the unused budget.
    :raises ValueError: if a parameter is out of range.
    """

    whole_file_lines: int = 1000
    confident_margin: float = 1.0
    keep_margin: float = 3.0
    doubtful_lines: int = 20
    reserve_lines: int = 100
    completion: str = "tests"
    completion_files: int = 3
    test_discount: float = 0.5
    import_discount: float = 1.0
    test_lines: int = 5
    fill: bool = True

    def __post_init__(self) -> None:
        checks = {
            "whole_file_lines": self.whole_file_lines >= 1,
            "confident_margin": self.confident_margin >= 0,
            "keep_margin": self.keep_margin >= self.confident_margin,
            "doubtful_lines": self.doubtful_lines >= 1,
            "reserve_lines": self.reserve_lines >= 0,
            "completion": self.completion in COMPLETIONS,
            "completion_files": self.completion_files >= 0,
            "test_discount": self.test_discount >= 0,
            "import_discount": self.import_discount >= 0,
            "test_lines": self.test_lines >= 1,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            values = ", ".join(f"{name}={getattr(self, name)!r}" for name in bad)
            raise ValueError(
                f"invalid ShapeConfig: {values} (line caps >= 1, margins >= 0 with keep_margin >= "
                f"confident_margin, completion one of {', '.join(COMPLETIONS)})"
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable parameters, written into result rows as part of ``explorer_config``."""
        return asdict(self)


def shape_config(shape: str | ShapeConfig | None) -> ShapeConfig | None:
    """The shaping parameters a ``shape`` option names: ``None`` or ``"plain"`` is the packer (``None``),
    ``"evidence"`` the dev-chosen :class:`ShapeConfig`, a :class:`ShapeConfig` itself.

    :param shape: the option.
    :return: the config, or ``None`` for the packer.
    :raises ValueError: for another name, listing :data:`SHAPES`.
    """
    if shape is None or isinstance(shape, ShapeConfig):
        return shape
    if shape == "plain":
        return None
    if shape == "evidence":
        return ShapeConfig()
    raise ValueError(f"unknown shape {shape!r}; valid: {', '.join(SHAPES)}")


def file_scores(ranked: Sequence[ScoredChunk], file_lines: Mapping[str, int] | None = None) -> dict[str, float]:
    """Each file's score: its best chunk's score, files in the order of their best chunk's rank.

    :param ranked: scored chunks, best first.
    :param file_lines: when given, chunks of files with no lines there are ignored.
    :return: path -> score.
    """
    out: dict[str, float] = {}
    for s in ranked:
        if file_lines is not None and file_lines.get(s.chunk.path, 0) < s.chunk.start:
            continue
        out[s.chunk.path] = max(out.get(s.chunk.path, float("-inf")), float(s.score))
    return out


def _dense_span(chunks: Sequence[tuple[int, int]], cap: int) -> tuple[int, int]:
    """The best chunk's span (its head, when longer than ``cap``), widened by every further chunk, in rank order,
    that keeps it within ``cap`` lines."""
    start, end = chunks[0]
    end = min(end, start + cap - 1)
    for s, e in chunks[1:]:
        lo, hi = min(start, s), max(end, e)
        if hi - lo + 1 <= cap:
            start, end = lo, hi
    return start, end


def shape(
    ranked: Sequence[ScoredChunk],
    file_lines: Mapping[str, int],
    k: int,
    budget: int,
    config: ShapeConfig | None = None,
    extra: Sequence[ScoredRegion] = (),
) -> list[ScoredRegion]:
    """Plan at most ``k`` regions, one per file, within ``budget`` lines, shaped like the evidence.

    :param ranked: scored chunks, best first (an explorer's ``rank()``).
    :param file_lines: line count of every file; chunks of files missing there are ignored.
    :param k: maximum number of regions (``>= 1``).
    :param budget: maximum total lines (``>= 1``).
    :param config: shaping parameters; default ``ShapeConfig()``.
    :param extra: completed test regions with their scores (e.g. from
        :func:`swe_explore.explore.completion.complete_tests`); one replaces its file's own doubtful region when it
        scores higher, and is ignored for a confident file.
    :return: the regions, confident files first (best first), then doubtful files and tests by score; explicit
        ranges within their files, no two in one file, lines summing to at most ``budget``.
    :raises ValueError: if ``k`` or ``budget`` is below 1.
    """
    if k < 1 or budget < 1:
        raise ValueError(f"shape needs k >= 1 and budget >= 1, got k={k}, budget={budget}")
    cfg = config or ShapeConfig()
    spans: dict[str, list[tuple[int, int]]] = {}
    for s in ranked:
        n = file_lines.get(s.chunk.path, 0)
        if s.chunk.start <= n:
            spans.setdefault(s.chunk.path, []).append((max(1, s.chunk.start), min(s.chunk.end, n)))
    scores = file_scores(ranked, file_lines)
    if not scores:
        return []
    order = sorted(scores, key=lambda p: -scores[p])  # stable: ties keep rank order
    top = scores[order[0]]
    out: list[ScoredRegion] = []
    used = 0
    confident = [p for i, p in enumerate(order) if i == 0 or scores[p] >= top - cfg.confident_margin]
    for path in confident:
        if len(out) >= k or used >= budget:
            break
        left = budget - used
        cap = max(1, min(cfg.whole_file_lines, left - cfg.reserve_lines if left > cfg.reserve_lines else left))
        n = file_lines[path]
        start, end = (1, n) if n <= cap else _dense_span(spans[path], cap)
        out.append(ScoredRegion(path, start, end, scores[path]))
        used += end - start + 1
    n_confident = len(out)
    doubtful: dict[str, ScoredRegion] = {}
    for path in order[len(confident) :]:
        start, end = spans[path][0]
        doubtful[path] = ScoredRegion(path, start, min(end, start + cfg.doubtful_lines - 1), scores[path])
    for r in extra:
        if r.path in confident or not 1 <= r.start <= r.end <= file_lines.get(r.path, 0):
            continue
        if r.path not in doubtful or r.score > doubtful[r.path].score:
            doubtful[r.path] = r
    rest = sorted(doubtful.values(), key=lambda r: -r.score)  # stable: a doubtful file before a test of equal score
    taken = {r.path for r in out}
    for region in rest:
        if len(out) >= k or used >= budget:
            break
        if region.score < top - cfg.keep_margin or region.path in taken:
            continue
        end = min(region.end, region.start + (budget - used) - 1)
        out.append(region._replace(end=end))
        taken.add(region.path)
        used += end - region.start + 1
    if cfg.fill:
        for i in range(n_confident):
            if used >= budget:
                break
            r = out[i]
            room = min(budget - used, cfg.whole_file_lines - (r.end - r.start + 1))
            down = max(0, min(room, file_lines[r.path] - r.end))
            up = max(0, min(room - down, r.start - 1))
            out[i] = r._replace(start=r.start - up, end=r.end + down)
            used += down + up
    return out
