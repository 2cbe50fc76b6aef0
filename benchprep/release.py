"""Reading the SWE-Explore release and joining it with its issue sources (SWE-bench Verified, Multilingual, Pro).

The public release (Hugging Face ``SWE-Explore-Bench/SWE-Explore-Bench``, ``bench.final.public.jsonl``, 848 rows)
carries the ground truth of each instance but no issue text, repository or base commit. Its rows hold, in this
order: ``instance_id``, ``repo_path`` (``/testbed``), ``repo_dir`` (``repos/<instance_id>``), ``ground_truth``
(the six fields), ``read_step_info``, ``meta`` and ``dataset`` (``verified``, ``multilingual`` or ``pro``). The
issue text and the commit live in the source datasets, in the SWE-bench column layout: ``instance_id``,
``repo`` (``owner/name``), ``base_commit`` (40 hex digits), ``problem_statement`` and, for SWE-bench Pro,
``requirements`` and ``interface``. :func:`join_release` joins the two into the bench format the toolkit reads
(:mod:`swe_explore.evaluation.bench`).

**Sources** (:func:`read_source`): local ``.jsonl`` (one object per line), ``.json`` (an array of objects) or
``.parquet`` files (read with pyarrow), a directory of such files (e.g. a ``huggingface-cli download`` of the
dataset: every such file under it, in path order), or a Hugging Face dataset id ``owner/name[:split]`` (split
``test`` by default: ``princeton-nlp/SWE-bench_Verified``, ``SWE-bench/SWE-bench_Multilingual``,
``ScaleAI/SWE-bench_Pro``), which needs the optional ``hub`` extra (``pip install 'swe-explore-baselines[hub]'``)
and a reachable hub.

**Id normalisation.** A release id is looked up by these rules, in order; the first that finds a source row
wins, and the rule is counted in the report (``matched_by``):

1. ``exact``: the same id.
2. ``instance_prefix``: the same id once SWE-bench Pro's ``instance_`` prefix, which the release drops, is
   removed (``instance_ansible__ansible-<sha>-v<hex>`` in Pro is ``ansible__ansible-<sha>-v<hex>`` in the
   release). The ``-v<hex>``/``-vnan`` suffix of Pro ids is part of the id and kept as in the release (some Pro
   ids, e.g. flipt-io's and navidrome's, have no such suffix at all).
3. ``case``: the same id ignoring letter case (GitHub owner and repository names are case-insensitive, and
   SWE-bench Pro writes e.g. ``NodeBB__NodeBB``), when exactly one source id matches.
4. ``pro_suffix``: for Pro-shaped ids (``org__name-<40-hex sha>[-v<hex>|-vnan]``), the same id without its
   ``-v...`` suffix, ignoring case, when exactly one source id matches (a source whose suffix differs from the
   release's, or a release id written without it).
5. ``release``: no source row, but the release row itself carries a valid ``repo``, ``base_commit`` and
   ``problem_statement`` (an already joined file such as the dev set), kept as it is.

Several source rows under one id (the same dataset given twice) are fine when they agree on ``repo``,
``base_commit``, ``problem_statement``, ``requirements`` and ``interface``; otherwise the release row is not
joined (``conflicting source rows``), as it is when a fallback rule finds more than one id.

**Checks.** A matched source row must have an ``owner/name`` repo, a 40-hex ``base_commit`` and a non-empty
``problem_statement``; a release row that has its own ``repo`` or ``base_commit`` must agree with the source
(repo ignoring case); an own non-empty ``problem_statement`` is replaced by the source's query and counted
(``problem_statement_replaced``). A row that fails is not joined; the reason is given per row. Nothing is dropped
silently: unjoined rows are not written but listed on screen and in the report (``strict`` makes them an error).

**Query of SWE-bench Pro rows** (``pro_query``, :func:`pro_query_text`), for rows whose source has a non-empty
``requirements`` or ``interface``: ``"problem"`` keeps ``problem_statement``; ``"full"`` (the default) appends
``"\\n\\nRequirements:\\n" + requirements`` and ``"\\n\\nNew interfaces introduced:\\n" + interface``, each only
when present. With both present this is exactly the task text SWE-bench Pro's harness gives agents (Scale's
``create_problem_statement``, scaleapi/SWE-bench_Pro-os), hence what the trajectories behind the ground truth saw.

**Output record** (release order): ``instance_id`` (as in the release), ``repo``, ``base_commit``, ``dataset``,
``language`` (:func:`instance_language`), ``problem_statement`` (the query), for Pro rows ``requirements`` and
``interface`` as in the source, then every other release field unchanged (``repo_path``, ``repo_dir``,
``ground_truth``, ``read_step_info``, ``meta``; the release's ``repo_dir``, ``repos/<instance_id>``, finds the
snapshot ``<repos>/<instance_id>`` under any ``--repos``: :func:`swe_explore.evaluation.bench.snapshot_candidates`).
``read_step_info`` (read-step provenance used by the reference's line refinement, a few KB per row) is kept: the
output stays a superset of the release row; the report gives its total size (``read_step_info_bytes``).

**Language of an instance** (:func:`instance_language`): the language (:func:`chunking.languages.language_for_path`;
``tsx`` counts as ``typescript``) holding most core lines, over ``read_core_regions`` with ``1 <= start <= end``
(union of lines per file); docs/config/text files and unknown extensions do not count. When no such region has a
code file (only whole-file ``end: -1`` regions, negative starts or ``start > end``), the language with most core
region files; then the one with most ``modified_core_files``; else ``None``. Ties go to the language with more
files, then the alphabetically first. A ``.h`` header is C++ when the instance, or another instance of the same
repository in the release, has a C++ file in its ground truth, else C.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_explore.chunking.atomic import write_text_atomic
from swe_explore.chunking.languages import TEXT, language_for_path
from swe_explore.evaluation.bench import BenchRecord, iter_jsonl, note_first_line, parse_record

PRO_QUERY_MODES: tuple[str, ...] = ("problem", "full")
"""The ``--pro-query`` choices (see the module docstring)."""
DEFAULT_PRO_QUERY = "full"
"""Default query of SWE-bench Pro rows: problem statement, requirements and interface, as Pro's harness builds."""

