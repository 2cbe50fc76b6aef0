"""Loading the SWE-Explore bench JSONL and locating each record's repository snapshot (docs/metrics.md §3.1, §1.3).

One JSON object per line, public release format::

    {"instance_id": "psf__requests-1142", "repo": "psf/requests", "base_commit": "...",
     "problem_statement": "...",   # the issue text = the query
     "ground_truth": {"read_core_files": [...], "read_core_regions": [{"path", "start", "end"}, ...],
                      "read_optional_files_map": {model: [...]}, "read_optional_regions_map": {model: [...]},
                      "modified_core_files": [...], "main_files": [...]},
     "repo_dir": "repos/requests"   # optional
     ...}

Records with an empty ``read_core_regions`` are skipped by default, like the reference runner's
``--skip-empty-core``. Every problem is reported as ``ValueError("<file>:<line>: ...")``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_REGION_LISTS = ("read_core_regions",)
_FILE_LISTS = ("read_core_files", "modified_core_files", "main_files")
_REQUIRED_GT = ("read_core_files", "read_core_regions")


@dataclass(frozen=True)
class BenchRecord:
    """One SWE-Explore instance.

    :param instance_id: e.g. ``psf__requests-1142``.
    :param repo: ``org/name`` (from ``repo``, else ``meta.repo``, else derived from the instance_id).
    :param base_commit: the commit the snapshot is checked out at (``""`` if the record has none).
    :param problem_statement: the issue text, used as the query (``""`` if absent and not required).
    :param ground_truth: the record's ``ground_truth`` dict, as in the file.
    :param repo_dir: the record's ``repo_dir`` (snapshot relative to ``--repos``), or ``None``.
    :param raw: the whole JSON object, as in the file.
    """

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    ground_truth: dict[str, Any]
    repo_dir: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def query(self) -> str:
        """The query given to explorers: the raw ``problem_statement`` (docs/metrics.md §1.4)."""
        return self.problem_statement

    @property
    def core_regions(self) -> list[dict[str, Any]]:
        """``ground_truth.read_core_regions`` (a list of ``{"path", "start", "end"}`` dicts)."""
        return list(self.ground_truth.get("read_core_regions") or [])


_ID_REPO = re.compile(
    r"^(?:instance_)?(?P<org>[A-Za-z0-9][A-Za-z0-9-]*)__(?P<name>[A-Za-z0-9._-]+?)"
    r"-(?:\d+|[0-9a-f]{40}(?:-v(?:nan|[0-9a-f]+))?)$"
)


def repo_from_instance_id(instance_id: str) -> str:
    """Derive ``org/name`` from an instance id in one of the SWE-bench conventions, else ``""``.

    ``org__name-123`` (SWE-bench, Verified, Multilingual) and ``[instance_]org__name-<40-hex sha>``, optionally
    followed by ``-v<hex>`` or ``-vnan`` (SWE-bench Pro, with or without its ``instance_`` prefix): e.g.
    ``ansible__ansible-f327e65d11bb905ed9f15996024f857a95592629-vba6da65a0f3baefda7a058ebbd0a8dcafb8512f5``
    gives ``ansible/ansible``. Any other shape gives ``""`` rather than a guess.

    :param instance_id: the instance id.
    :return: ``org/name``, or ``""`` if the id follows none of these conventions.
    """
    match = _ID_REPO.match(instance_id)
    return f"{match['org']}/{match['name']}" if match else ""


def _check_region(region: Any, where: str) -> None:
    if not isinstance(region, Mapping):
        raise ValueError(f"{where}: region {region!r} is not an object with path/start/end")
    missing = [key for key in ("path", "start", "end") if key not in region]
    if missing:
        raise ValueError(f"{where}: region {region!r} lacks {missing}")
    if not isinstance(region["path"], str):
        raise ValueError(f"{where}: region {region!r} has a non-string path")
    for key in ("start", "end"):
        value = region[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where}: region {region!r} has a non-integer {key}")


def _check_ground_truth(gt: Any, where: str) -> None:
    """Check that ``ground_truth`` has the release's shape; quirks the reference evaluator accepts (``end: -1``,
    negative starts, ``start > end`` in optional regions) pass, wrong types and nulls do not."""
    if not isinstance(gt, Mapping):
        raise ValueError(f"{where}: ground_truth is {type(gt).__name__}, expected an object")
    for key in _REQUIRED_GT:
        if key not in gt:
            raise ValueError(f"{where}: ground_truth lacks {key!r}")
    for key in _REGION_LISTS:
        if not isinstance(gt[key], list):
            raise ValueError(f"{where}: ground_truth.{key} is {_kind(gt[key])}, expected a list of regions")
        for i, region in enumerate(gt[key]):
            _check_region(region, f"{where}: ground_truth.{key}[{i}]")
    for key in _FILE_LISTS:
        if key not in gt:
            continue  # optional in benches other than the release (read_core_files is required above)
        files = gt[key]
        if not isinstance(files, list) or not all(isinstance(p, str) for p in files):
            raise ValueError(f"{where}: ground_truth.{key} is {_kind(files)}, expected a list of paths")
    for key in ("read_optional_files_map", "read_optional_regions_map"):
        if key not in gt:
            continue
        value = gt[key]
        if not isinstance(value, Mapping) or not all(isinstance(v, list) for v in value.values()):
            raise ValueError(f"{where}: ground_truth.{key} is {_kind(value)}, expected an object of lists")
    for model, regions in (gt.get("read_optional_regions_map") or {}).items():
        for i, region in enumerate(regions):
            _check_region(region, f"{where}: ground_truth.read_optional_regions_map[{model!r}][{i}]")
    for model, files in (gt.get("read_optional_files_map") or {}).items():
        if not all(isinstance(p, str) for p in files):
            raise ValueError(f"{where}: ground_truth.read_optional_files_map[{model!r}] is not a list of paths")


def _kind(value: Any) -> str:
    """``null``, ``a string``, ... for messages about a JSON value of the wrong type."""
    return "null" if value is None else f"a {type(value).__name__}"


def parse_record(data: Any, where: str = "<record>", require_query: bool = True) -> BenchRecord:
    """Validate one decoded bench object and build a :class:`BenchRecord`.

    :param data: the decoded JSON object.
    :param where: where it came from, used as the prefix of error messages (e.g. ``bench.jsonl:12``).
    :param require_query: if true, a missing or empty ``problem_statement`` is an error.
    :return: the record.
    :raises ValueError: if a required field is missing or has the wrong type (message starts with ``where``).
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
    instance_id = data.get("instance_id")
    if instance_id is not None and not isinstance(instance_id, str):
        raise ValueError(f"{where}: instance_id must be a string, got {type(instance_id).__name__}")
    if not instance_id:
        raise ValueError(f"{where}: missing or empty 'instance_id'")
    from swe_explore.indexes.store import check_snapshot_name

    try:
        check_snapshot_name(instance_id)  # the snapshot is <repos>/<instance_id>, the index <store>/<instance_id>
    except ValueError:
        raise ValueError(
            f"{where}: instance_id {instance_id!r} is not a folder name (its snapshot is <repos>/<instance_id>, "
            "its index <store>/<instance_id>): no '/', '\\' or NUL, and not starting with '_' or '.'"
        ) from None
    where = f"{where} ({instance_id})"
    _check_ground_truth(data.get("ground_truth"), where)
    problem = data.get("problem_statement", "")
    if not isinstance(problem, str):
        raise ValueError(f"{where}: 'problem_statement' is {type(problem).__name__}, expected a string")
    if require_query and not problem.strip():
        raise ValueError(
            f"{where}: missing or empty 'problem_statement' (the query; give the issue text with --issue-map FILE, "
            f"or join the release with its sources: scripts/prepare_bench.py)"
        )
    meta: Mapping[str, Any] = data["meta"] if isinstance(data.get("meta"), Mapping) else {}
    repo = data.get("repo") or meta.get("repo") or repo_from_instance_id(instance_id)
    base_commit = data.get("base_commit") or meta.get("base_commit") or ""
    repo_dir = data.get("repo_dir")
    for key, value in (("repo", repo), ("base_commit", base_commit)):
        if not isinstance(value, str):
            raise ValueError(f"{where}: {key!r} is {type(value).__name__}, expected a string")
    if repo_dir is not None and not isinstance(repo_dir, str):
        raise ValueError(f"{where}: 'repo_dir' is {type(repo_dir).__name__}, expected a string")
    return BenchRecord(
        instance_id=instance_id,
        repo=repo,
        base_commit=base_commit,
        problem_statement=problem,
        ground_truth=dict(data["ground_truth"]),
        repo_dir=repo_dir or None,
        raw=dict(data),
    )


