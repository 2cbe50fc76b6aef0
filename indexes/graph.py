"""The symbol graph of one snapshot: its nodes, its typed CSR edges and its on-disk format.

The graph is built from the ``function`` chunker's chunks (:mod:`swe_explore.indexes.graph_build`, with the import
resolver of :mod:`swe_explore.indexes.graph_imports`), expanded from seed chunks
(:mod:`swe_explore.indexes.graph_expand`), saved next to the chunk table of an index
(:mod:`swe_explore.indexes.graph_store`), and turned into ranking features by
:mod:`swe_explore.explore.graph_features`.

**Nodes.** Chunk ``i`` of the chunk list is node ``i`` (``0 <= i < n_chunks``); file ``j`` of
:attr:`SymbolGraph.files` (sorted paths of the walked files and of the chunks) is node ``n_chunks + j``.

**Edges**, one typed relation each, stored as CSR adjacency (:class:`Csr`: ``indptr``/``indices`` int32 arrays,
every row sorted, no duplicates); how each is found is described in :mod:`swe_explore.indexes.graph_build`:

- ``defines`` (chunk -> symbol id, not a node): the qualified names a definition chunk carries;
- ``contains`` (node -> node): file -> its chunks, container -> members, a definition -> its other pieces;
- ``references`` (chunk -> chunk, "calls"): a chunk -> the definition sites of the names it uses;
- ``imports`` (file node -> file node): the snapshot files a file imports or includes.

**Persistence** (:meth:`SymbolGraph.save` / :meth:`SymbolGraph.load`): ``graph.json`` (format version,
counts, file paths, symbols, config, the chunk table's fingerprint and the shape of every array) and one
``.npy`` int32 array per CSR part (``contains.indptr.npy``, ...) plus ``chunk_file.npy``. No pickle; the same
input always gives the same bytes; every load error is a :class:`CorruptGraphError` naming the file.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from swe_explore.chunking.types import Chunk
from swe_explore.indexes.files import CorruptIndexError

__all__ = [
    "EDGE_TYPES",
    "FORMAT_VERSION",
    "GRAPH_JSON",
    "IDENTIFIER",
    "CorruptGraphError",
    "Csr",
    "SymbolGraph",
    "chunks_fingerprint",
    "name_of",
]

#: Version of the on-disk layout; :meth:`SymbolGraph.load` rejects another one.
FORMAT_VERSION = 1
#: The metadata file of a saved graph.
GRAPH_JSON = "graph.json"
#: Node -> node relations, in the order they are saved (``defines`` is chunk -> symbol and kept apart).
EDGE_TYPES: tuple[str, ...] = ("contains", "references", "imports")
#: An identifier of the ten languages, ASCII only (``$`` and non-ASCII letters are not part of names).
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class CorruptGraphError(CorruptIndexError):
    """A saved symbol graph file is missing, truncated, malformed or inconsistent with the others.

    A :class:`ValueError` (through :class:`retrievers.base.CorruptIndexError`) whose message starts with the
    file's path: ``"<path>: <reason>; rerun with --rebuild to rebuild it"``.
    """


# -- CSR adjacency ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Csr:
    """A sparse 0/1 relation in compressed sparse row form: row ``i`` is ``indices[indptr[i]:indptr[i + 1]]``.

    :param indptr: int32, shape ``(n_rows + 1,)``, ``indptr[0] == 0``, non-decreasing.
    :param indices: int32, shape ``(indptr[-1],)``, each row sorted ascending without duplicates.
    """

    indptr: np.ndarray
    indices: np.ndarray

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.indptr.shape[0]) - 1

    @property
    def n_edges(self) -> int:
        """Number of stored pairs."""
        return int(self.indices.shape[0])

    def row(self, i: int) -> np.ndarray:
        """The sorted column ids of row ``i`` (a view)."""
        return self.indices[self.indptr[i] : self.indptr[i + 1]]

    def degrees(self) -> np.ndarray:
        """Out-degree of every row, int64, shape ``(n_rows,)``."""
        return np.diff(self.indptr.astype(np.int64))

    @classmethod
    def from_pairs(cls, src: Sequence[int], dst: Sequence[int], n_rows: int, n_cols: int) -> Csr:
        """Build from ``(src[k], dst[k])`` pairs (any order, repeats allowed).

        :param src: row of every pair, ``0 <= src[k] < n_rows``.
        :param dst: column of every pair, ``0 <= dst[k] < n_cols``.
        :param n_rows: number of rows.
        :param n_cols: number of columns.
        :return: the relation, rows sorted and deduplicated.
        :raises ValueError: if ``src`` and ``dst`` differ in length or an id is out of range.
        """
        rows = np.asarray(src, dtype=np.int64)
        cols = np.asarray(dst, dtype=np.int64)
        if rows.shape != cols.shape:
            raise ValueError(f"{rows.size} sources but {cols.size} targets")
        if rows.size and (rows.min() < 0 or rows.max() >= n_rows or cols.min() < 0 or cols.max() >= n_cols):
            raise ValueError(f"a pair lies outside {n_rows} rows x {n_cols} columns")
        keys = np.unique(rows * max(n_cols, 1) + cols)
        rows, cols = keys // max(n_cols, 1), keys % max(n_cols, 1)
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
        return cls(indptr.astype(np.int32), cols.astype(np.int32))

    def transpose(self, n_cols: int) -> Csr:
        """The reverse relation: row ``j`` lists the rows ``i`` holding ``j`` (sorted).

        :param n_cols: number of columns of this relation (rows of the result).
        :return: the transposed relation.
        """
        src = np.repeat(np.arange(self.n_rows, dtype=np.int32), self.degrees())
        order = np.lexsort((src, self.indices))
        counts = np.bincount(self.indices, minlength=n_cols) if self.n_edges else np.zeros(n_cols, dtype=np.int64)
        indptr = np.zeros(n_cols + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return Csr(indptr.astype(np.int32), src[order].astype(np.int32))


# -- the graph ------------------------------------------------------------------------------------------------


def chunks_fingerprint(chunks: Sequence[Chunk]) -> str:
    """SHA-256 of the chunks' ``path, start, end, kind, symbol, language`` (text left out).

    The same formula as ``indexes.store.ChunkTable.fingerprint``, so a graph can be matched to a chunk table.

    :param chunks: chunks in index order.
    :return: 64 hex digits.
    """
    digest = hashlib.sha256()
    for c in chunks:
        digest.update(f"{c.path}\0{c.start}\0{c.end}\0{c.kind}\0{c.symbol}\0{c.language}\n".encode())
    return digest.hexdigest()


@functools.lru_cache(maxsize=1 << 16)
def name_of(symbol: str) -> str:
    """The **name** of a symbol: the last identifier of its last component (``Session.request`` -> ``request``;
    ``valid?`` -> ``valid``), ``""`` when it has none (``operator==`` gives ``operator``)."""
    last = symbol.rsplit(".", 1)[-1]
    found = IDENTIFIER.findall(last)
    return found[-1] if found else ""


@dataclass(eq=False)
class SymbolGraph:
    """The symbol graph of one snapshot (see the module docstring for nodes and edges).

    :param n_chunks: number of chunk nodes (``0..n_chunks-1``).
    :param files: sorted file paths; file ``j`` is node ``n_chunks + j``.
    :param chunk_file: int32, shape ``(n_chunks,)``: the file id (index into ``files``) of every chunk.
    :param symbols: sorted qualified symbol names.
    :param defines: chunk -> symbol ids, ``n_chunks`` rows.
    :param edges: :data:`EDGE_TYPES` name -> relation over all ``n_nodes`` nodes.
    :param fingerprint: :func:`chunks_fingerprint` of the chunks the graph was built from.
    :param config: build parameters (``max_definition_sites``, ``min_name_chars``, ``stop_names_sha256``).
    """

    n_chunks: int
    files: list[str]
    chunk_file: np.ndarray
    symbols: list[str]
    defines: Csr
    edges: dict[str, Csr]
    fingerprint: str
    config: dict[str, Any]
    _reverse: dict[str, Csr] = field(default_factory=dict, init=False, repr=False)
    _import_reach: dict[int, list[int]] = field(default_factory=dict, init=False, repr=False)
    _name_sites: dict[str, int] | None = field(default=None, init=False, repr=False)

    @property
    def n_files(self) -> int:
        """Number of file nodes."""
        return len(self.files)

    @property
    def n_nodes(self) -> int:
        """Number of nodes: chunks plus files."""
        return self.n_chunks + len(self.files)

    def file_node(self, path: str) -> int:
        """The node id of a file.

        :param path: repo-relative POSIX path.
        :return: ``n_chunks + j`` for ``files[j] == path``.
        :raises KeyError: if the path is not a node.
        """
        j = bisect.bisect_left(self.files, path)
        if j >= len(self.files) or self.files[j] != path:
            raise KeyError(f"{path}: not a file of the graph")
        return self.n_chunks + j

    def reverse(self, edge_type: str) -> Csr:
        """The reverse of one relation (computed once, then cached; never saved).

        :param edge_type: a name of :data:`EDGE_TYPES`.
        :return: the transposed relation over all nodes.
        :raises KeyError: for an unknown edge type.
        """
        if edge_type not in self._reverse:
            self._reverse[edge_type] = self.edges[edge_type].transpose(self.n_nodes)
        return self._reverse[edge_type]

    def import_reach(self, fid: int) -> list[int]:
        """Chunks of the files that file ``fid`` imports and that a chunk of file ``fid`` references (computed
        once per file, then cached; ascending ids).

        :param fid: a file id (index into :attr:`files`).
        :return: chunk ids.
        """
        cached = self._import_reach.get(fid)
        if cached is not None:
            return cached
        n = self.n_chunks
        imported = self.edges["imports"].row(n + fid) - n
        out: list[int] = []
        if imported.size:
            own = self.edges["contains"].row(n + fid)
            refs = self.edges["references"]
            rows = [refs.row(int(c)) for c in own]
            if rows:
                targets = np.unique(np.concatenate(rows))
                out = targets[np.isin(self.chunk_file[targets], imported)].tolist()
        self._import_reach[fid] = out
        return out

    def name_sites(self, name: str) -> int:
        """Definition sites (first defining chunk per file) of the symbols whose :func:`name_of` is ``name``
        (all names counted once per graph, then cached).

        :param name: a symbol name; ``""`` gives 0.
        :return: the number of sites.
        """
        if self._name_sites is None:
            counts: dict[str, int] = {}
            rows = np.repeat(np.arange(self.n_chunks, dtype=np.int64), self.defines.degrees())
            pairs = np.unique(np.stack([self.chunk_file[rows].astype(np.int64), self.defines.indices]), axis=1)
            for sid in pairs[1].tolist():
                key = name_of(self.symbols[sid])
                counts[key] = counts.get(key, 0) + 1
            self._name_sites = counts
        return self._name_sites.get(name, 0) if name else 0

    def counts(self) -> dict[str, int]:
        """Node and edge counts: ``chunks``, ``files``, ``nodes``, ``symbols``, ``defines`` and every edge type.

        ``contains`` is split into ``contains_file`` (file -> chunk) and ``contains_chunk`` (chunk -> chunk).
        """
        contains = self.edges["contains"]
        file_part = int(contains.indptr[-1] - contains.indptr[self.n_chunks])
        out = {
            "chunks": self.n_chunks,
            "files": len(self.files),
            "nodes": self.n_nodes,
            "symbols": len(self.symbols),
            "defines": self.defines.n_edges,
            "contains_chunk": contains.n_edges - file_part,
            "contains_file": file_part,
        }
        for name in EDGE_TYPES[1:]:
            out[name] = self.edges[name].n_edges
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SymbolGraph):
            return NotImplemented
        if (self.n_chunks, self.files, self.symbols, self.fingerprint, self.config) != (
            other.n_chunks,
            other.files,
            other.symbols,
            other.fingerprint,
            other.config,
        ):
            return False
        pairs = [(self.chunk_file, other.chunk_file), (self.defines.indptr, other.defines.indptr)]
        pairs.append((self.defines.indices, other.defines.indices))
        if set(self.edges) != set(other.edges):
            return False
        for name in self.edges:
            pairs += [(self.edges[name].indptr, other.edges[name].indptr)]
            pairs += [(self.edges[name].indices, other.edges[name].indices)]
        return all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in pairs)

    __hash__ = None  # type: ignore[assignment]

    # -- persistence ------------------------------------------------------------------------------------------

    def _arrays(self) -> dict[str, np.ndarray]:
        """File name -> array of everything saved besides ``graph.json`` (fixed order)."""
        out = {"chunk_file.npy": self.chunk_file}
        for name, csr in [("defines", self.defines)] + [(n, self.edges[n]) for n in EDGE_TYPES]:
            out[f"{name}.indptr.npy"] = csr.indptr
            out[f"{name}.indices.npy"] = csr.indices
        return out

    def save(self, directory: str | Path) -> list[Path]:
        """Write the graph into ``directory`` (created if missing): ``graph.json`` and int32 ``.npy`` arrays.

        The same graph always gives the same bytes (JSON with sorted keys, arrays without pickle, fixed names).
        The caller makes the write atomic (as ``indexes.store.atomic_directory`` does for indexes).

        :param directory: target directory.
        :return: the paths written, ``graph.json`` last.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        arrays = self._arrays()
        written = []
        for name, arr in arrays.items():
            path = directory / name
            with open(path, "wb") as handle:
                np.lib.format.write_array(handle, np.ascontiguousarray(arr, dtype=np.int32), allow_pickle=False)
            written.append(path)
        meta = {
            "format_version": FORMAT_VERSION,
            "n_chunks": self.n_chunks,
            "files": self.files,
            "symbols": self.symbols,
            "edge_types": list(EDGE_TYPES),
            "fingerprint": self.fingerprint,
            "config": self.config,
            "counts": self.counts(),
            "arrays": {name: int(arr.shape[0]) for name, arr in arrays.items()},
        }
        path = directory / GRAPH_JSON
        path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
        return written

    @classmethod
    def load(cls, directory: str | Path) -> SymbolGraph:
        """Read a graph written by :meth:`save`, checking every file against ``graph.json`` and the CSR rules.

        :param directory: the directory :meth:`save` wrote.
        :return: the graph.
        :raises CorruptGraphError: naming the file when ``graph.json`` or an array is missing, truncated, not
            JSON/``.npy``, of another format version, dtype or length, or breaks the CSR rules (``indptr``
            starting at 0 and non-decreasing, ``indices`` in range and sorted per row).
        """
        directory = Path(directory)
        meta_path = directory / GRAPH_JSON
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CorruptGraphError(meta_path, "file is missing") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CorruptGraphError(meta_path, f"unreadable JSON ({exc})") from None
        if not isinstance(meta, dict):
            raise CorruptGraphError(meta_path, "expected a JSON object")
        for key, typ in (
            ("format_version", int),
            ("n_chunks", int),
            ("files", list),
            ("symbols", list),
            ("edge_types", list),
            ("fingerprint", str),
            ("config", dict),
            ("arrays", dict),
        ):
            if not isinstance(meta.get(key), typ) or isinstance(meta.get(key), bool):
                raise CorruptGraphError(meta_path, f"field {key!r} is missing or not a {typ.__name__}")
        if meta["format_version"] != FORMAT_VERSION:
            raise CorruptGraphError(meta_path, f"format version {meta['format_version']}, expected {FORMAT_VERSION}")
        if meta["edge_types"] != list(EDGE_TYPES):
            raise CorruptGraphError(meta_path, f"edge types {meta['edge_types']}, expected {list(EDGE_TYPES)}")
        files, symbols = meta["files"], meta["symbols"]
        for key, values in (("files", files), ("symbols", symbols)):
            if not all(isinstance(v, str) for v in values) or values != sorted(set(values)):
                raise CorruptGraphError(meta_path, f"{key!r} must be sorted distinct strings")
        n_chunks = meta["n_chunks"]
        if n_chunks < 0:
            raise CorruptGraphError(meta_path, f"n_chunks is negative ({n_chunks})")
        n_nodes = n_chunks + len(files)

        def array(name: str) -> np.ndarray:
            path = directory / name
            try:
                arr: np.ndarray = np.load(path, allow_pickle=False)
            except FileNotFoundError:
                raise CorruptGraphError(path, "file is missing") from None
            except (OSError, ValueError, EOFError) as exc:
                raise CorruptGraphError(path, f"not a readable .npy array ({exc})") from None
            if arr.dtype != np.int32 or arr.ndim != 1:
                raise CorruptGraphError(path, f"{arr.dtype} array of {arr.ndim} dimensions, expected 1-D int32")
            recorded = meta["arrays"].get(name)
            if recorded != arr.shape[0]:
                raise CorruptGraphError(path, f"{arr.shape[0]} values, {meta_path.name} records {recorded}")
            return arr

        def csr(name: str, n_rows: int, n_cols: int) -> Csr:
            indptr, indices = array(f"{name}.indptr.npy"), array(f"{name}.indices.npy")
            if indptr.shape[0] != n_rows + 1 or indptr[0] != 0 or (np.diff(indptr) < 0).any():
                raise CorruptGraphError(
                    directory / f"{name}.indptr.npy", f"not a row pointer of {n_rows} rows starting at 0"
                )
            if indptr[-1] != indices.shape[0]:
                raise CorruptGraphError(
                    directory / f"{name}.indices.npy", f"{indices.shape[0]} values, indptr ends at {indptr[-1]}"
                )
            if indices.shape[0]:
                step = np.diff(indices.astype(np.int64))
                row_starts = np.zeros(indices.shape[0], dtype=bool)
                row_starts[indptr[:-1][indptr[:-1] < indices.shape[0]]] = True
                if indices.min() < 0 or indices.max() >= n_cols or ((step <= 0) & ~row_starts[1:]).any():
                    raise CorruptGraphError(
                        directory / f"{name}.indices.npy", f"ids outside 0..{n_cols - 1} or a row not sorted"
                    )
            return Csr(indptr, indices)

        chunk_file = array("chunk_file.npy")
        if chunk_file.shape[0] != n_chunks or (n_chunks and (chunk_file.min() < 0 or chunk_file.max() >= len(files))):
            raise CorruptGraphError(directory / "chunk_file.npy", f"not {n_chunks} file ids below {len(files)}")
        defines = csr("defines", n_chunks, len(symbols))
        edges = {name: csr(name, n_nodes, n_nodes) for name in EDGE_TYPES}
        return cls(n_chunks, files, chunk_file, symbols, defines, edges, meta["fingerprint"], meta["config"])