MATCH_RULES: tuple[str, ...] = ("exact", "instance_prefix", "case", "pro_suffix", "release")
"""The id normalisation rules, in the order they are tried (see the module docstring)."""

SOURCE_FIELDS: tuple[str, ...] = (
    "instance_id", "repo", "base_commit", "problem_statement", "requirements", "interface",
)  # fmt: skip
"""Columns read from a source (``requirements``/``interface`` are optional: SWE-bench Pro only)."""

PRO_PREFIX = "instance_"
"""The prefix of SWE-bench Pro ids, dropped by the release."""

HUB_DEFAULT_SPLIT = "test"
"""Split of a Hugging Face source given without ``:split`` (the three sources ship one ``test`` split)."""

_FILE_SUFFIXES = (".jsonl", ".json", ".parquet")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(?::[\w.-]+)?$")
_PRO_ID = re.compile(r"^(?P<base>.+__.+-[0-9a-fA-F]{40})(?:-v(?:nan|[0-9a-fA-F]+))?$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")
_COMMIT = re.compile(r"^[0-9a-fA-F]{40}$")
_PRO_HEADERS = (("requirements", "Requirements:"), ("interface", "New interfaces introduced:"))
_JOINED = ("repo", "base_commit", "problem_statement", "requirements", "interface")
_NO_DATASET = "(none)"
_NO_SOURCE = "no source row with this instance_id"


@dataclass(frozen=True)
class SourceRow:
    """One row of a source dataset (SWE-bench column layout), as read; validated only when a release row uses it.

    :param instance_id: the id as written in the source (Pro ids with their ``instance_`` prefix).
    :param repo: ``owner/name``, as read (any JSON value).
    :param base_commit: the commit, as read.
    :param problem_statement: the issue text, as read.
    :param requirements: SWE-bench Pro's requirements text, or ``None``.
    :param interface: SWE-bench Pro's interface text, or ``None``.
    :param origin: where it came from, for messages: ``file:line`` (JSONL), ``file:row N`` or ``hub-id[split]:row N``.
    """

    instance_id: str
    repo: Any
    base_commit: Any
    problem_statement: Any
    requirements: str | None
    interface: str | None
    origin: str

    def joined_fields(self) -> tuple[Any, ...]:
        """The fields a join copies (used to tell duplicate rows that agree from ones that conflict)."""
        return tuple(getattr(self, name) for name in _JOINED)