def iter_jsonl(path: Path) -> Iterator[tuple[int, str, Any]]:
    """The JSON values of a JSONL file, one per non-blank line (a UTF-8 BOM is tolerated).

    :param path: the file.
    :yield: ``(line number, "<file>:<line>", value)`` per non-blank line.
    :raises ValueError: for a line that is not valid JSON, naming the file and line.
    """
    with path.open(encoding="utf-8-sig") as handle:
        try:
            for line_no, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{line_no}"
                try:
                    yield line_no, where, json.loads(line.rstrip("\n"))  # without it, an error at the end of the
                except json.JSONDecodeError as exc:  # line is reported at column 1 of a line after it
                    raise ValueError(f"{where}: invalid JSON ({exc.msg} column {exc.colno})") from None
        except UnicodeDecodeError as exc:
            raise ValueError(not_utf8(path, exc)) from None


def not_utf8(path: Path, exc: UnicodeDecodeError) -> str:
    """The one-line message for a text file that is not UTF-8.

    :param path: the file.
    :param exc: the decoding error.
    :return: ``"<file>: not a UTF-8 text file (byte 0xNN: <reason>)"``.
    """
    return f"{path}: not a UTF-8 text file (byte 0x{exc.object[exc.start]:02x}: {exc.reason})"


def note_first_line(first_line: dict[str, int], instance_id: str, where: str, line_no: int) -> None:
    """Record the line an ``instance_id`` is first seen on; a second line with it is an error.

    :param first_line: ``{instance_id: line number}`` of the file read so far (updated).
    :param instance_id: the record's id.
    :param where: ``"<file>:<line>"`` of the record, for the message.
    :param line_no: its line number.
    :raises ValueError: on a duplicate, naming both lines.
    """
    if instance_id in first_line:
        raise ValueError(
            f"{where}: duplicate instance_id {instance_id!r} (first seen on line {first_line[instance_id]})"
        )
    first_line[instance_id] = line_no


