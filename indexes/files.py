"""Every file the index store reads or writes: JSON, arrays, checksums, and saved retrievers.

One retriever directory (written by :func:`save_retriever`, read by :func:`load_retriever`)::

    retriever.json   {"name", "format_version", "config", "n_docs", "files": {file: {"bytes", "sha256"}},
                      extra facts (e.g. "dim", "model_fingerprint"), "links" (a linked composite only)}
    <state files>    .npy (numpy array), .npz (sparse matrix), .json (vocabulary), other (raw bytes, index.faiss)
    part0/, part1/   a standalone composite's parts, each a retriever directory of its own

A retriever hands its index over as a :class:`~retrievers.base.RetrieverState` (:meth:`Retriever.state`) and gets
it back in :meth:`Retriever.from_state`; the file format of each value follows from the file's extension. A
composite retriever (the hybrid) is saved either with its parts in ``part<i>/`` or, in the index store, as links
to the parts' sibling directories (``links``: relative path and SHA-256 of each part's ``retriever.json``).

:func:`load_retriever` checks ``retriever.json`` and every listed file's size and SHA-256 (:func:`check_files`)
before anything is parsed, so a missing, truncated or hand-edited file gives :class:`CorruptIndexError` naming
that file, never a traceback from deep inside numpy, scipy or faiss. No file is ever pickled. :func:`check_meta`
is the one check that a saved ``retriever.json`` is the index something else (a manifest, a hybrid) expects.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from swe_explore.retrievers.base import InvalidStateError, Retriever, RetrieverState
from swe_explore.retrievers.registry import RETRIEVERS

__all__ = [
    "FORMAT_VERSION",
    "MANIFEST",
    "META_FILE",
    "CorruptIndexError",
    "StaleIndexError",
    "check_config",
    "check_files",
    "check_meta",
    "file_records",
    "file_sha256",
    "jsonable",
    "load_retriever",
    "read_json",
    "save_npz",
    "save_retriever",
    "write_json",
]

#: Version of the on-disk layout (store manifests and retriever directories); bumped on incompatible changes.
FORMAT_VERSION = 1
#: Name of the JSON file that describes a chunker or retriever directory of the index store.
MANIFEST = "manifest.json"
#: Name of the JSON file that describes a saved retriever.
META_FILE = "retriever.json"
#: The fields of ``retriever.json`` that are not extra facts of the retriever's state.
_META_KEYS = ("name", "format_version", "config", "n_docs", "files", "links")


class CorruptIndexError(ValueError):
    """A persisted index file is missing, truncated, edited by hand or inconsistent.

    The message is ``"<path>: <reason>; rerun with --rebuild to rebuild it"``: the file, what is wrong, and the
    fix (``scripts/index_repos.py --rebuild``, or ``rebuild=True`` of :func:`indexes.build.ensure_index`).

    :param path: the offending file or directory.
    :param reason: what is wrong with it.
    """

    #: The fix, appended to every message.
    HINT = "rerun with --rebuild to rebuild it"

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}; {self.HINT}")


class StaleIndexError(ValueError):
    """A well-formed index that does not match what was asked for (other snapshot content, config or version).

    :param path: the manifest that does not match.
    :param reason: what differs.
    """

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: stale index: {reason}")


# JSON and checksums ------------------------------------------------------------------------------------------------


def jsonable(obj: Any) -> Any:
    """A statistics object as plain JSON values: ``to_dict()`` if it has one, else a dataclass's fields, then
    through ``json`` (what is not JSON becomes its ``str``).

    :param obj: the object.
    :return: dicts, lists, strings, numbers, booleans and ``None``.
    """
    if hasattr(obj, "to_dict"):
        obj = obj.to_dict()
    elif hasattr(obj, "__dataclass_fields__"):
        obj = dataclasses.asdict(obj)
    return json.loads(json.dumps(obj, default=str))


def write_json(path: Path, obj: Any) -> None:
    """Write JSON with one-space indents, sorted keys and a trailing newline (the store's only JSON layout).

    :param path: target file.
    :param obj: a JSON-serialisable value.
    """
    Path(path).write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def read_json(path: Path, expect: type = dict) -> Any:
    """Read a JSON file of an index.

    :param path: the file.
    :param expect: the type the top-level value must have (``dict`` for manifests, ``list`` for a vocabulary).
    :return: the parsed value.
    :raises CorruptIndexError: naming the file if it is missing, unreadable, not JSON or of another type.
    """
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorruptIndexError(path, "file is missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptIndexError(path, f"unreadable JSON ({exc})") from None
    if not isinstance(value, expect):
        what = "object" if expect is dict else expect.__name__
        raise CorruptIndexError(path, f"expected a JSON {what}")
    return value


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, hex.

    :param path: the file.
    :return: the hex digest.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_records(directory: Path, files: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of files, as ``retriever.json`` and the index store's manifests record them.

    :param directory: the directory holding the files.
    :param files: file names relative to ``directory``.
    :return: ``{name: {"bytes": size in bytes, "sha256": hex}}``.
    """
    directory = Path(directory)
    return {f: {"bytes": (directory / f).stat().st_size, "sha256": file_sha256(directory / f)} for f in files}


def check_files(directory: Path, records: Any, record_path: Path) -> None:
    """Check that every recorded file exists with its recorded size and SHA-256 (what :func:`file_records` wrote).

    Sizes are compared first, so a truncated file is reported as such without hashing; then every file is
    hashed (about 1.5 ms per MB: 12 ms for the 7.5 MB ``vectors.npy`` of pydata__xarray-7393).

    :param directory: the directory holding the files.
    :param records: ``{name: {"bytes", "sha256"}}`` as read from JSON.
    :param record_path: the JSON file the records come from (for messages).
    :raises CorruptIndexError: naming ``record_path`` if the records are malformed, or the data file if it is
        missing, of another size (truncated or replaced) or of another SHA-256 (edited).
    """
    if not isinstance(records, dict):
        raise CorruptIndexError(record_path, "'files' must map file names to {bytes, sha256}")
    for fname, info in records.items():
        if (
            not isinstance(info, dict)
            or not isinstance(info.get("bytes"), int)
            or not isinstance(info.get("sha256"), str)
        ):
            raise CorruptIndexError(record_path, f"entry for {fname!r} lacks bytes/sha256")
    for fname, info in records.items():
        fpath = Path(directory) / fname
        if not fpath.is_file():
            raise CorruptIndexError(fpath, "file is missing")
        size = fpath.stat().st_size
        if size != info["bytes"]:
            raise CorruptIndexError(fpath, f"{size} bytes, expected {info['bytes']} (truncated or replaced)")
    for fname, info in records.items():
        if file_sha256(Path(directory) / fname) != info["sha256"]:
            raise CorruptIndexError(
                Path(directory) / fname, "SHA-256 differs from the one recorded at save time (edited)"
            )


# State files by extension ------------------------------------------------------------------------------------------


def save_npz(path: Path, matrix: sp.spmatrix) -> None:
    """Save a CSR/CSC matrix in :func:`scipy.sparse.save_npz`'s layout, byte-deterministic: integer members
    deflated at level 1, floating-point values stored as they are.

    ``scipy.sparse.save_npz(compressed=True)`` deflates at zlib's default level 6; level 1 writes the 7,300 x
    18,000 TF-IDF matrix of pydata__xarray-7393 in 0.06 s instead of 0.11 s for a file 2% larger (the BM25 term
    counts: 0.015 s instead of 0.075 s, 0.56 MB instead of 0.46 MB). Floating-point weights hardly deflate (their
    mantissas look random): the TF-IDF values of astropy (1.07M, 8.3 MB) deflate by 6% at level 1 for 0.25 s of
    zlib, so they are stored (0.35 s -> 0.1 s for the whole save, 0.5 MB more); the indices deflate 2.4x and keep
    it. The archive members carry zip's fixed 1980-01-01 timestamp, so the same matrix always gives the same
    bytes; :func:`scipy.sparse.load_npz` reads it.

    :param path: target ``.npz`` file.
    :param matrix: a CSR or CSC matrix.
    :raises ValueError: for another sparse format.
    """
    if matrix.format not in ("csr", "csc"):
        raise ValueError(f"save_npz writes CSR or CSC matrices, got {matrix.format}")
    arrays = {
        "indices": matrix.indices,
        "indptr": matrix.indptr,
        "format": np.asarray(matrix.format.encode("ascii")),
        "shape": np.asarray(matrix.shape),
        "data": matrix.data,
    }
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for key, value in arrays.items():
            array = np.asanyarray(value)
            member_name: str | zipfile.ZipInfo = f"{key}.npy"  # a name gets the archive's deflate at level 1
            if array.dtype.kind == "f":
                member_name = zipfile.ZipInfo(f"{key}.npy")  # date_time: zip's fixed 1980-01-01, as for a name
                member_name.compress_type = zipfile.ZIP_STORED
            with archive.open(member_name, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def _one_string_per_line(terms: list[str]) -> str:
    """``json.dumps(terms, ensure_ascii=False, indent=0)``: ``[``, one string per line, ``]`` (``[]`` when empty),
    the same characters, written by the C encoder (an ``indent`` makes :mod:`json` encode in Python): 3 ms
    instead of 5 ms for the 26K terms of a sphinx snapshot's vocabulary."""
    if not terms:
        return "[]"
    return "[\n" + json.dumps(terms, ensure_ascii=False, separators=(",\n", ":"))[1:-1] + "\n]"


def _write_state_file(path: Path, value: Any) -> None:
    """Write one value of a :class:`~retrievers.base.RetrieverState` in the format its extension names.

    ``.npy``: a numpy array (``np.save``, no pickle); ``.npz``: a CSR/CSC matrix (:func:`save_npz`); ``.json``:
    a list of strings, one per line (a vocabulary, ``terms[j]`` is column ``j``); anything else: ``bytes``.

    :param path: target file.
    :param value: the value.
    :raises TypeError: if the value does not fit the extension.
    """
    suffix = path.suffix
    if suffix == ".npy" and isinstance(value, np.ndarray):
        np.save(path, value, allow_pickle=False)
    elif suffix == ".npz" and sp.issparse(value):
        save_npz(path, value)
    elif suffix == ".json" and isinstance(value, list) and set(map(type, value)) <= {str}:
        path.write_text(_one_string_per_line(value) + "\n", encoding="utf-8")
    elif suffix not in (".npy", ".npz", ".json") and isinstance(value, bytes):
        path.write_bytes(value)
    else:
        raise TypeError(f"{path.name}: cannot store a {type(value).__name__} in a {suffix or 'raw'} file")


def _read_state_file(path: Path) -> Any:
    """Read one file of a saved retriever back into the value :func:`_write_state_file` wrote.

    :param path: the file.
    :return: a numpy array, a sparse matrix, a list of strings or ``bytes``, by extension.
    :raises CorruptIndexError: naming the file if it is missing or cannot be parsed as its extension says.
    """
    if path.suffix == ".json":
        terms = read_json(path, list)
        if not all(isinstance(t, str) for t in terms):
            raise CorruptIndexError(path, "expected a JSON list of strings")
        return terms
    try:
        if path.suffix == ".npy":
            return np.load(path, allow_pickle=False)
        if path.suffix == ".npz":
            return sp.load_npz(path)
        return path.read_bytes()
    except FileNotFoundError:
        raise CorruptIndexError(path, "file is missing") from None
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        kind = {".npy": "a readable .npy array", ".npz": "a readable sparse .npz matrix"}.get(path.suffix, "readable")
        raise CorruptIndexError(path, f"not {kind} ({exc})") from None


# retriever.json --------------------------------------------------------------------------------------------------


def _read_meta(directory: Path) -> dict[str, Any]:
    """Read ``retriever.json`` and check its structure and format version (not the files it lists).

    :param directory: the retriever directory.
    :return: the metadata dict (``name``, ``format_version``, ``config``, ``n_docs``, ``files``, extras).
    :raises CorruptIndexError: naming the file, if the directory or JSON is missing or malformed, or the format
        version is not :data:`FORMAT_VERSION`.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise CorruptIndexError(directory, "index directory is missing")
    path = directory / META_FILE
    meta: dict[str, Any] = read_json(path)
    for key, typ in (("name", str), ("format_version", int), ("config", dict), ("n_docs", int), ("files", dict)):
        if not isinstance(meta.get(key), typ) or isinstance(meta.get(key), bool):
            raise CorruptIndexError(path, f"field {key!r} is missing or not a {typ.__name__}")
    if meta["format_version"] != FORMAT_VERSION:
        raise CorruptIndexError(path, f"format version {meta['format_version']}, this toolkit reads {FORMAT_VERSION}")
    if meta["n_docs"] < 0:
        raise CorruptIndexError(path, f"n_docs is negative ({meta['n_docs']})")
    return meta


def check_config(path: Path, got: Mapping[str, Any], want: Mapping[str, Any], expected: str) -> None:
    """Check that a retriever config is the expected one (after a JSON round trip: tuples become lists).

    :param path: the file the config comes from (for the message).
    :param got: the config found.
    :param want: the config expected.
    :param expected: which config ``want`` is, for the message, e.g. ``"the one <manifest> expects (edited by
        hand?)"``.
    :raises CorruptIndexError: naming ``path`` and every differing key, if the configs differ.
    """
    got, want = json.loads(json.dumps(got)), json.loads(json.dumps(want))
    if got != want:
        keys = sorted(set(got) | set(want), key=str)
        diff = ", ".join(f"{k}={got.get(k)!r} (expected {want.get(k)!r})" for k in keys if got.get(k) != want.get(k))
        raise CorruptIndexError(path, f"config differs from {expected}: {diff}")


def check_meta(
    directory: Path,
    source: str,
    name: str | None = None,
    config: Mapping[str, Any] | None = None,
    n_docs: int | None = None,
    meta_sha256: str | None = None,
    verify_files: bool = True,
) -> dict[str, Any]:
    """The one check that a saved retriever is the index a manifest or a composite expects.

    Checks :func:`_read_meta`, then each expectation given: the registry ``name``, the ``config`` (a hand-edited
    value such as BM25's ``k1`` would otherwise be used silently), ``n_docs``, the SHA-256 of ``retriever.json``
    itself, and (``verify_files``) every listed file's size and SHA-256 (:func:`check_files`).

    :param directory: the retriever directory.
    :param source: what holds the expectations, for messages (a manifest's path, a hybrid's ``retriever.json``).
    :param name: expected registry name, or ``None``.
    :param config: expected config, or ``None``.
    :param n_docs: expected number of chunks, or ``None``.
    :param meta_sha256: expected SHA-256 of ``retriever.json``, or ``None``.
    :param verify_files: also hash the listed files.
    :return: the ``retriever.json`` content.
    :raises CorruptIndexError: naming ``retriever.json`` (or the data file) and what differs.
    """
    directory = Path(directory)
    meta = _read_meta(directory)
    path = directory / META_FILE
    if name is not None and meta["name"] != name:
        raise CorruptIndexError(path, f"holds a {meta['name']!r} index, expected {name!r}")
    if config is not None:
        check_config(path, meta["config"], config, f"the one {source} expects (edited by hand?)")
    if n_docs is not None and meta["n_docs"] != n_docs:
        raise CorruptIndexError(path, f"n_docs is {meta['n_docs']}, {source} says {n_docs}")
    if meta_sha256 is not None and file_sha256(path) != meta_sha256:
        raise CorruptIndexError(path, f"SHA-256 differs from the one recorded in {source} (edited or rebuilt)")
    if verify_files:
        check_files(directory, meta["files"], path)
    return meta


# Saving and loading retrievers -------------------------------------------------------------------------------------


def _prepare_directory(directory: Path) -> Path:
    """Check that a save target exists, is a directory and is empty.

    :param directory: the target directory.
    :return: the directory as a :class:`~pathlib.Path`.
    :raises FileNotFoundError: if it does not exist.
    :raises ValueError: if it is not a directory or not empty.
    """
    directory = Path(directory)
    if not directory.exists():
        raise FileNotFoundError(f"{directory}: index directory does not exist (the caller creates it)")
    if not directory.is_dir():
        raise ValueError(f"{directory}: not a directory")
    if any(directory.iterdir()):
        raise ValueError(f"{directory}: index directory is not empty")
    return directory


def _link_parts(
    directory: Path, parts: Sequence[Retriever], part_dirs: Sequence[Path]
) -> tuple[int, list[dict[str, str]]]:
    """Check a composite's saved parts and make its links to them.

    :param directory: the composite's directory.
    :param parts: its parts.
    :param part_dirs: for each part, the directory :func:`save_retriever` wrote it into (same name and config).
    :return: ``(number of chunks of every part, [{"path": relative path, "meta_sha256": hex}, ...])``.
    :raises ValueError: if the number of directories differs from the number of parts, or the parts index
        different numbers of chunks.
    :raises CorruptIndexError: if a part directory is missing, malformed, or holds another retriever or config.
    """
    if len(part_dirs) != len(parts):
        raise ValueError(f"{len(part_dirs)} part directories for {len(parts)} parts")
    links: list[dict[str, str]] = []
    n_docs: set[int] = set()
    for i, (part, part_dir) in enumerate(zip(parts, part_dirs)):
        part_dir = Path(part_dir)
        meta = check_meta(part_dir, f"part {i} of the composite", part.name, part.config(), verify_files=False)
        n_docs.add(meta["n_docs"])
        links.append(
            {
                "path": Path(os.path.relpath(part_dir, directory)).as_posix(),
                "meta_sha256": file_sha256(part_dir / META_FILE),
            }
        )
    if len(n_docs) != 1:
        raise ValueError(f"the parts index different numbers of chunks: {sorted(n_docs)}")
    return n_docs.pop(), links


def save_retriever(retriever: Retriever, directory: Path, part_dirs: Sequence[Path] | None = None) -> None:
    """Write a built retriever into an existing, empty directory: its state files, then ``retriever.json``.

    A composite retriever's parts go into ``part0/``, ``part1/``, ... unless ``part_dirs`` names directories
    they were already saved into (same name and config): then ``retriever.json`` links to them instead (paths
    relative to ``directory``, so the two must keep their relative position, and each part's ``retriever.json``
    SHA-256), and ``n_docs`` is the parts'.

    :param retriever: the retriever.
    :param directory: the target directory; the caller makes the write atomic.
    :param part_dirs: for a composite, its parts' saved directories, or ``None`` to save the parts inside.
    :raises FileNotFoundError: if ``directory`` does not exist.
    :raises ValueError: if it is not empty, ``part_dirs`` is given for a retriever without parts, or (linking)
        the part directories do not fit the parts.
    :raises CorruptIndexError: if a part directory's ``retriever.json`` is missing, malformed or of another config.
    """
    directory = _prepare_directory(directory)
    parts = retriever.parts()
    state = retriever.state()
    extra = dict(state.extra)
    if part_dirs is not None:
        if not parts:
            raise ValueError(f"a {retriever.name} retriever has no parts to link")
        n_docs, extra["links"] = _link_parts(directory, parts, part_dirs)
    else:
        n_docs = retriever.n_docs
        for i, part in enumerate(parts):
            (directory / f"part{i}").mkdir()
            save_retriever(part, directory / f"part{i}")
    for fname, value in state.files.items():
        _write_state_file(directory / fname, value)
    meta: dict[str, Any] = {
        "name": retriever.name,
        "format_version": FORMAT_VERSION,
        "config": retriever.config(),
        "n_docs": int(n_docs),
        "files": file_records(directory, list(state.files)),
    }
    meta.update(extra)
    write_json(directory / META_FILE, meta)


def _part_dirs(directory: Path, meta: Mapping[str, Any], n_parts: int) -> list[Path]:
    """The directories of a saved composite's parts: its ``links``, checked, or else ``part<i>/``.

    :param directory: the composite's directory.
    :param meta: its checked ``retriever.json``.
    :param n_parts: the number of parts its config says it has.
    :return: the part directories, in order.
    :raises CorruptIndexError: if the links are malformed or of another count, or a linked part's
        ``retriever.json`` is missing or changed since the composite was linked to it (stale: rebuild it).
    """
    links = meta.get("links")
    if links is None:
        return [directory / f"part{i}" for i in range(n_parts)]
    meta_path = directory / META_FILE
    if not isinstance(links, list) or len(links) != n_parts:
        raise CorruptIndexError(meta_path, f"'links' must list one entry per part ({n_parts})")
    out = []
    for link in links:
        if (
            not isinstance(link, dict)
            or not isinstance(link.get("path"), str)
            or not isinstance(link.get("meta_sha256"), str)
        ):
            raise CorruptIndexError(meta_path, f"malformed link {link!r}")
        part_dir = Path(os.path.normpath(directory / link["path"]))
        check_meta(part_dir, str(meta_path), meta_sha256=link["meta_sha256"], verify_files=False)
        out.append(part_dir)
    return out


def load_retriever(directory: str | Path, model: str | None = None) -> Retriever:
    """Load a retriever written by :func:`save_retriever`, dispatching on the name in its ``retriever.json``.

    :param directory: the directory :func:`save_retriever` wrote.
    :param model: for embedding retrievers (``potion``, ``faiss``, a hybrid's embedding parts), the model to
        load the index with; ``None`` loads the recorded one (see :func:`retrievers.potion.model_for_index`).
        Ignored by retrievers without a model.
    :return: the retriever, ready to search.
    :raises CorruptIndexError: naming the file, if a file (of any part) is missing, truncated, edited or
        inconsistent, the JSON names an unknown retriever, or an embedding index was built with another model.
    :raises FileNotFoundError: if an embedding index's model is a path that does not exist.
    :raises ValueError: if an embedding index's model cannot be loaded.
    """
    directory = Path(directory)
    meta = _read_meta(directory)
    meta_path = directory / META_FILE
    cls = RETRIEVERS.get(meta["name"])
    if cls is None:
        raise CorruptIndexError(meta_path, f"unknown retriever {meta['name']!r}; valid: {', '.join(RETRIEVERS)}")
    check_files(directory, meta["files"], meta_path)
    try:
        n_parts = cls.part_count(meta["config"])
    except InvalidStateError as exc:
        raise CorruptIndexError(directory / (exc.file or META_FILE), exc.reason) from None
    parts = [load_retriever(part_dir, model) for part_dir in _part_dirs(directory, meta, n_parts)]
    state = RetrieverState(
        {fname: _read_state_file(directory / fname) for fname in meta["files"]},
        {k: v for k, v in meta.items() if k not in _META_KEYS},
    )
    try:
        return cls.from_state(meta["config"], meta["n_docs"], state, parts, model)
    except InvalidStateError as exc:
        raise CorruptIndexError(directory / (exc.file or META_FILE), exc.reason) from None
