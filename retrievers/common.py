"""Helpers shared by the retrievers: the text a chunk is indexed by, top-n selection, and index persistence.

Persistence layout of one retriever directory (written by ``Retriever.save``)::

    retriever.json   {"name", "format_version", "config", "n_docs", "files": {file: {"bytes", "sha256"}}, ...}
    <arrays>         .npy / .npz / .faiss / vocabulary .json files listed under "files"

:func:`read_meta` checks the JSON and every listed file's size and SHA-256 before anything is parsed, so a
missing, truncated or hand-edited file gives :class:`~retrievers.base.CorruptIndexError` naming that file,
never a traceback from deep inside numpy, scipy or faiss. No file is ever pickled.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.base import CorruptIndexError, Hit

__all__ = [
    "DEFAULT_FIELDS",
    "FIELDS",
    "FORMAT_VERSION",
    "META_FILE",
    "document_text",
    "check_fields",
    "top_hits",
    "check_top_n",
    "prepare_directory",
    "file_sha256",
    "file_records",
    "check_files",
    "write_meta",
    "read_meta",
    "load_npy",
    "save_npz",
    "load_npz",
    "load_json",
    "write_terms",
    "read_terms",
]

#: Version of the on-disk layout written by every retriever of this package; bumped on incompatible changes.
FORMAT_VERSION = 1
#: Name of the JSON file that describes a saved retriever.
META_FILE = "retriever.json"
#: Chunk fields that may make up a chunk's document text.
FIELDS = ("path", "symbol", "text")
#: Default document text: path, symbol and text (measured best on the dev set, see ``docs/retrievers.md``).
DEFAULT_FIELDS: tuple[str, ...] = ("path", "symbol", "text")


def check_fields(fields: Sequence[str]) -> tuple[str, ...]:
    """Validate a ``fields`` option.

    :param fields: chunk field names, a non-empty subset of :data:`FIELDS` without repeats.
    :return: the fields as a tuple.
    :raises ValueError: for an empty list, a repeat or an unknown field.
    """
    if isinstance(fields, str):
        fields = (fields,)
    out = tuple(fields)
    if not out or len(set(out)) != len(out) or any(f not in FIELDS for f in out):
        raise ValueError(f"fields must be a non-empty list of distinct names from {list(FIELDS)}, got {list(out)}")
    return out


def document_text(chunk: Chunk, fields: Sequence[str] = DEFAULT_FIELDS) -> str:
    """The text a retriever indexes for a chunk: the chosen fields joined by newlines.

    The path and symbol name matter because issues name files, classes and functions: with the default fields
    ``Chunk("xarray/core/dataset.py", 1, 2, symbol="Dataset.to_dict", text="...")`` is indexed as
    ``"xarray/core/dataset.py\\nDataset.to_dict\\n..."``. Empty fields are skipped.

    :param chunk: the chunk.
    :param fields: chunk attributes to use, in order (a subset of :data:`FIELDS`).
    :return: the document text.
    """
    return "\n".join(v for v in (getattr(chunk, f) for f in fields) if v)


def check_top_n(top_n: int) -> None:
    """Validate the ``top_n`` argument of ``Retriever.search``.

    :param top_n: requested number of hits.
    :raises ValueError: if ``top_n`` is not an integer ``>= 1``.
    """
    if isinstance(top_n, bool) or not isinstance(top_n, (int, np.integer)) or top_n < 1:
        raise ValueError(f"top_n must be an integer >= 1, got {top_n!r}")


def top_hits(scores: np.ndarray, top_n: int) -> list[Hit]:
    """The ``top_n`` best positive scores, best first, ties broken by lower index (the retriever contract).

    Runs in ``O(n + m log m)`` for ``n`` scores and ``m`` kept candidates (``np.argpartition`` first). NaN and
    scores ``<= 0`` are never returned.

    :param scores: one score per chunk, shape ``(n_docs,)``.
    :param top_n: maximum number of hits (``>= 1``).
    :return: the hits.
    :raises ValueError: if ``top_n < 1``.
    """
    check_top_n(top_n)
    scores = np.asarray(scores)
    idx = np.flatnonzero(scores > 0)
    if idx.size > top_n:
        vals = scores[idx]
        kth = np.partition(vals, idx.size - top_n)[idx.size - top_n]  # the top_n-th largest value
        idx = idx[vals >= kth]
    order = np.lexsort((idx, -scores[idx]))[:top_n]
    return [Hit(int(i), float(scores[i])) for i in idx[order]]


def prepare_directory(directory: Path) -> Path:
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
        if not isinstance(info, dict) or not isinstance(info.get("bytes"), int) or not isinstance(
            info.get("sha256"), str
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


def write_meta(
    directory: Path,
    name: str,
    config: dict[str, Any],
    n_docs: int,
    files: Sequence[str],
    extra: dict[str, Any] | None = None,
) -> None:
    """Write ``retriever.json`` after the data files, recording each file's size and SHA-256.

    :param directory: the retriever directory, holding ``files`` already.
    :param name: the retriever's registry name.
    :param config: its JSON config (``Retriever.config()``).
    :param n_docs: number of chunks indexed.
    :param files: data file names (relative to ``directory``) to record.
    :param extra: more JSON fields (e.g. the model fingerprint).
    """
    directory = Path(directory)
    meta: dict[str, Any] = {
        "name": name,
        "format_version": FORMAT_VERSION,
        "config": config,
        "n_docs": int(n_docs),
        "files": file_records(directory, files),
    }
    if extra:
        meta.update(extra)
    (directory / META_FILE).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def load_json(path: Path) -> Any:
    """Read a JSON file of an index.

    :param path: the file.
    :return: the parsed value.
    :raises CorruptIndexError: if it is missing, unreadable or not valid JSON.
    """
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorruptIndexError(path, "file is missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptIndexError(path, f"not readable JSON ({exc})") from None


def read_meta(directory: Path, expected_name: str | None = None, verify: bool = True) -> dict[str, Any]:
    """Read and check ``retriever.json`` and the files it lists.

    :param directory: the retriever directory.
    :param expected_name: the registry name the caller expects, or ``None`` to accept any.
    :param verify: check every listed file's size and SHA-256.
    :return: the metadata dict (``name``, ``format_version``, ``config``, ``n_docs``, ``files``, extras).
    :raises CorruptIndexError: naming the file, if the directory or JSON is missing or malformed, the format
        version is not :data:`FORMAT_VERSION`, the name differs from ``expected_name``, or a listed file is
        missing, truncated or edited.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise CorruptIndexError(directory, "index directory is missing")
    path = directory / META_FILE
    meta = load_json(path)
    if not isinstance(meta, dict):
        raise CorruptIndexError(path, "expected a JSON object")
    for key, typ in (("name", str), ("format_version", int), ("config", dict), ("n_docs", int), ("files", dict)):
        if not isinstance(meta.get(key), typ) or isinstance(meta.get(key), bool):
            raise CorruptIndexError(path, f"field {key!r} is missing or not a {typ.__name__}")
    if meta["format_version"] != FORMAT_VERSION:
        raise CorruptIndexError(
            path, f"format version {meta['format_version']}, this toolkit reads {FORMAT_VERSION}"
        )
    if expected_name is not None and meta["name"] != expected_name:
        raise CorruptIndexError(path, f"holds a {meta['name']!r} index, expected {expected_name!r}")
    if meta["n_docs"] < 0:
        raise CorruptIndexError(path, f"n_docs is negative ({meta['n_docs']})")
    if verify:
        check_files(directory, meta["files"], path)
    return meta


