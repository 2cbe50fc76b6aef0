"""Scoring several result files against one bench: labels, coverage, the tables per group, and the comparison.

:func:`evaluate_files` is what ``swe-explore evaluate`` prints and writes (``docs/metrics.md``): each file's rows
rescored by :func:`~swe_explore.evaluation.results.evaluate_rows`, one label per file (:func:`file_labels`),
tables overall, per repository and per group of records (dataset, language), and with ``compare`` the bootstrap
CIs and paired permutation tests of :mod:`swe_explore.evaluation.stats` over the instances every file holds.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_explore.chunking.atomic import write_text_atomic
from swe_explore.evaluation.bench import BenchRecord, SnapshotCommitError
from swe_explore.evaluation.paper_rows import PaperRow, with_paper_rows
from swe_explore.evaluation.results import (
    RESOLVED_METRICS_KEY,
    Coverage,
    evaluate_rows,
    format_table,
    instance_metrics,
    mean_metrics,
    read_rows,
    summarize,
)
from swe_explore.evaluation.stats import Comparison, compare_rows, format_comparison

Grouping = tuple[str, Callable[[BenchRecord], str]]
"""A field name (``dataset``, ``language``) and the function giving a record's value of it."""

RESOLVED_TITLE = "predicted files resolved (end -1 and negative starts scored with the file's length)"
"""The heading of the ``score_predicted_lines`` table (docs/metrics.md, "The end: -1 quirk")."""


class NothingScoredError(ValueError):
    """No bench instance could be scored (none has a snapshot): a table of zeros would look like a result.

    :param n_records: the bench instances.
    :param repos: the snapshots directory.
    """

    def __init__(self, n_records: int, repos: Path) -> None:
        super().__init__(
            f"nothing scored: none of the {n_records} bench instances has a snapshot under {repos} "
            "(looked for <repos>/<instance_id> or the record's repo_dir; see --shared-snapshots)"
        )


def record_dataset(record: BenchRecord) -> str:
    """The record's ``dataset`` field (``verified``, ``multilingual``, ``pro``, ``mined``...), else ``"-"``."""
    return str(record.raw.get("dataset") or "-")


def file_labels(paths: Sequence[Path], names: Sequence[str]) -> list[str]:
    """One distinct label per result file: its name, told apart from the files of the same name by its path.

    The first file of a name keeps the bare name; each later one gets ``"name (TAIL)"``, where ``TAIL`` is the
    shortest trailing part of its path (``learned.jsonl``, then ``b/learned.jsonl``, ...) that no other later
    file of that name shares. A label that still clashes (the same path given twice, or a name that equals
    another file's label) gets a numeric suffix ``" #2"``, ``" #3"``... in file order, so the labels are
    distinct for any number of files.

    :param paths: the result files, in command-line order.
    :param names: each file's name (its rows' ``explorer``, else its file stem), same order.
    :return: the labels, same order.
    """
    labels: list[str] = []
    for i, (path, name) in enumerate(zip(paths, names, strict=True)):
        earlier = [j for j in range(i) if names[j] == name]
        if not earlier:
            labels.append(name)
            continue
        others = [Path(paths[j]) for j in range(len(paths)) if j != i and names[j] == name and j != earlier[0]]
        parts = Path(path).parts
        tail = Path(path).name
        for n in range(1, len(parts) + 1):
            candidate = parts[-n:]
            if all(tuple(other.parts[-n:]) != candidate for other in others):
                tail = "/".join(candidate)
                break
        labels.append(f"{name} ({tail})")
    taken: set[str] = set()
    unique_labels = []
    for label in labels:
        unique, n = label, 1
        while unique in taken:
            n += 1
            unique = f"{label} #{n}"
        taken.add(unique)
        unique_labels.append(unique)
    return unique_labels


@dataclass
class FileScore:
    """One result file scored against the bench.

    :param path: the file.
    :param scored: its rescored rows, one per evaluated instance (``NOT_ATTEMPTED`` rows for instances it lacks).
    :param coverage: its gaps (:class:`~swe_explore.evaluation.results.Coverage`).
    :param instance_ids: the instances it has a row for.
    :param summary: what ``--json`` writes for it (``file``, the :func:`summarize` fields, ``coverage``,
        ``per_instance``, and ``per_<group>``/``comparison`` when computed).
    """

    path: Path
    scored: list[dict[str, Any]]
    coverage: Coverage
    instance_ids: set[str]
    summary: dict[str, Any]