def first_ids(ids: Sequence[str], n: int = 5) -> str:
    """The first ``n`` instance ids, comma-separated, with ``", ..."`` when there are more (for one-line reports).

    :param ids: instance ids, in report order.
    :param n: how many to name.
    :return: e.g. ``"a, b, c, d, e, ..."``.
    """
    return ", ".join(ids[:n]) + (", ..." if len(ids) > n else "")


@dataclass
class BenchNotes:
    """What :func:`load_bench` left out, so that a command can say it (filled when passed as ``notes``).

    :param records: records in the file.
    :param empty_core: ids of the records dropped for empty ``read_core_regions``, in file order.
    :param issue_ids: ids in the issue map (0 without one).
    :param unmatched_issue_ids: issue-map ids that match no record of the file, in the map's order.
    """

    records: int = 0
    empty_core: list[str] = field(default_factory=list)
    issue_ids: int = 0
    unmatched_issue_ids: list[str] = field(default_factory=list)

    def lines(self, bench: str | Path, issue_map: str | Path | None = None) -> list[str]:
        """One ``note:``/``warning:`` line per thing left out (empty when nothing was).

        :param bench: the bench path, named in the lines.
        :param issue_map: the issue map's path, named in its line.
        :return: the lines.
        """

        out = []
        if self.empty_core:
            out.append(
                f"note: {bench}: {len(self.empty_core)} of {self.records} records have no read_core_regions and are "
                f"skipped (as the reference runner's --skip-empty-core): {first_ids(self.empty_core)}"
            )
        if self.unmatched_issue_ids:
            out.append(
                f"warning: {issue_map}: {len(self.unmatched_issue_ids)} of its {self.issue_ids} instance ids match "
                f"no record of {bench}: {first_ids(self.unmatched_issue_ids)}"
            )
        return out


