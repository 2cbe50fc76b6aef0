"""The shared line-budget packer: any ranked list of chunks → at most K regions with at most B lines in total.

Every retriever's ranking goes through :func:`pack`, so retrievers are compared on ranking alone and every
prediction obeys the same budget. The SWE-Explore metrics (``docs/metrics.md``) reward three things that pull
against each other:

* **breadth** — HitFile counts distinct core files, so K regions in K different files help;
* **depth** — recall and Recall@B count core lines, so more lines of a strong file help;
* **efficiency** — precision and context efficiency count wasted lines, and nDCG@B stops at the first region
  that overflows B.

The packer is greedy and deterministic. It walks the ranking best first and, for each chunk:

1. clips it to its file's bounds (when line counts are known) and to ``max_region_lines``;
2. if it overlaps, touches, or lies within ``merge_gap`` lines of a region already chosen in the same file,
   extends that region to cover it (depth: the lines in between are added too), as far as the remaining
   budget allows and never past ``max_region_lines``;
3. otherwise, if fewer than ``k`` regions exist and the file has fewer than ``max_regions_per_file`` regions,
   opens a new region (breadth), cut to the remaining budget; a chunk is cut only if at least
   ``min_region_lines`` of it fit;
4. stops when the budget is spent or ``max_candidates`` chunks have been read;
5. with ``fill``, spends what is left of the budget on context: regions grow, best-ranked first, downwards and
   then upwards within their file, each up to ``max_region_lines`` (needs ``file_lines``).

Regions are then coalesced (same file, overlapping or adjacent → one region), so no line is ever emitted
twice, and returned in the order of the best-ranked chunk each contains. Cutting keeps the head of a chunk
(its signature and docstring). Depth versus breadth is set by ``max_region_lines`` (a cap on one region),
``max_regions_per_file`` and ``merge_gap``. The defaults (K=5, B=500, at most 200 lines per region and 2 regions per
file, merge within 20 lines, fill) are a middle setting chosen on the dev set for BM25 with the ranking priors;
the learned explorer packs with :data:`LEARNED_PACK` (250-line regions, merge within 10 lines).
``docs/benchmarks.md`` shows the trade-off (one region per file raises HitFile and lowers recall and context
efficiency).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from swe_explore.chunking.lines import read_lines
from swe_explore.chunking.types import Chunk, Region, ScoredChunk, ScoredRegion


@dataclass(frozen=True)
class PackConfig:
    """Parameters of :func:`pack`.

    :param k: maximum number of regions (top-K, ``>= 1``). SWE-Explore's default K is 5.
    :param budget: maximum total lines over all regions (line budget B, ``>= 1``).
    :param max_region_lines: cap on how far one region grows (opening, extending, filling); ``None`` means
        ``budget``. Two regions of one file that meet (by extension, fill or ``merge_gap``) are joined into one
        region, which may be longer: the cap bounds growth, not the contiguous lines two regions cover.
    :param max_regions_per_file: cap on the regions opened in one file; ``None`` means ``k``.
        :meth:`plain` gives a config with no caps, no merging gap and no fill.
    :param merge_gap: a chunk within this many lines of a chosen region of its file is merged into it
        (``0``: only overlapping or adjacent chunks merge).
    :param min_region_lines: a chunk cut to fit the remaining budget must keep at least this many lines.
    :param max_candidates: how many ranked chunks are read at most.
    :param fill: spend the unused budget growing regions with surrounding lines (step 5).
    :raises ValueError: if a parameter is out of range.
    """

    k: int = 5
    budget: int = 500
    max_region_lines: int | None = 200
    max_regions_per_file: int | None = 2
    merge_gap: int = 20
    min_region_lines: int = 1
    max_candidates: int = 1000
    fill: bool = True

    def __post_init__(self) -> None:
        checks = {
            "k": self.k >= 1,
            "budget": self.budget >= 1,
            "max_region_lines": self.max_region_lines is None or self.max_region_lines >= 1,
            "max_regions_per_file": self.max_regions_per_file is None or self.max_regions_per_file >= 1,
            "merge_gap": self.merge_gap >= 0,
            "min_region_lines": self.min_region_lines >= 1,
            "max_candidates": self.max_candidates >= 1,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            values = ", ".join(f"{name}={getattr(self, name)!r}" for name in bad)
            raise ValueError(f"invalid PackConfig: {values} (k, budget, caps >= 1; merge_gap >= 0)")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable parameters, written into result rows as part of ``explorer_config``."""
        return asdict(self)

    @classmethod
    def plain(cls, k: int = 5, budget: int = 500, **options: Any) -> PackConfig:
        """Only K and B: no region or per-file cap, merge only touching chunks, no fill.

        :param k: maximum number of regions.
        :param budget: line budget.
        :param options: any other field to set.
        :return: the config.
        """
        base: dict[str, Any] = {"max_region_lines": None, "max_regions_per_file": None, "merge_gap": 0, "fill": False}
        return cls(k=k, budget=budget, **(base | options))