@dataclass
class EvaluationReport:
    """What :func:`evaluate_files` found: one :class:`FileScore` per label, and the text printed after the
    coverage lines (tables, then the comparison).

    :param files: label -> the file's scores, in command-line order.
    :param text: the tables (overall, per repository, per group) and the comparison, as printed.
    :param comparison: the comparison when asked for.
    """

    files: dict[str, FileScore]
    text: str
    comparison: Comparison | None = None

    @property
    def summaries(self) -> dict[str, dict[str, Any]]:
        """Label -> the file's ``--json`` summary."""
        return {label: f.summary for label, f in self.files.items()}

    @property
    def scored_by_label(self) -> dict[str, list[dict[str, Any]]]:
        """Label -> the file's scored rows (for :func:`~swe_explore.evaluation.results.write_instance_csv`)."""
        return {label: f.scored for label, f in self.files.items()}

    def write_json(self, path: Path) -> None:
        """Write the summaries (``--json``): label -> summary, indented by one space; the directory is created.

        :param path: the JSON file, written atomically: a failed write (full disk) leaves no file, or the old one.
        :raises OSError: if it cannot be written (naming it).
        """
        write_text_atomic(path, json.dumps(self.summaries, indent=1) + "\n")

    def has_gaps(self) -> bool:
        """Whether any file has a coverage problem (what ``--strict`` refuses)."""
        return any(f.coverage.problems() for f in self.files.values())


def read_result_files(
    paths: Sequence[Path], known: set[str], bench: Path, warn: Callable[[str], None]
) -> list[list[dict[str, Any]]]:
    """Read each result file and keep its rows of instances of the bench.

    :param paths: the result files.
    :param known: the bench's instance ids (those scored).
    :param bench: the bench path (for messages).
    :param warn: called with a warning line for each file holding rows of other instances.
    :return: each file's kept rows, same order.
    :raises ValueError: a file is missing, unreadable, empty, or holds no row of the bench (the message names it).
    """
    kept = []
    for path in paths:
        try:
            rows = read_rows(path)
        except (FileNotFoundError, IsADirectoryError) as exc:  # a usage error either way (exit 2)
            raise ValueError(str(exc)) from exc
        if not rows:
            raise ValueError(f"{path}: no result rows")
        unknown = sorted({r["instance_id"] for r in rows} - known)
        if unknown:
            warn(
                f"warning: {path}: {len(unknown)} row(s) for instances not scored (not in {bench}, or with "
                f"empty read_core_regions, which are skipped as the reference runner does), e.g. {unknown[:3]}"
            )
            rows = [r for r in rows if r["instance_id"] in known]
            if not rows:
                raise ValueError(f"{path}: none of its rows is for an instance of {bench} (another bench's results?)")
        kept.append(rows)
    return kept