@dataclass
class Source:
    """The rows of one ``--source`` and how many of them a join used.

    :param name: the source as given (a path or a Hugging Face id).
    :param rows: its rows, in order.
    :param used: how many rows a join used (filled in by :func:`join_release`).
    """

    name: str
    rows: list[SourceRow]
    used: int = 0


@dataclass(frozen=True)
class ReleaseRow:
    """One validated row of the release file.

    :param line: its line number in the file (1-based).
    :param data: the decoded JSON object, as in the file.
    """

    line: int
    data: dict[str, Any]

    @property
    def instance_id(self) -> str:
        """The row's ``instance_id``."""
        return str(self.data["instance_id"])

    @property
    def dataset(self) -> str:
        """The row's ``dataset`` (``verified``, ``multilingual``, ``pro``), or ``(none)``."""
        value = self.data.get("dataset")
        return str(value) if value else _NO_DATASET


@dataclass
class JoinResult:
    """What :func:`join_release` produced.

    :param records: the joined bench records (JSON objects), in release order.
    :param unjoined: one ``{"instance_id", "dataset", "line", "reason"}`` per release row not joined.
    :param per_dataset: dataset -> ``{"rows", "joined", "unjoined"}``.
    :param matched_by: match rule (:data:`MATCH_RULES`) -> joined rows.
    :param sources: one ``{"source", "rows", "used"}`` per source.
    :param pro_query: the ``pro_query`` mode used.
    :param pro_rows: joined rows whose source has requirements/interface (SWE-bench Pro layout).
    :param problem_statement_replaced: joined rows whose own non-empty ``problem_statement`` differed from the
        query written.
    :param languages: language (or ``"(none)"``) -> joined rows.
    :param read_step_info_bytes: total size of the written ``read_step_info`` fields (compact JSON, bytes).
    """

    records: list[dict[str, Any]] = field(default_factory=list)
    unjoined: list[dict[str, Any]] = field(default_factory=list)
    per_dataset: dict[str, dict[str, int]] = field(default_factory=dict)
    matched_by: dict[str, int] = field(default_factory=dict)
    sources: list[dict[str, Any]] = field(default_factory=list)
    pro_query: str = DEFAULT_PRO_QUERY
    pro_rows: int = 0
    problem_statement_replaced: int = 0
    languages: dict[str, int] = field(default_factory=dict)
    read_step_info_bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-serialisable dict (records left out)."""
        return {
            "rows": len(self.records) + len(self.unjoined),
            "joined": len(self.records),
            "unjoined_count": len(self.unjoined),
            "per_dataset": self.per_dataset,
            "matched_by": self.matched_by,
            "sources": self.sources,
            "pro_query": self.pro_query,
            "pro_rows": self.pro_rows,
            "problem_statement_replaced": self.problem_statement_replaced,
            "languages": self.languages,
            "read_step_info_bytes": self.read_step_info_bytes,
            "unjoined": self.unjoined,
        }


# ----------------------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------------------


def read_release(path: str | Path) -> list[ReleaseRow]:
    """Read and validate the release file (JSONL); rows need no issue text, repo or commit.

    Each row is checked with :func:`swe_explore.evaluation.bench.parse_record` (ground truth shape, types).

    :param path: the release JSONL.
    :return: its rows in file order (blank lines skipped).
    :raises FileNotFoundError: if the file does not exist.
    :raises ValueError: on invalid JSON, an invalid row or a repeated instance_id (``file:line (id): ...``).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"release file {path} does not exist")
    rows: list[ReleaseRow] = []
    first_line: dict[str, int] = {}
    for line_no, where, data in iter_jsonl(path):
        record = parse_record(data, where, require_query=False)
        note_first_line(first_line, record.instance_id, where, line_no)
        rows.append(ReleaseRow(line_no, data))
    return rows