def load_bench(
    path: str | Path,
    *,
    skip_empty_core: bool = True,
    limit: int | None = None,
    require_query: bool = True,
    issue_map: Mapping[str, str] | None = None,
    notes: BenchNotes | None = None,
) -> list[BenchRecord]:
    """Load a bench JSONL file (docs/metrics.md §3.1), validating every record.

    All records are validated first; then records with an empty ``read_core_regions`` are dropped (if
    ``skip_empty_core``), then the first ``limit`` are kept, in that order, as in the reference runner
    (docs/metrics.md §1.3).

    :param path: the JSONL file, one instance per line; blank lines are ignored.
    :param skip_empty_core: drop records without core regions (the reference default).
    :param limit: keep only the first N records after filtering (``None`` = all).
    :param require_query: require a non-empty ``problem_statement`` (turn off to score external predictions
        against a bench that has no issue text).
    :param issue_map: ``{instance_id: issue text}`` (see :func:`load_issue_map`); a non-empty text in it replaces
        the record's ``problem_statement``, as the reference runner's ``--issue-map`` does, so rows of the public
        release (which carry no issue text) get their query.
    :param notes: filled with what was left out: records without core regions, issue-map ids of no record.
    :return: the records in file order.
    :raises FileNotFoundError: if the file does not exist.
    :raises ValueError: on invalid JSON, a missing field or a duplicate instance_id; the message names the
        file and line number.
    """
    path = Path(path)
    if path.is_dir():
        raise FileNotFoundError(f"bench file {path} is a directory; give the bench JSONL file")
    if not path.is_file():
        raise FileNotFoundError(f"bench file {path} does not exist")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    records: list[BenchRecord] = []
    first_line: dict[str, int] = {}
    for line_no, where, data in iter_jsonl(path):
        if issue_map is not None and isinstance(data, dict):
            text = issue_map.get(str(data.get("instance_id")))
            if text:
                data["problem_statement"] = text
            elif require_query and not str(data.get("problem_statement") or "").strip():
                raise ValueError(
                    f"{where} ({data.get('instance_id')}): no issue text: not in the issue map and "
                    f"no 'problem_statement' in the record"
                )
        record = parse_record(data, where, require_query=require_query)
        note_first_line(first_line, record.instance_id, where, line_no)
        records.append(record)
    if notes is not None:
        notes.records = len(records)
        if skip_empty_core:
            notes.empty_core = [r.instance_id for r in records if not r.ground_truth.get("read_core_regions")]
        if issue_map is not None:
            notes.issue_ids = len(issue_map)
            notes.unmatched_issue_ids = [iid for iid in issue_map if iid not in first_line]
    if skip_empty_core:
        records = [r for r in records if r.ground_truth.get("read_core_regions")]
    return records if limit is None else records[:limit]


def load_issue_map(path: str | Path) -> dict[str, str]:
    """Read an issue map, the reference runner's ``--issue-map`` file: one JSON object ``{instance_id: text}``.

    :param path: the JSON file.
    :return: instance_id -> issue text.
    :raises FileNotFoundError: if the file does not exist.
    :raises ValueError: if it is not a JSON object of strings (the message names the file and the bad key).
    """
    path = Path(path)
    if path.is_dir():
        raise FileNotFoundError(f"issue map {path} is a directory; give the JSON file")
    if not path.is_file():
        raise FileNotFoundError(f"issue map {path} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON ({exc.msg} line {exc.lineno} column {exc.colno})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(not_utf8(path, exc)) from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object {{instance_id: issue text}}, got {type(data).__name__}")
    for key, value in data.items():
        if not isinstance(value, str):
            raise ValueError(f"{path}: the issue text of {key!r} is {type(value).__name__}, expected a string")
    return data


#: The marker file a materialised snapshot carries (``{"repo", "base_commit", "instance_id", ...}``), written by
#: :mod:`swe_explore.benchprep.snapshots`; it lets the evaluator check the snapshot's commit.
SNAPSHOT_MARKER = ".swe-explore-snapshot.json"


class SnapshotCommitError(ValueError):
    """A record's snapshot is at another commit than the record's ``base_commit``.

    :param record: the record.
    :param snapshot: the snapshot directory.
    :param commit: the snapshot's commit (from its marker or its ``.git``).
    """

    def __init__(self, record: BenchRecord, snapshot: Path, commit: str) -> None:
        super().__init__(
            f"{record.instance_id}: snapshot {snapshot} is at commit {commit[:12]}, the record's base_commit is "
            f"{record.base_commit[:12]}; materialise the snapshot at base_commit"
        )


