"""The repair bridge: what a fixed coding agent sees when it is given only an explorer's regions.

SWE-Explore validates its metrics by handing a patcher only the explored regions: every line outside their
union is hidden, and the patch is judged by the instance's original tests. :func:`write_contexts` writes, per
instance of a result file, under ``<out>/<instance_id>/``:

- ``snapshot/``: a restricted copy of the snapshot. Files without a visible line are left out. In a file that
  has one, with ``mode="blank"`` (the default) every hidden line is emptied and kept, so line numbers stay
  those of the original; with ``mode="remove"`` hidden lines are dropped and ``line_map.json`` maps, per file,
  each kept line to its original number (``{"path": {"1": 10, "2": 11}}``).
- ``context.md``: the visible lines as one Markdown document. Overlapping and adjacent regions of a file are
  merged, so every visible line is shown exactly once; a merged region takes the place of its first region in
  the result row's order. Each region is a heading ``## path:start-end`` and a fenced block of numbered lines.
- ``context.json``: what was shown (:class:`InstanceContext`); ``<out>/summary.json`` holds one per instance.

Lines are those of :mod:`chunking.lines`, cut on the raw bytes (the file's own terminators and encoding are
kept; decoding never changes which bytes form line ``i``). Predicted regions are resolved as the metrics
resolve them against the predicted file (:func:`evaluation.metrics.resolve_interval`: ``end == -1`` is the end
of the file, a negative start counts back from it) and clipped to the file's length. A region past the end of
its file, a path that names no file of the snapshot (in the ground truth's form:
:func:`evaluation.paths.in_snapshot`) or an empty or unresolvable range shows nothing and is reported in
``problems``; none of them stops the run.

Each instance directory is built under a temporary name and renamed into place, so it is complete or absent;
running again skips instances whose ``context.json`` records the same regions and mode (resume).
"""

from __future__ import annotations

import json
import secrets
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from swe_explore.chunking.atomic import replace_directory, write_text_atomic
from swe_explore.chunking.lines import PYTHON_SUFFIXES, count_lines, decode, split_text
from swe_explore.chunking.types import Region
from swe_explore.evaluation.bench import BenchRecord, find_snapshot
from swe_explore.evaluation.metrics import resolve_interval
from swe_explore.evaluation.paths import in_snapshot
from swe_explore.evaluation.results import OUTCOME_SUCCESS, rows_by_id

MODES = ("blank", "remove")
"""How hidden lines of a visible file are hidden: emptied in place, or removed (with a line map)."""
CONTEXT_FILE = "context.json"
"""Per instance: what was shown; written last, so its presence marks a complete instance directory."""
SUMMARY_FILE = "summary.json"
"""Under the output directory: every instance's :data:`CONTEXT_FILE` content, in bench order."""
LINE_MAP_FILE = "line_map.json"
"""Per instance, with ``mode="remove"``: per file, kept line (new number) -> original line."""

_BOM = b"\xef\xbb\xbf"


@dataclass
class InstanceContext:
    """What one instance's context shows (the content of its ``context.json``).

    :param instance_id: the instance.
    :param mode: ``blank`` or ``remove``.
    :param regions: the result row's regions, as given (JSON form).
    :param shown: the merged regions the document shows (JSON form), in document order.
    :param files: files with at least one visible line.
    :param visible_lines: visible lines in total (the union of the regions, clipped).
    :param context_lines: lines of ``context.md`` (its newline count).
    :param context_chars: characters of ``context.md``.
    :param problems: one entry per region that shows nothing or less than asked: ``{"region", "problem"}``
        with ``problem`` one of ``no_such_file``, ``outside_snapshot``, ``past_end``, ``clipped``, ``empty``,
        ``unresolvable``.
    """

    instance_id: str
    mode: str
    regions: list[dict[str, Any]]
    shown: list[dict[str, Any]] = field(default_factory=list)
    files: int = 0
    visible_lines: int = 0
    context_lines: int = 0
    context_chars: int = 0
    problems: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ContextRun:
    """What :func:`write_contexts` did.

    :param written: instances written in this run.
    :param skipped: instances already complete with the same regions and mode (resumed).
    :param no_row: bench instances without a result row (nothing written).
    :param no_snapshot: instances with a row but no snapshot (nothing written).
    :param failed: instances whose row's outcome is not ``SUCCESS`` (written with no visible line).
    :param contexts: every instance's context, in bench order.
    """

    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    no_row: list[str] = field(default_factory=list)
    no_snapshot: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    contexts: list[InstanceContext] = field(default_factory=list)