def read_source(spec: str | Path) -> Source:
    """Read one source: a ``.jsonl``/``.json``/``.parquet`` file, or a Hugging Face dataset id ``owner/name[:split]``.

    :param spec: a file path, a directory of such files, or a hub id (a string naming no existing file or
        directory and ending in none of the file suffixes is taken as a hub id).
    :return: the source with its rows.
    :raises FileNotFoundError: for a file path that does not exist.
    :raises ValueError: for an unknown file type, a row that is not an object or lacks ``instance_id``.
    :raises ImportError: for a hub id without the ``hub`` extra installed.
    :raises RuntimeError: when the hub cannot be reached or has no such dataset.
    """
    text = str(spec)
    path = Path(text)
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _FILE_SUFFIXES)
        if not found:
            raise FileNotFoundError(f"source directory {path} holds no .jsonl, .json or .parquet file")
        return Source(text, [row for p in found for row in read_source(p).rows])
    if path.is_file() or text.endswith(_FILE_SUFFIXES):
        if not path.is_file():
            raise FileNotFoundError(f"source file {path} does not exist")
        if path.suffix == ".parquet":
            rows = _read_parquet(path)
        elif path.suffix == ".jsonl":
            rows = _read_jsonl(path)
        elif path.suffix == ".json":
            rows = _read_json_array(path)
        else:
            raise ValueError(f"source {path}: unknown file type (expected .jsonl, .json or .parquet)")
        return Source(text, rows)
    if _HUB_ID.match(text):
        return Source(text, _read_hub(text))
    raise FileNotFoundError(
        f"source {text!r} is neither an existing .jsonl/.json/.parquet file nor a Hugging Face "
        f"dataset id owner/name[:split]"
    )