def load_npy(path: Path, dtype: np.dtype | type | None = None, ndim: int | None = None) -> np.ndarray:
    """Load a ``.npy`` array without pickle, checking dtype and rank.

    :param path: the file.
    :param dtype: required dtype, or ``None``.
    :param ndim: required number of dimensions, or ``None``.
    :return: the array.
    :raises CorruptIndexError: if it is missing, unreadable, or has another dtype or rank.
    """
    try:
        arr = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise CorruptIndexError(path, "file is missing") from None
    except (OSError, ValueError, EOFError) as exc:
        raise CorruptIndexError(path, f"not a readable .npy array ({exc})") from None
    if dtype is not None and arr.dtype != np.dtype(dtype):
        raise CorruptIndexError(path, f"dtype {arr.dtype}, expected {np.dtype(dtype)}")
    if ndim is not None and arr.ndim != ndim:
        raise CorruptIndexError(path, f"{arr.ndim} dimensions, expected {ndim}")
    return arr


def save_npz(path: Path, matrix: sp.spmatrix) -> None:
    """Save a CSR/CSC matrix in :func:`scipy.sparse.save_npz`'s layout, deflated at level 1, byte-deterministic.

    ``scipy.sparse.save_npz(compressed=True)`` deflates at zlib's default level 6; level 1 writes the 7,300 x
    18,000 TF-IDF matrix of pydata__xarray-7393 in 0.06 s instead of 0.11 s for a file 2% larger (the BM25 term
    counts: 0.015 s instead of 0.075 s, 0.56 MB instead of 0.46 MB). The archive members carry zip's fixed
    1980-01-01 timestamp, so the same matrix always gives the same bytes. :func:`load_npz` (and scipy) read it.

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
            with archive.open(f"{key}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


def load_npz(path: Path) -> sp.spmatrix:
    """Load a scipy sparse matrix saved with :func:`scipy.sparse.save_npz` (no pickle).

    :param path: the file.
    :return: the matrix, in the format it was saved in (CSR, CSC, ...).
    :raises CorruptIndexError: if it is missing or unreadable.
    """
    try:
        return sp.load_npz(path)
    except FileNotFoundError:
        raise CorruptIndexError(path, "file is missing") from None
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise CorruptIndexError(path, f"not a readable sparse .npz matrix ({exc})") from None


def write_terms(path: Path, terms: Sequence[str]) -> None:
    """Write a vocabulary as a JSON list of terms in column order, one term per line.

    :param path: target file.
    :param terms: the terms; ``terms[j]`` is column ``j``.
    """
    body = ",\n".join(json.dumps(t, ensure_ascii=False) for t in terms)
    Path(path).write_text("[\n" + body + "\n]\n" if terms else "[]\n", encoding="utf-8")


def read_terms(path: Path) -> dict[str, int]:
    """Read a vocabulary written by :func:`write_terms`.

    :param path: the file.
    :return: term -> column.
    :raises CorruptIndexError: if the file is missing, not a JSON list of strings, or repeats a term.
    """
    terms = load_json(path)
    if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
        raise CorruptIndexError(path, "expected a JSON list of terms")
    vocab = {t: j for j, t in enumerate(terms)}
    if len(vocab) != len(terms):
        raise CorruptIndexError(path, f"{len(terms) - len(vocab)} repeated term(s)")
    return vocab