#: The learned ranker's packer defaults: regions up to 250 lines (not 200) and chunks merged within 10 lines
#: (not 20) of a region. The learned ranking puts the right chunks of a file next to each other more often than
#: BM25 with priors does, so it gains from longer regions and loses from the lines a wide merge gap pulls in.
#: Chosen on dev and confirmed on the 76-instance held-out set and the mined benches (``docs/ranker.md``,
#: "Packer"; ``docs/benchmarks.md``). Every other explorer keeps :class:`PackConfig`'s defaults.
LEARNED_PACK = PackConfig(max_region_lines=250, merge_gap=10)


@dataclass
class _Group:
    """A region under construction: its file and lines, the rank of its best chunk and the chunks it covers."""

    path: str
    start: int
    end: int
    rank: int
    chunks: list[Chunk]

    @property
    def n_lines(self) -> int:
        return self.end - self.start + 1


def pack(
    ranked: Sequence[Chunk],
    config: PackConfig | None = None,
    file_lines: Mapping[str, int] | None = None,
) -> list[Region]:
    """Turn a ranking of chunks into at most ``k`` non-overlapping regions with at most ``budget`` lines.

    The algorithm and its depth/breadth trade-off are described in the module docstring.

    :param ranked: chunks, best first (any retriever's ranking; duplicates and overlaps allowed).
    :param config: packing parameters; defaults to ``PackConfig()`` (K=5, B=500).
    :param file_lines: line count per path; when given, regions are clipped to ``1..file_lines[path]`` and
        chunks of files with no lines are dropped.
    :return: the regions, in the order of the best-ranked chunk each contains. Their line counts sum to at
        most ``budget``, there are at most ``k`` of them, and no two share a line.
    """
    return [Region(r.path, r.start, r.end) for r in _pack_groups(ranked, config or PackConfig(), file_lines)]


def pack_scored(
    ranked: Sequence[ScoredChunk],
    config: PackConfig | None = None,
    file_lines: Mapping[str, int] | None = None,
) -> list[ScoredRegion]:
    """:func:`pack` over a scored ranking: the same regions, each with the score of its best-ranked chunk.

    :param ranked: scored chunks, best first (an explorer's ``rank()``).
    :param config: packing parameters; defaults to ``PackConfig()``.
    :param file_lines: line count per path, as for :func:`pack`.
    :return: the regions of :func:`pack` in its order, with scores and no text.
    """
    groups = _pack_groups([s.chunk for s in ranked], config or PackConfig(), file_lines)
    return [ScoredRegion(r.path, r.start, r.end, float(ranked[r.rank].score)) for r in groups]


def add_text(snapshot_dir: str | Path, regions: list[ScoredRegion]) -> list[ScoredRegion]:
    """The regions with their text: the snapshot's lines ``start..end`` (:mod:`chunking.lines`) joined by ``"\\n"``.

    :param snapshot_dir: the snapshot the regions are of.
    :param regions: scored regions.
    :return: the same regions with ``text`` set (each file is read once).
    :raises OSError: if a region's file cannot be read.
    """
    files: dict[str, list[str]] = {}
    out = []
    for region in regions:
        if region.path not in files:
            files[region.path] = read_lines(Path(snapshot_dir) / region.path)
        lines = files[region.path]
        out.append(region._replace(text="\n".join(lines[region.start - 1 : region.end])))
    return out