def _source_row(data: Any, origin: str) -> SourceRow:
    """Build a :class:`SourceRow` from one decoded object, checking only that it has an instance_id."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{origin}: expected an object, got {type(data).__name__}")
    iid = data.get("instance_id")
    if not isinstance(iid, str) or not iid.strip():
        raise ValueError(f"{origin}: missing or empty 'instance_id'")
    extra = {name: data.get(name) for name in ("requirements", "interface")}
    return SourceRow(
        instance_id=iid,
        repo=data.get("repo"),
        base_commit=data.get("base_commit"),
        problem_statement=data.get("problem_statement"),
        requirements=extra["requirements"] if isinstance(extra["requirements"], str) else None,
        interface=extra["interface"] if isinstance(extra["interface"], str) else None,
        origin=origin,
    )


def _read_jsonl(path: Path) -> list[SourceRow]:
    rows = []
    with path.open(encoding="utf-8-sig") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{line_no}: invalid JSON ({exc.msg} column {exc.colno})") from None
            rows.append(_source_row(data, f"{path}:{line_no}"))
    return rows


def _read_json_array(path: Path) -> list[SourceRow]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON ({exc.msg} line {exc.lineno} column {exc.colno})") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON array of objects, got {type(data).__name__}")
    return [_source_row(item, f"{path}: row {i}") for i, item in enumerate(data, start=1)]


def _read_parquet(path: Path) -> list[SourceRow]:
    import pyarrow.parquet as pq

    names = pq.read_schema(path).names
    if "instance_id" not in names:
        raise ValueError(f"{path}: no 'instance_id' column (columns: {', '.join(names)})")
    table = pq.read_table(path, columns=[name for name in SOURCE_FIELDS if name in names])
    return [_source_row(item, f"{path}: row {i}") for i, item in enumerate(table.to_pylist(), start=1)]


def _read_hub(spec: str) -> list[SourceRow]:
    name, _, split = spec.partition(":")
    split = split or HUB_DEFAULT_SPLIT
    try:
        import datasets
    except ImportError:
        raise ImportError(
            f"source {spec}: reading a Hugging Face dataset needs the 'hub' extra: "
            f"pip install 'swe-explore-baselines[hub]' (or give a local .jsonl/.parquet file)"
        ) from None
    try:
        dataset = datasets.load_dataset(name, split=split)
    except Exception as exc:  # network, authentication, unknown dataset or split: all reported the same way
        raise RuntimeError(
            f"source {spec}: could not load {name} split {split!r} from the Hugging Face hub "
            f"({type(exc).__name__}: {exc})"
        ) from None
    columns = [column for column in SOURCE_FIELDS if column in dataset.column_names]
    if "instance_id" not in columns:
        raise ValueError(f"source {spec}: no 'instance_id' column (columns: {', '.join(dataset.column_names)})")
    origin = f"{name}[{split}]"
    return [_source_row(item, f"{origin}: row {i}") for i, item in enumerate(dataset.select_columns(columns), 1)]


# ----------------------------------------------------------------------------------------------------------
# Ids
# ----------------------------------------------------------------------------------------------------------


def _strip_pro_prefix(instance_id: str) -> str:
    """An id without SWE-bench Pro's ``instance_`` prefix (other ids unchanged).

    :param instance_id: an instance id.
    :return: e.g. ``ansible__ansible-<sha>-v<hex>`` for ``instance_ansible__ansible-<sha>-v<hex>``.
    """
    return instance_id.removeprefix(PRO_PREFIX)


def _pro_base_id(instance_id: str) -> str | None:
    """A Pro-shaped id without its ``-v<hex>``/``-vnan`` suffix and prefix, lower-cased; ``None`` for other ids.

    :param instance_id: an instance id.
    :return: ``org__name-<sha>`` (lower case) for ``[instance_]org__name-<40-hex sha>[-v<hex>|-vnan]``, else ``None``.
    """
    match = _PRO_ID.match(_strip_pro_prefix(instance_id))
    return match["base"].lower() if match else None


class SourceIndex:
    """Source rows by normalised id, and the lookup of a release id by the rules of :data:`MATCH_RULES`.

    :param sources: the sources, in the order given (the origin of duplicates is reported in that order).
    """

    def __init__(self, sources: Sequence[Source]) -> None:
        self.by_id: dict[str, list[tuple[SourceRow, Source]]] = defaultdict(list)
        self.by_fold: dict[str, set[str]] = defaultdict(set)
        self.by_base: dict[str, set[str]] = defaultdict(set)
        for source in sources:
            for row in source.rows:
                key = _strip_pro_prefix(row.instance_id)
                self.by_id[key].append((row, source))
                self.by_fold[key.lower()].add(key)
                base = _pro_base_id(key)
                if base is not None:
                    self.by_base[base].add(key)

    def lookup(self, instance_id: str) -> tuple[str | None, list[tuple[SourceRow, Source]], str | None]:
        """Find the source rows of a release id.

        :param instance_id: the release id.
        :return: ``(rule, rows, problem)``: the rule that matched and the rows under the matched id (several when
            the id repeats across sources), or ``(None, [], reason)`` when no rule matched or a fallback rule
            matched more than one id.
        """
        key = _strip_pro_prefix(instance_id)
        if key in self.by_id:
            rows = self.by_id[key]
            prefixed = instance_id != key or any(row.instance_id != key for row, _ in rows)
            return ("instance_prefix" if prefixed else "exact"), rows, None
        for rule, candidates in (
            ("case", self.by_fold.get(key.lower(), set())),
            ("pro_suffix", self.by_base.get(_pro_base_id(key) or "", set())),
        ):
            if len(candidates) == 1:
                return rule, self.by_id[next(iter(candidates))], None
            if len(candidates) > 1:
                return None, [], f"ambiguous: {len(candidates)} source ids match by rule {rule!r}: {sorted(candidates)}"
        return None, [], _NO_SOURCE


# ----------------------------------------------------------------------------------------------------------
# Joining
# ----------------------------------------------------------------------------------------------------------


def pro_query_text(problem_statement: str, requirements: str | None, interface: str | None, mode: str) -> str:
    """The query of a SWE-bench Pro row (see the module docstring for the exact concatenation).

    :param problem_statement: the issue text.
    :param requirements: Pro's ``requirements`` (``None``/empty: left out).
    :param interface: Pro's ``interface`` (``None``/empty: left out).
    :param mode: ``"problem"`` (issue text only) or ``"full"``.
    :return: the query.
    :raises ValueError: for an unknown mode.
    """
    if mode not in PRO_QUERY_MODES:
        raise ValueError(f"unknown pro query mode {mode!r}; known: {', '.join(PRO_QUERY_MODES)}")
    if mode == "problem":
        return problem_statement
    parts = [problem_statement]
    for value, header in ((requirements, _PRO_HEADERS[0][1]), (interface, _PRO_HEADERS[1][1])):
        if value and value.strip():
            parts.append(f"{header}\n{value}")
    return "\n\n".join(parts)


def _source_problem(row: SourceRow) -> str | None:
    """Why a source row cannot be used, or ``None`` when it is valid."""
    if not isinstance(row.repo, str) or not _REPO.match(row.repo):
        return f"source row {row.origin}: repo {row.repo!r} is not 'owner/name'"
    if not isinstance(row.base_commit, str) or not _COMMIT.match(row.base_commit):
        return f"source row {row.origin}: base_commit {row.base_commit!r} is not a 40-hex commit"
    if not isinstance(row.problem_statement, str) or not row.problem_statement.strip():
        return f"source row {row.origin}: missing or empty problem_statement"
    return None


def _own_fields_problem(data: Mapping[str, Any]) -> str | None:
    """Why a release row cannot stand alone (rule ``release``), or ``None`` when it has valid fields of its own."""
    row = SourceRow(
        str(data["instance_id"]),
        data.get("repo"),
        data.get("base_commit"),
        data.get("problem_statement"),
        None,
        None,
        "(release row)",
    )
    return _source_problem(row)


def _conflict(data: Mapping[str, Any], row: SourceRow) -> str | None:
    """A disagreement between a release row's own repo/base_commit and its source row, or ``None``."""
    own_repo, own_commit = data.get("repo"), data.get("base_commit")
    if own_repo and str(own_repo).lower() != str(row.repo).lower():
        return f"release repo {own_repo!r} differs from {row.repo!r} of source row {row.origin}"
    if own_commit and str(own_commit).lower() != str(row.base_commit).lower():
        return f"release base_commit {own_commit!r} differs from {row.base_commit!r} of source row {row.origin}"
    return None