def snapshot_candidates(record: BenchRecord, repos_dir: str | Path, shared: bool = False) -> list[Path]:
    """The directories tried for a record's snapshot, in order.

    Exact by default: ``repos_dir/instance_id``, then the record's ``repo_dir`` (``repos_dir/repo_dir``, or
    ``repo_dir`` itself if absolute; when ``repo_dir`` starts with the name of ``repos_dir``, e.g.
    ``repos/astropy__astropy-12907`` under ``--repos repos``, also with that prefix dropped). With ``shared``,
    the reference runner's fallbacks to folders shared by several instances follow (docs/metrics.md §3.1): for an id
    ``org__name-123``, ``name``, ``org__name``, ``org-name`` and ``org`` (such a folder is at the commit of only
    one instance, so it is used only when asked for).

    :param record: the bench record.
    :param repos_dir: the ``--repos`` directory.
    :param shared: also try the shared-folder fallbacks.
    :return: candidate directories, without repeats (not checked for existence).
    """
    root = Path(repos_dir)
    out = [root / record.instance_id]
    if record.repo_dir:
        rel = Path(record.repo_dir)
        if rel.is_absolute():
            out.append(rel)
        else:
            out.append(root / rel)
            if rel.parts and rel.parts[0] == root.name:
                out.append(root.joinpath(*rel.parts[1:]))
    if shared and "__" in record.instance_id:
        org, rest = record.instance_id.split("__", 1)
        name = rest.rsplit("-", 1)[0] if "-" in rest else rest
        out += [root / name, root / f"{org}__{name}", root / f"{org}-{name}", root / org]
    return list(dict.fromkeys(out))


def bench_snapshots(records: Sequence[BenchRecord], repos: Path) -> tuple[list[Path], list[str]]:
    """The distinct snapshots of a bench's records (:func:`find_snapshot`), and the records without one.

    :param records: the bench.
    :param repos: the snapshots directory.
    :return: the snapshot directories, sorted; the instance ids of the records without a snapshot, in order.
    """
    found = {find_snapshot(r, repos) for r in records}
    missing = [r.instance_id for r in records if find_snapshot(r, repos) is None]
    return sorted(p for p in found if p is not None), missing


def find_snapshot(record: BenchRecord, repos_dir: str | Path | None, shared: bool = False) -> Path | None:
    """The record's snapshot directory under ``repos_dir``, or ``None`` when there is none.

    :param record: the bench record.
    :param repos_dir: the ``--repos`` directory, or ``None``.
    :param shared: also accept the shared-folder fallbacks of :func:`snapshot_candidates`.
    :return: the first existing candidate of :func:`snapshot_candidates`, or ``None``.
    """
    if repos_dir is None:
        return None
    for candidate in snapshot_candidates(record, repos_dir, shared):
        if candidate.is_dir():
            return candidate
    return None


def snapshot_commit(snapshot: str | Path) -> str | None:
    """The commit a snapshot holds, when it can be known: its :data:`SNAPSHOT_MARKER`'s ``base_commit``, else
    the ``HEAD`` of its ``.git`` (``git rev-parse HEAD``), else ``None``.

    :param snapshot: the snapshot directory.
    :return: the full commit hash, or ``None``.
    :raises ValueError: if the snapshot has a marker that does not name a commit (the check cannot be skipped
        silently).
    """
    snapshot = Path(snapshot)
    marker = snapshot / SNAPSHOT_MARKER
    if marker.is_file():
        try:
            commit = json.loads(marker.read_text(encoding="utf-8")).get("base_commit")
        except (OSError, ValueError, AttributeError):
            commit = None
        if not isinstance(commit, str) or not commit:
            raise ValueError(
                f"{marker}: unreadable snapshot marker (no base_commit); the snapshot's commit cannot "
                f"be checked: materialise it again"
            )
        return commit
    if (snapshot / ".git").exists():
        import subprocess

        try:
            out = subprocess.run(["git", "-C", str(snapshot), "rev-parse", "HEAD"], capture_output=True, text=True)
        except OSError:
            return None
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return None


def check_snapshot(record: BenchRecord, snapshot: Path) -> str | None:
    """The snapshot's commit, after checking it is the record's ``base_commit`` (when both are known).

    A commit given as a prefix (``base_commit`` shorter than 40 hex digits) matches the full hash it starts;
    hex digits compare case-insensitively (``ABC123`` is ``abc123``).

    :param record: the bench record.
    :param snapshot: its snapshot directory.
    :return: the snapshot's commit, or ``None`` when it cannot be known.
    :raises SnapshotCommitError: if the snapshot is at another commit.
    """
    commit = snapshot_commit(snapshot)
    if commit and record.base_commit:
        short, full = sorted((commit.lower(), record.base_commit.lower()), key=len)
        if not full.startswith(short):
            raise SnapshotCommitError(record, snapshot, commit)
    return commit