def _pack_groups(ranked: Sequence[Chunk], cfg: PackConfig, file_lines: Mapping[str, int] | None) -> list[_Group]:
    """The packed regions of :func:`pack`, each with the rank of its best chunk."""
    region_cap = min(cfg.max_region_lines or cfg.budget, cfg.budget)
    per_file_cap = cfg.max_regions_per_file or cfg.k
    regions: list[_Group] = []
    used = 0
    for rank, chunk in enumerate(ranked[: cfg.max_candidates]):
        if used >= cfg.budget:
            break
        start, end = chunk.start, chunk.end
        if file_lines is not None:
            end = min(end, file_lines.get(chunk.path, 0))
            if end < start:
                continue
        same_file = [r for r in regions if r.path == chunk.path]
        near = [r for r in same_file if start <= r.end + 1 + cfg.merge_gap and r.start <= end + 1 + cfg.merge_gap]
        if near:
            used = _extend(near[0], start, end, chunk, used, cfg.budget, region_cap)
            continue
        if len(regions) >= cfg.k or len(same_file) >= per_file_cap:
            continue
        size = min(end - start + 1, region_cap, cfg.budget - used)
        if size < min(cfg.min_region_lines, end - start + 1):
            continue
        regions.append(_Group(chunk.path, start, start + size - 1, rank, [chunk]))
        used += size
    regions = _merge_close(_coalesce(regions), cfg.merge_gap, cfg.budget)
    if cfg.fill and file_lines is not None:
        _fill(regions, cfg.budget - sum(r.n_lines for r in regions), region_cap, file_lines)
        regions = _merge_close(_coalesce(regions), cfg.merge_gap, cfg.budget)
    return regions


def files_first(ranked: Sequence[Chunk], n_files: int, window: int | None = None) -> list[Chunk]:
    """Two-stage order: choose files first, then regions within them.

    The best-ranked chunk of each of the first ``n_files`` distinct files of the ranking (only files whose best
    chunk is among the first ``window`` chunks, when given: the evidence must support the file) moves to the
    front, in the order those chunks rank; every other chunk follows in its rank order. Packed with K >=
    ``n_files``, the first regions then cover that many files before a second region opens in any of them.

    :param ranked: chunks, best first.
    :param n_files: files whose best chunk goes first (``>= 0``).
    :param window: only files whose best chunk ranks within the first ``window`` chunks; ``None``: no limit.
    :return: the reordered chunks (the same chunks, each once).
    """
    seen: set[str] = set()
    head: list[int] = []
    limit = len(ranked) if window is None else min(window, len(ranked))
    for i, chunk in enumerate(ranked[:limit]):
        if len(head) >= n_files:
            break
        if chunk.path not in seen:
            seen.add(chunk.path)
            head.append(i)
    chosen = set(head)
    return [ranked[i] for i in head] + [c for i, c in enumerate(ranked) if i not in chosen]


def gate_files(ranked: Sequence[Chunk], scores: Sequence[float], margin: float, min_files: int = 1) -> list[Chunk]:
    """Keep the chunks of the files the evidence supports: files whose best chunk scores at least the best
    file's score minus ``margin``, and in any case the first ``min_files`` files of the ranking.

    With a learned ranker's scores (log-odds-like), a margin bounds how much weaker than the best file a file
    may be and still get a region: K regions then go to strong files (two regions each) rather than to weak
    files, which trades HitFile for precision and context efficiency (``docs/benchmarks.md``).

    :param ranked: chunks, best first.
    :param scores: their scores, same order (non-increasing).
    :param margin: score margin (``>= 0``).
    :param min_files: files kept whatever their score.
    :return: the chunks of the kept files, in rank order.
    """
    best: dict[str, float] = {}
    for chunk, score in zip(ranked, scores):
        best.setdefault(chunk.path, float(score))
    if not best:
        return []
    top = max(best.values())
    keep = {path for path, score in best.items() if score >= top - margin} | set(list(best)[:min_files])
    return [c for c in ranked if c.path in keep]