def join_release(
    release: Sequence[ReleaseRow], sources: Sequence[Source], pro_query: str = DEFAULT_PRO_QUERY
) -> JoinResult:
    """Join release rows with their source rows (rules and output fields: module docstring).

    :param release: the release rows (:func:`read_release`).
    :param sources: the sources (:func:`read_source`); their ``used`` counts are filled in.
    :param pro_query: ``"full"`` or ``"problem"`` (query of SWE-bench Pro rows).
    :return: the joined records (release order), the unjoined rows with their reasons, and the counts.
    :raises ValueError: for an unknown ``pro_query``.
    """
    if pro_query not in PRO_QUERY_MODES:
        raise ValueError(f"unknown pro query mode {pro_query!r}; known: {', '.join(PRO_QUERY_MODES)}")
    index = SourceIndex(sources)
    result = JoinResult(pro_query=pro_query)
    matched_by: Counter[str] = Counter()
    per_dataset: dict[str, Counter[str]] = defaultdict(Counter)
    used: dict[int, set[str]] = defaultdict(set)
    joined: list[tuple[ReleaseRow, dict[str, Any]]] = []
    for row in release:
        data = row.data
        per_dataset[row.dataset]["rows"] += 1
        rule, matches, reason = index.lookup(row.instance_id)
        fields: dict[str, Any] | None = None
        if matches:
            distinct = {m.joined_fields() for m, _ in matches}
            first = matches[0][0]
            if len(distinct) > 1:
                reason = "conflicting source rows: " + ", ".join(m.origin for m, _ in matches)
            else:
                reason = _source_problem(first) or _conflict(data, first)
            if reason is None:
                for m, source in matches:
                    used[id(source)].add(m.origin)
                fields = {
                    "repo": first.repo,
                    "base_commit": first.base_commit,
                    "problem_statement": first.problem_statement,
                    "requirements": first.requirements if first.requirements else None,
                    "interface": first.interface if first.interface else None,
                }
        elif reason == _NO_SOURCE and _own_fields_problem(data) is None:
            rule, reason = "release", None
            fields = {name: data.get(name) for name in _JOINED}
        if fields is None or rule is None:
            per_dataset[row.dataset]["unjoined"] += 1
            result.unjoined.append(
                {
                    "instance_id": row.instance_id,
                    "dataset": row.dataset,
                    "line": row.line,
                    "reason": reason or _NO_SOURCE,
                }
            )
            continue
        per_dataset[row.dataset]["joined"] += 1
        matched_by[rule] += 1
        joined.append((row, fields))
    cpp_repos = _repos_with_cpp(joined)
    for row, fields in joined:
        record = _output_record(row.data, fields, pro_query, cpp_repos)
        is_pro = bool(fields["requirements"] or fields["interface"])
        result.pro_rows += is_pro
        own = row.data.get("problem_statement")
        if isinstance(own, str) and own.strip() and own != record["problem_statement"]:
            result.problem_statement_replaced += 1
        if "read_step_info" in record:
            result.read_step_info_bytes += len(json.dumps(record["read_step_info"], separators=(",", ":")))
        result.records.append(record)
    result.matched_by = {rule: matched_by[rule] for rule in MATCH_RULES}
    result.per_dataset = {
        name: {key: counts[key] for key in ("rows", "joined", "unjoined")}
        for name, counts in sorted(per_dataset.items())
    }
    for source in sources:
        source.used = len(used[id(source)])
    result.sources = [{"source": s.name, "rows": len(s.rows), "used": s.used} for s in sources]
    result.languages = dict(sorted(Counter(str(r["language"] or _NO_DATASET) for r in result.records).items()))
    return result