def resolve_regions(snapshot: Path, regions: Sequence[Region]) -> tuple[list[Region], list[dict[str, Any]]]:
    """Resolve predicted regions against the snapshot (module docstring): the lines each one shows.

    :param snapshot: the snapshot directory.
    :param regions: the predicted regions, in result order.
    :return: ``(resolved, problems)``: the regions that show a line, resolved and clipped to their file, in
        result order; one problem per region that shows nothing or less than asked (see :class:`InstanceContext`).
    """
    resolved: list[Region] = []
    problems: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    root = snapshot.resolve()
    for region in regions:
        path = region.path
        problem = None
        if not in_snapshot(snapshot, path):
            problem = "no_such_file"
        elif not (snapshot / path).resolve().is_relative_to(root):
            problem = "outside_snapshot"
        if problem is not None:
            problems.append({"region": region.to_json(), "problem": problem})
            continue
        if path not in counts:
            counts[path] = count_lines((snapshot / path).read_bytes())
        n_lines = counts[path]
        interval = resolve_interval(path, region.start, region.end, {path: n_lines})
        if interval is None:
            problems.append({"region": region.to_json(), "problem": "unresolvable"})
            continue
        start, end = interval
        if start > end:
            problems.append({"region": region.to_json(), "problem": "empty"})
            continue
        if start > n_lines:
            problems.append({"region": region.to_json(), "problem": "past_end"})
            continue
        if end > n_lines:
            problems.append({"region": region.to_json(), "problem": "clipped"})
            end = n_lines
        resolved.append(Region(path, start, end))
    return resolved, problems


def merge_regions(resolved: Iterable[Region]) -> dict[str, list[tuple[int, int]]]:
    """Per file, the union of resolved regions as sorted, disjoint spans (overlapping and adjacent ones joined).

    :param resolved: resolved regions (from :func:`resolve_regions`).
    :return: path -> ``[(start, end), ...]``, paths in order of their first region.
    """
    by_path: dict[str, list[tuple[int, int]]] = {}
    for path, start, end in resolved:
        by_path.setdefault(path, []).append((start, end))
    merged: dict[str, list[tuple[int, int]]] = {}
    for path, spans in by_path.items():
        out: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            if out and start <= out[-1][1] + 1:
                out[-1] = (out[-1][0], max(out[-1][1], end))
            else:
                out.append((start, end))
        merged[path] = out
    return merged


def document_order(resolved: Sequence[Region], spans: Mapping[str, list[tuple[int, int]]]) -> list[Region]:
    """The merged spans as regions in document order: each where its first member comes in ``resolved``.

    :param resolved: the resolved regions, in result order (from :func:`resolve_regions`).
    :param spans: per path, the merged spans (from :func:`merge_regions` of ``resolved``).
    :return: each merged span once.
    """
    order: dict[Region, None] = {}
    for path, first, _ in resolved:
        start, end = next((s, e) for s, e in spans[path] if s <= first <= e)
        order.setdefault(Region(path, start, end), None)
    return list(order)


def _raw_lines(data: bytes) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """A file's bytes as ``(bom, [(content, terminator), ...])``, lines cut as :func:`chunking.lines.count_lines`
    counts them (a last line without terminator has ``b""``)."""
    bom = _BOM if data.startswith(_BOM) else b""
    data = data[len(bom) :]
    if not data:
        return bom, []
    sep = b"\n" if (b"\n" in data or b"\r" not in data) else b"\r"
    parts = data.split(sep)
    last_terminated = parts[-1] == b""
    if last_terminated:
        parts.pop()
    out = []
    for i, part in enumerate(parts):
        terminator = sep if (i < len(parts) - 1 or last_terminated) else b""
        if sep == b"\n" and part.endswith(b"\r"):
            out.append((part[:-1], b"\r" + terminator))
        else:
            out.append((part, terminator))
    return bom, out