def evaluate_files(
    paths: Sequence[Path],
    records: Sequence[BenchRecord],
    repos: Path,
    *,
    bench: Path,
    metrics: Sequence[str],
    groupings: Sequence[Grouping] = (("dataset", record_dataset),),
    per_repo: bool = False,
    style: str = "markdown",
    compare: dict[str, Any] | None = None,
    score_predicted_lines: bool = False,
    paper_rows: list[PaperRow] | None = None,
    warn: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
    **evaluate_options: Any,
) -> EvaluationReport:
    """Score result files against a bench, as ``swe-explore evaluate`` prints them.

    :param paths: the result files (the first is the baseline of ``compare``).
    :param records: the bench.
    :param repos: the snapshots directory.
    :param bench: the bench path (for messages).
    :param metrics: the metrics of the tables and the comparison.
    :param groupings: a table per value of each grouping, and ``per_<field>`` in each summary.
    :param per_repo: add a table per repository.
    :param style: ``markdown`` or ``plain`` (:func:`~swe_explore.evaluation.results.format_table`).
    :param compare: ``None``, or the keyword arguments of :func:`~swe_explore.evaluation.stats.compare_rows`
        (``n_resamples``, ``seed``, ``ci_method``): compare every file with the first over the instances all
        files have a row for; each summary gets a ``comparison``.
    :param score_predicted_lines: also score with the predicted files' line counts (docs/metrics.md): a second
        overall table headed :data:`RESOLVED_TITLE`, and ``predicted_files_resolved`` in each summary.
    :param paper_rows: the paper's main-table rows (:mod:`~swe_explore.evaluation.paper_rows`), shown after ours in
        the overall table and the comparison (labelled "paper, all 848 instances"; not in the group tables, not
        compared, not in the summaries).
    :param warn: receives each warning line (default: printed to stderr).
    :param evaluate_options: passed to :func:`~swe_explore.evaluation.results.evaluate_rows` (``k``,
        ``line_count_mode``, ``normalize_paths``, ``shared_snapshots``).
    :return: the report.
    :raises NothingScoredError: if no instance has a snapshot.
    :raises ValueError: bad input, naming the file (a :class:`SnapshotCommitError` names the snapshot).
    """
    all_rows = read_result_files(paths, {r.instance_id for r in records}, bench, warn)
    names = [str(rows[0].get("explorer") or Path(path).stem) for path, rows in zip(paths, all_rows, strict=True)]
    files: dict[str, FileScore] = {}
    for label, path, rows in zip(file_labels(paths, names), paths, all_rows, strict=True):
        coverage = Coverage()
        try:
            scored = evaluate_rows(
                rows, records, repos, coverage=coverage, score_predicted_lines=score_predicted_lines, **evaluate_options
            )
        except SnapshotCommitError:
            raise
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from exc
        if not scored:
            raise NothingScoredError(len(records), repos)
        summary = {
            "file": str(path),
            **summarize(scored, records),
            "coverage": coverage.to_dict(),
            "per_instance": instance_metrics(scored),
        }
        if score_predicted_lines:
            resolved = [{**row, "metrics": row[RESOLVED_METRICS_KEY]} for row in scored]
            summary["predicted_files_resolved"] = {
                "metrics": mean_metrics(resolved),
                "per_instance": instance_metrics(resolved),
            }
        files[label] = FileScore(Path(path), scored, coverage, {r["instance_id"] for r in rows}, summary)
    means = {label: f.summary["metrics"] for label, f in files.items()}
    tables = [format_table(with_paper_rows(means, paper_rows or []), metrics=metrics, style=style)]
    if score_predicted_lines:
        resolved_table = {label: f.summary["predicted_files_resolved"]["metrics"] for label, f in files.items()}
        tables += [f"\n{RESOLVED_TITLE}", format_table(resolved_table, metrics=metrics, style=style)]
    if per_repo:
        tables += _repo_tables(files, metrics, style)
    for name, group_of in groupings:
        tables += _group_tables(files, records, name, group_of, metrics, style)
    comparison = None
    if compare is not None:
        # only instances that each file has a row for (not the NOT_ATTEMPTED zeros of the tables above)
        present = {label: [r for r in f.scored if r["instance_id"] in f.instance_ids] for label, f in files.items()}
        comparison = compare_rows(present, next(iter(present)), metrics, **compare)
        tables.append(f"\n{compared_line(comparison)}")
        extra = {row.label: row.figures for row in paper_rows or []}
        tables.append(format_comparison(comparison, metrics_as="rows", extra=extra))
        for label, f in files.items():
            f.summary["comparison"] = comparison.to_dict(label)
    return EvaluationReport(files, "\n".join(tables), comparison)


def _repo_tables(files: dict[str, FileScore], metrics: Sequence[str], style: str) -> list[str]:
    """A heading and a table per repository (``per_repo`` of the summaries)."""
    summaries = [f.summary for f in files.values()]
    out = []
    for repo in sorted({repo for s in summaries for repo in s["per_repo"]}):
        per = {
            label: f.summary["per_repo"][repo]["metrics"] for label, f in files.items() if repo in f.summary["per_repo"]
        }
        n = max(s["per_repo"].get(repo, {}).get("cases", 0) for s in summaries)
        out += [f"\n{repo} ({n} instance{'' if n == 1 else 's'})", format_table(per, metrics=metrics, style=style)]
    return out


def _group_tables(
    files: dict[str, FileScore],
    records: Sequence[BenchRecord],
    name: str,
    group_of: Callable[[BenchRecord], str],
    metrics: Sequence[str],
    style: str,
) -> list[str]:
    """A heading and a table per value of a grouping; fills each summary's ``per_<name>`` (all 17 metrics)."""
    groups = {r.instance_id: group_of(r) for r in records}
    out = []
    for value in sorted(set(groups.values())):
        per, n = {}, 0
        for label, f in files.items():
            subset = [row for row in f.scored if groups.get(row["instance_id"]) == value]
            if subset:
                per[label] = mean_metrics(subset, metrics)
                f.summary.setdefault(f"per_{name}", {})[value] = {"cases": len(subset), "metrics": mean_metrics(subset)}
                n = max(n, len(subset))
        if per:
            out += [
                f"\n{name} {value} ({n} instance{'' if n == 1 else 's'})",
                format_table(per, metrics=metrics, style=style),
            ]
    return out


def compared_line(comparison: Comparison) -> str:
    """``"compared: 21 instances present in all 3 files, baseline 'x' (left out: 2 missing from y: a, b)"``."""
    left_out = "; ".join(
        f"{len(ids)} missing from {label}: {', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''}"
        for label, ids in comparison.excluded.items()
    )
    return (
        f"compared: {comparison.n} instances present in all {len(comparison.labels)} files, baseline "
        f"{comparison.baseline!r}" + (f" (left out: {left_out})" if left_out else "")
    )