def _output_record(
    data: Mapping[str, Any], fields: Mapping[str, Any], pro_query: str, cpp_repos: set[str]
) -> dict[str, Any]:
    """One output bench record: the joined fields first, then the release's other fields in release order."""
    problem = str(fields["problem_statement"])
    is_pro = bool(fields["requirements"] or fields["interface"])
    query = pro_query_text(problem, fields["requirements"], fields["interface"], pro_query) if is_pro else problem
    gt = data["ground_truth"]
    record: dict[str, Any] = {
        "instance_id": data["instance_id"],
        "repo": fields["repo"],
        "base_commit": fields["base_commit"],
    }
    if data.get("dataset") is not None:
        record["dataset"] = data["dataset"]
    record["language"] = instance_language(gt, cpp_headers=str(fields["repo"]).lower() in cpp_repos)
    record["problem_statement"] = query
    if is_pro:
        record["requirements"] = fields["requirements"]
        record["interface"] = fields["interface"]
    for key, value in data.items():
        if key not in record and key not in _JOINED:
            record[key] = value
    return record


# ----------------------------------------------------------------------------------------------------------
# Language
# ----------------------------------------------------------------------------------------------------------


def _gt_paths(gt: Mapping[str, Any]) -> Iterator[str]:
    """Every path named in a ground truth (core/optional regions and file lists)."""
    for key in ("read_core_files", "modified_core_files", "main_files"):
        yield from (p for p in gt.get(key) or [] if isinstance(p, str))
    for region in gt.get("read_core_regions") or []:
        yield str(region.get("path"))
    for files in (gt.get("read_optional_files_map") or {}).values():
        yield from (p for p in files if isinstance(p, str))
    for regions in (gt.get("read_optional_regions_map") or {}).values():
        yield from (str(r.get("path")) for r in regions)