def restricted_file(data: bytes, spans: Sequence[tuple[int, int]], mode: str) -> tuple[bytes, dict[str, int]]:
    """A file with only the lines of ``spans`` visible.

    :param data: the file's raw bytes.
    :param spans: disjoint, sorted visible spans (1-based, inclusive, within the file).
    :param mode: ``blank`` (hidden lines emptied, each keeping its terminator, so the file has as many lines
        as before; a hidden unterminated last line becomes an empty terminated one) or ``remove`` (hidden lines
        dropped; a kept unterminated last line stays unterminated).
    :return: the new bytes (a UTF-8 BOM is kept) and, for ``remove``, ``{"new line": original line}``.
    :raises ValueError: for an unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; valid: {', '.join(MODES)}")
    bom, lines = _raw_lines(data)
    visible: set[int] = set()
    for start, end in spans:
        visible.update(range(start, end + 1))
    sep = b"\n" if (b"\n" in data or b"\r" not in data) else b"\r"
    out = [bom]
    line_map: dict[str, int] = {}
    for number, (content, terminator) in enumerate(lines, start=1):
        if number in visible:
            out.append(content + terminator)
            line_map[str(len(line_map) + 1)] = number
        elif mode == "blank":
            out.append(terminator or sep)
    return b"".join(out), line_map if mode == "remove" else {}


def fence_for(text: str) -> str:
    """A Markdown code fence longer than any run of backticks in ``text`` (at least three).

    :param text: the fenced text.
    :return: the fence, e.g. ````` ``` `````.
    """
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def context_document(instance_id: str, snapshot: Path, shown: Sequence[Region]) -> str:
    """The context document: per region a heading ``## path:start-end`` and its numbered lines, fenced.

    Lines are decoded as :mod:`chunking.lines` decodes them; each reads ``<number> | <text>``, numbers right-aligned
    to the width of the region's last one.

    :param instance_id: named in the title.
    :param snapshot: the snapshot directory.
    :param shown: the resolved, merged regions in document order (from :func:`document_order`).
    :return: the Markdown text, ending in a newline.
    """
    total = sum(r.n_lines for r in shown)
    files = len({r.path for r in shown})
    parts = [f"# Context: {instance_id}\n\n{len(shown)} region(s), {total} line(s), {files} file(s).\n"]
    cache: dict[str, list[str]] = {}
    for region in shown:
        if region.path not in cache:
            path = snapshot / region.path
            cache[region.path] = split_text(decode(path.read_bytes(), path.suffix.lower() in PYTHON_SUFFIXES))
        width = len(str(region.end))
        body = "\n".join(f"{n:>{width}} | {cache[region.path][n - 1]}" for n in range(region.start, region.end + 1))
        fence = fence_for(body)
        parts.append(f"\n## {region.path}:{region.start}-{region.end}\n\n{fence}\n{body}\n{fence}\n")
    return "".join(parts)


def _instance_dir_done(target: Path, regions: list[dict[str, Any]], mode: str) -> InstanceContext | None:
    """The instance's recorded context when its directory is complete for these regions and mode."""
    marker = target / CONTEXT_FILE
    if not marker.is_file():
        return None
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        done = InstanceContext(**data)
    except (OSError, ValueError, TypeError):
        return None
    return done if done.regions == regions and done.mode == mode else None


def write_instance(
    target: Path, record_id: str, snapshot: Path, regions: Sequence[Region], mode: str
) -> InstanceContext:
    """Write one instance's restricted snapshot, context document and ``context.json`` into ``target``
    atomically (built in a sibling temporary directory, then renamed; an existing ``target`` is replaced).

    :param target: ``<out>/<instance_id>``.
    :param record_id: the instance id.
    :param snapshot: the instance's snapshot.
    :param regions: the predicted regions, in result order.
    :param mode: ``blank`` or ``remove``.
    :return: what was written.
    :raises ValueError: for an unknown mode.
    :raises OSError: if a file cannot be read or written.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; valid: {', '.join(MODES)}")
    resolved, problems = resolve_regions(snapshot, regions)
    spans = merge_regions(resolved)
    shown = document_order(resolved, spans)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.{secrets.token_hex(8)}.tmp"
    tmp.mkdir()
    try:
        line_maps: dict[str, dict[str, int]] = {}
        for path, path_spans in spans.items():
            data, line_map = restricted_file((snapshot / path).read_bytes(), path_spans, mode)
            out = tmp / "snapshot" / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            if mode == "remove":
                line_maps[path] = line_map
        (tmp / "snapshot").mkdir(exist_ok=True)
        if mode == "remove":
            (tmp / LINE_MAP_FILE).write_text(json.dumps(line_maps, indent=1) + "\n", encoding="utf-8")
        document = context_document(record_id, snapshot, shown)
        (tmp / "context.md").write_text(document, encoding="utf-8", newline="")
        context = InstanceContext(
            instance_id=record_id,
            mode=mode,
            regions=[r.to_json() for r in regions],
            shown=[r.to_json() for r in shown],
            files=len(spans),
            visible_lines=sum(e - s + 1 for path_spans in spans.values() for s, e in path_spans),
            context_lines=document.count("\n"),
            context_chars=len(document),
            problems=problems,
        )
        (tmp / CONTEXT_FILE).write_text(json.dumps(asdict(context), indent=1) + "\n", encoding="utf-8")
        replace_directory(tmp, target, target.parent / f".{target.name}.old-{secrets.token_hex(8)}.tmp")
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return context


def check_instance_id(instance_id: str) -> None:
    """Refuse an instance id that cannot name a directory under the output directory.

    :param instance_id: the id.
    :raises ValueError: if it is empty, ``.``/``..``, starts with ``.``, or holds a path separator or NUL.
    """
    if not instance_id or instance_id.startswith(".") or any(c in instance_id for c in "/\\\0"):
        raise ValueError(f"instance id {instance_id!r} cannot name an output directory")


def write_contexts(
    rows: Sequence[Mapping[str, Any]],
    records: Sequence[BenchRecord],
    repos: Path,
    out: Path,
    *,
    mode: str = "blank",
    k: int | None = None,
    shared_snapshots: bool = False,
) -> ContextRun:
    """Write every instance's context (module docstring) and ``<out>/summary.json``; resumable.

    :param rows: result rows (:func:`evaluation.results.read_rows`), at most one per instance of ``records``.
    :param records: the bench records, in the order written to the summary.
    :param repos: the snapshots directory (:func:`evaluation.bench.find_snapshot`).
    :param out: the output directory.
    :param mode: ``blank`` or ``remove``.
    :param k: use only the first k regions of each row (``None``: all).
    :param shared_snapshots: accept shared snapshot folders.
    :return: what was written, skipped and left out.
    :raises ValueError: for an unknown mode, ``k < 1``, two rows of one instance, a row of an instance not in
        ``records``, a bad instance id or a malformed region (the message names the instance).
    :raises OSError: if a file cannot be read or written.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; valid: {', '.join(MODES)}")
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    by_id = rows_by_id(rows)
    unknown = sorted(set(by_id) - {r.instance_id for r in records})
    if unknown:
        raise ValueError(f"{len(unknown)} result row(s) for instances not in the bench, e.g. {unknown[:3]}")
    run = ContextRun()
    for record in records:
        iid = record.instance_id
        row = by_id.get(iid)
        if row is None:
            run.no_row.append(iid)
            continue
        check_instance_id(iid)
        snapshot = find_snapshot(record, repos, shared_snapshots)
        if snapshot is None:
            run.no_snapshot.append(iid)
            continue
        try:
            regions = [Region.from_json(r) for r in row.get("regions") or []]
        except ValueError as exc:
            raise ValueError(f"instance {iid!r}: {exc}") from None
        if row.get("outcome", OUTCOME_SUCCESS) != OUTCOME_SUCCESS:
            run.failed.append(iid)
            regions = []
        if k is not None:
            regions = regions[:k]
        target = out / iid
        done = _instance_dir_done(target, [r.to_json() for r in regions], mode)
        if done is not None:
            run.skipped.append(iid)
            run.contexts.append(done)
            continue
        run.contexts.append(write_instance(target, iid, snapshot, regions, mode))
        run.written.append(iid)
    summary = {"mode": mode, "instances": [asdict(c) for c in run.contexts]}
    write_text_atomic(out / SUMMARY_FILE, json.dumps(summary, indent=1) + "\n")
    return run


__all__ = [
    "CONTEXT_FILE",
    "LINE_MAP_FILE",
    "MODES",
    "SUMMARY_FILE",
    "ContextRun",
    "InstanceContext",
    "check_instance_id",
    "context_document",
    "document_order",
    "fence_for",
    "merge_regions",
    "resolve_regions",
    "restricted_file",
    "write_contexts",
    "write_instance",
]