def _fill(regions: list[_Group], left: int, cap: int, file_lines: Mapping[str, int]) -> None:
    """Grow regions in rank order into the lines around them (never into another region of the file)."""
    for region in regions:
        if left <= 0:
            return
        others = [r for r in regions if r.path == region.path and r is not region]
        floor = max([r.end for r in others if r.end < region.start], default=0) + 1
        ceiling = min([r.start for r in others if r.start > region.end], default=file_lines.get(region.path, 0) + 1) - 1
        grow = min(left, cap - region.n_lines, max(0, ceiling - region.end))
        if grow > 0:
            region.end += grow
            left -= grow
        grow = min(left, cap - region.n_lines, max(0, region.start - floor))
        if grow > 0:
            region.start -= grow
            left -= grow


def _extend(region: _Group, start: int, end: int, chunk: Chunk, used: int, budget: int, cap: int) -> int:
    """Grow ``region`` towards ``[start, end]`` within the budget and the region cap; return the new total."""
    allowance = min(budget - used, cap - region.n_lines)
    if allowance <= 0:
        return used
    if end > region.end:  # grow downwards first: the chunk's head is nearer the region's tail
        grow = min(end - region.end, allowance)
        region.end += grow
        used += grow
        allowance -= grow
    if start < region.start and allowance > 0:
        grow = min(region.start - start, allowance)
        region.start -= grow
        used += grow
    region.chunks.append(chunk)
    return used


def _merge_close(regions: list[_Group], gap: int, budget: int) -> list[_Group]:
    """Merge regions of one file at most ``gap`` lines apart (blank lines or not) into one, within the budget.

    The lines in between join the merged region. When the budget has no room for them, as many lines are cut
    from the tail of the lowest-ranked region (the lower region of the pair included, not the upper one, whose
    tail is the gap's edge) as the merge adds; a pair whose merge cannot be paid for that way (no region long
    enough to give the lines up) stays apart, and so do the pairs after it. The merged region
    keeps the better rank and may exceed ``max_region_lines``, which bounds how far a region grows, not two
    regions that meet. Regions come in and go out in rank order.

    :param regions: coalesced regions, in rank order (no overlap, no adjacency).
    :param gap: the packer's ``merge_gap`` (lines).
    :param budget: the line budget.
    :return: the regions, fewer when some merged.
    """
    regions = list(regions)
    while True:
        pair = _close_pair(regions, gap)
        if pair is None:
            return regions
        first, second = pair
        between = second.start - first.end - 1
        over = sum(r.n_lines for r in regions) + between - budget
        if over > 0:
            donors = [r for r in regions if r is not first and r.n_lines > over]  # cutting `first` widens the gap
            if not donors:
                return regions
            max(donors, key=lambda r: r.rank).end -= over
        keep, drop = (first, second) if first.rank < second.rank else (second, first)
        keep.start, keep.end = first.start, second.end
        keep.chunks.extend(drop.chunks)
        regions.remove(drop)


def _close_pair(regions: Sequence[_Group], gap: int) -> tuple[_Group, _Group] | None:
    """The first pair (in rank order) of regions of one file separated by ``1..gap`` lines, upper one first."""
    for i, a in enumerate(regions):
        for b in regions[i + 1 :]:
            if a.path != b.path:
                continue
            upper, lower = (a, b) if a.start < b.start else (b, a)
            if 0 < lower.start - upper.end - 1 <= gap:
                return upper, lower
    return None


def _coalesce(regions: list[_Group]) -> list[_Group]:
    """Merge overlapping or adjacent regions of one file (extensions can make two regions touch)."""
    merged: list[_Group] = []
    for region in sorted(regions, key=lambda r: r.rank):
        for other in merged:
            if other.path == region.path and region.start <= other.end + 1 and other.start <= region.end + 1:
                other.start, other.end = min(other.start, region.start), max(other.end, region.end)
                other.chunks.extend(region.chunks)
                break
        else:
            merged.append(region)
    return merged