def _repos_with_cpp(joined: Iterable[tuple[ReleaseRow, Mapping[str, Any]]]) -> set[str]:
    """Lower-cased repos of which some instance's ground truth names a C++ file (their ``.h`` headers are C++)."""
    return {
        str(fields["repo"]).lower()
        for row, fields in joined
        if any(language_for_path(p) == "cpp" for p in _gt_paths(row.data["ground_truth"]))
    }


def _code_language(path: str, cpp_headers: bool) -> str | None:
    """The code language of a path for :func:`instance_language` (``None`` for text and unknown files)."""
    language = language_for_path(path)
    if language == "c" and cpp_headers and path.lower().endswith(".h"):
        return "cpp"
    if language == "tsx":
        return "typescript"
    return None if language in (None, TEXT) else language


def _pick(weights: Mapping[str, int], files: Mapping[str, int]) -> str | None:
    """The language with the largest weight; ties to more files, then the alphabetically first."""
    if not weights:
        return None
    return min(weights, key=lambda lang: (-weights[lang], -files.get(lang, 0), lang))


def record_language(record: BenchRecord) -> str:
    """A bench record's language, the grouping of ``swe-explore evaluate`` and ``compare``: its ``language``
    field, else :func:`instance_language` of its ground truth (docs/config files do not count), else ``"-"``.

    :param record: the record.
    :return: the language name, or ``"-"``.
    """
    return str(record.raw.get("language") or instance_language(record.ground_truth) or "-")


def instance_language(gt: Mapping[str, Any], cpp_headers: bool = False) -> str | None:
    """The language of an instance from its ground truth (rule: module docstring).

    :param gt: the ``ground_truth`` object.
    :param cpp_headers: count ``.h`` headers as C++ (else C).
    :return: a code language name (``python``, ``go``, ``typescript``, ``cpp``, ...), or ``None`` when the ground
        truth names no code file.
    """
    cpp_headers = cpp_headers or any(language_for_path(p) == "cpp" for p in _gt_paths(gt))
    lines: dict[str, set[int]] = defaultdict(set)
    region_files: dict[str, str] = {}
    for region in gt.get("read_core_regions") or []:
        path = str(region.get("path"))
        language = _code_language(path, cpp_headers)
        if language is None:
            continue
        region_files[path] = language
        start, end = region.get("start"), region.get("end")
        if isinstance(start, int) and isinstance(end, int) and 1 <= start <= end:
            lines[path].update(range(start, end + 1))
    files_per_language = Counter(region_files.values())
    line_weights: Counter[str] = Counter()
    for path, covered in lines.items():
        line_weights[region_files[path]] += len(covered)
    if line_weights:
        return _pick(line_weights, files_per_language)
    if files_per_language:
        return _pick(files_per_language, files_per_language)
    modified = Counter(
        lang
        for p in set(gt.get("modified_core_files") or [])
        if (lang := _code_language(str(p), cpp_headers)) is not None
    )
    return _pick(modified, modified)


# ----------------------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------------------


def report_path(out: str | Path, *, keep_suffix: bool = False) -> Path:
    """Where the report of an output bench goes, beside it: ``BENCH.report.json`` for ``BENCH.jsonl``, or with
    ``keep_suffix`` ``BENCH.jsonl.report.json``.

    The one rule for the bench reports of ``swe-explore prepare`` (:func:`join_release`'s join report, the
    default) and ``swe-explore mine`` (:func:`swe_explore.benchprep.mine.write_outputs`, ``keep_suffix``). The two
    names differ because both are documented and read by other tools (README.md, docs/mining.md): a mined bench's
    report keeps the bench's full file name. The index store's run reports are another kind of file
    (:func:`swe_explore.indexes.report.run_report_path`).

    :param out: the output bench path.
    :param keep_suffix: keep the bench's suffix in the report's name (``mine``).
    :return: the report path.
    """
    out = Path(out)
    stem = out.name if keep_suffix or not out.suffix else out.name[: -len(out.suffix)]
    return out.with_name(f"{stem}.report.json")


def write_bench(path: str | Path, records: Iterable[Mapping[str, Any]]) -> None:
    """Write bench records as JSONL (one compact UTF-8 object per line), atomically.

    :param path: the output file.
    :param records: the records, in order.
    """
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
