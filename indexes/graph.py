"""A symbol graph per snapshot, built from the ``function`` chunker's chunks, persisted, and expanded from seeds.

**Nodes.** Chunk ``i`` of the chunk list is node ``i`` (``0 <= i < n_chunks``); file ``j`` of
:attr:`SymbolGraph.files` (sorted paths of the walked files and of the chunks) is node ``n_chunks + j``.

**Edges**, one typed relation each, stored as CSR adjacency (``indptr``/``indices`` int32 arrays, every row
sorted, no duplicates):

- ``defines`` (chunk -> symbol id, not a node): the qualified names of :attr:`Chunk.symbol` of a chunk of a
  definition kind (:data:`chunking.treesitter.DEFINITION_KINDS`: ``function``, ``method``, ``class``, ``header``,
  ``definition``). A symbol string such as ``"a, Circle.area"`` (definitions merged on one line) names two
  symbols. A **definition site** of a symbol is the first chunk of that kind carrying it in a file (pieces of a
  definition split at ``max_lines`` carry the same symbol; the first piece holds the signature), so a symbol
  defined in two files has two sites. The **name** of a symbol is its last component (``request`` for
  ``Session.request``; for names such as Ruby's ``valid?`` the last identifier in it).
- ``contains`` (node -> node): file -> each of its chunks; a container's site (class/impl/module header) -> the
  site of each symbol one level below it (``Session`` -> ``Session.request``), looked up in the same file, else
  the same directory (Go methods in another file of the package), else the one site of that symbol in the
  snapshot (C++ ``Circle::area`` defined in a ``.cpp`` beside its header), else none; a site -> the other
  chunks carrying its symbol in the same file (the pieces of a split definition, a class's ``gap`` chunks).
- ``references`` (chunk -> chunk, "calls"): every identifier (:data:`IDENTIFIER`) of a code chunk's text, comments
  and string literals blanked first (:func:`code_text`), that is the name of a definition site elsewhere in the
  snapshot links the chunk to those sites. Names are ignored when they have more than
  :data:`MAX_DEFINITION_SITES` (8) sites (``__init__``, ``run``: too ambiguous to resolve without types), are
  in :data:`STOP_NAMES` (keywords, builtins and the methods of builtin containers: ``get`` defined once in a
  snapshot would otherwise attract every ``dict.get`` call), are dunder names (``__eq__``, called implicitly)
  or have fewer than :data:`MIN_NAME_CHARS` characters. A chunk's own names are not references from it (a
  ``def request`` line does not call every other ``request``). A **method** site (chunk kind ``method``) is
  linked only when the name also follows a member access (``.request``; ``->``/``::`` too in PHP, Rust, Ruby, C
  and C++), except in Java, C++ and Ruby where methods are called bare inside their class
  (:data:`IMPLICIT_RECEIVER_LANGUAGES`): a parameter named ``request`` does not call ``Session.request``.
  **Local preference**: when some of a name's sites are *visible* from the chunk's file (the file itself, the
  files it imports, and for Go the files of its package directory) only those are linked, else all of them.
  Chunks of docs/config files (language ``text``) and chunks without text (reloaded from a persisted table)
  have no outgoing references. Resolution is by name only, so a variable named like a definition elsewhere
  links to it (pytest fixtures such as ``linter`` or ``array`` collect hundreds of callers); the
  ``n_callers`` and ``name_sites`` features let a ranker discount such hubs.
- ``imports`` (file node -> file node): the snapshot files a file imports or includes, found by one regex per
  language over the file's text and resolved against the snapshot's paths (:func:`import_targets`; an import of
  something outside the snapshot, such as the standard library, yields no edge):

  ======================  ====================================================================================
  Python                  ``import a.b`` / ``from a.b import c`` (``c`` too when it is a module) / ``from ..x
                          import y``: relative imports against the importer's package; absolute ones by the
                          longest dotted-path match ``<prefix>/a/b.py`` or ``<prefix>/a/b/__init__.py`` whose
                          prefix is the snapshot root or a directory holding no Python file itself (``src/``),
                          or the importer's own directory when it has no ``__init__.py`` (scripts, tests).
                          So ``import logging`` does not link to ``pylint/checkers/logging.py``.
  Go                      ``import "m/x/y"`` (single or grouped): the non-test ``.go`` files of directory
                          ``<dir of go.mod>/x/y`` for the longest module path ``m`` of a ``go.mod`` in the
                          snapshot; without a matching ``go.mod``, the directory whose path is the longest
                          suffix of the import path (standard-library paths, whose first component has no dot,
                          only when a whole-path match exists).
  JavaScript/TypeScript   relative specifiers of ``import ... from './x'``, ``export ... from``, ``import('./x')``,
                          ``require('./x')``: the file itself, with one of the script extensions, or its
                          ``index`` file (``./x.js`` also finds ``x.ts``).
  Rust                    ``use crate::a::b::C`` (and ``self::``/``super::``, brace groups expanded): the longest
                          prefix that is a module file ``a/b.rs`` or ``a/b/mod.rs`` under the crate root (the
                          nearest directory above with ``lib.rs`` or ``main.rs``); ``mod x;`` -> ``x.rs`` or
                          ``x/mod.rs`` in the module's directory.
  Java                    ``import a.b.C;`` -> a file ending in ``a/b/C.java``; ``import a.b.*;`` -> the
                          ``.java`` files of a directory ending in ``a/b``; ``import static a.b.C.m;`` ->
                          ``a/b/C.java``.
  PHP                     ``use A\\B\\C;`` (groups ``use A\\{B, C}`` too) -> the file whose path ends with the
                          longest suffix of ``A/B/C.php``; ``require``/``include`` (``_once``) of a ``.php``
                          string literal (``__DIR__ . '/x.php'`` too) relative to the importer, else by suffix.
  Ruby                    ``require_relative 'x'`` -> ``x.rb`` beside the importer; ``require 'a/b'`` -> a file
                          ``<prefix>/a/b.rb`` whose prefix is the root or ends in ``lib``, ``test`` or ``spec``.
  C/C++                   ``#include "x.h"`` -> relative to the importer, else the file whose path ends with
                          ``x.h``; ``#include <a/x.h>`` (with a directory) by suffix only.
  ======================  ====================================================================================

  When a suffix match finds several files, those sharing the longest directory prefix with the importer are
  kept (all of them on a tie).

**Identifiers.** A regex over the chunk text (:data:`IDENTIFIER`, ASCII identifiers) after a regex blanking of
comments and strings (:func:`code_text`), rather than a second tree-sitter parse. Measured with
``scripts/bench_graph.py --compare-treesitter`` against a graph built from text whose comment and string nodes
were blanked in the parse tree: the reference edges are the same on psf__requests-1142 (698 edges), differ by 2
of 12,344 on pylint-dev__pylint-7080 and by 431 of 28,441 (1.5 %: pieces of split definitions that start inside
a docstring) on pydata__xarray-7393, none missing from the regex graph; the parse and masking alone cost 3-9x
the whole graph build. Without the blanking, 19 %, 46 % and 18 % of the reference edges of these snapshots came
from comments and strings only (pylint's ``# pylint: disable=...`` comments linked a thousand chunks to every
``disable`` method).

**Speed** (``scripts/bench_graph.py``: walk + ``function`` chunks + BM25 build against :func:`build_graph`, in
one process, alternating, median of 3 rounds, on a machine shared with other jobs): the graph costs 0.04
(psf__requests-1142: 0.04 s), 0.19 (pylint-dev__pylint-7080: 0.59 s for 11,678 chunks and 2,918 files) and 0.19
(pydata__xarray-7393: 0.39 s for 7,298 chunks and 160K lines) of the index build time; the budget is 0.30.
About half of it is reading identifiers (the regex findall); :func:`expand` from 10 seeds takes 1-7 ms.

**Expansion** (:func:`expand`): breadth-first search from seed chunks along four *directions*, each on its own
(a path never mixes directions): ``callee`` (reference edges forward: what the seed uses), ``caller``
(reference edges backward: what uses the seed), ``contain`` (``contains`` edges between chunks, both ways:
class <-> members, so siblings are two hops apart) and ``import`` (from a chunk of file F to the chunks of the
files F imports that some chunk of F references). Every reached chunk gets its hop distance per direction and
the smallest; :func:`graph_features` turns them into ranking features (:data:`FEATURE_NAMES`).

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
import math
import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from swe_explore.chunking.languages import TEXT
from swe_explore.chunking.treesitter import DEFINITION_KINDS
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.indexes.files import CorruptIndexError

__all__ = [
    "DIRECTIONS",
    "DOT_ACCESS",
    "EDGE_TYPES",
    "FEATURE_NAMES",
    "FORMAT_VERSION",
    "GRAPH_JSON",
    "IDENTIFIER",
    "IMPLICIT_RECEIVER_LANGUAGES",
    "MAX_DEFINITION_SITES",
    "MEMBER_ACCESS",
    "MIN_NAME_CHARS",
    "STOP_NAMES",
    "CorruptGraphError",
    "Csr",
    "ExpansionInfo",
    "SymbolGraph",
    "build_graph",
    "chunks_fingerprint",
    "expand",
    "graph_features",
    "import_targets",
]

#: Version of the on-disk layout; :meth:`SymbolGraph.load` rejects another one.
FORMAT_VERSION = 1
#: The metadata file of a saved graph.
GRAPH_JSON = "graph.json"
#: Node -> node relations, in the order they are saved (``defines`` is chunk -> symbol and kept apart).
EDGE_TYPES: tuple[str, ...] = ("contains", "references", "imports")
#: Expansion directions of :func:`expand`, in the order they are tried within one hop.
DIRECTIONS: tuple[str, ...] = ("callee", "caller", "contain", "import")

#: Names with more definition sites than this are not linked (too ambiguous to resolve without types).
MAX_DEFINITION_SITES = 8
#: Names shorter than this many characters are not linked (``x``, ``np``, ``eq``).
MIN_NAME_CHARS = 3
#: An identifier of the ten languages, ASCII only (``$`` and non-ASCII letters are not part of names).
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: A member access ``.name`` (Python, JavaScript, TypeScript, Go, Java); :data:`MEMBER_ACCESS` adds ``->`` and
#: ``::`` for PHP, Rust, Ruby, C and C++.
DOT_ACCESS = re.compile(r"\.[ \t]*([A-Za-z_][A-Za-z0-9_]*)")
MEMBER_ACCESS = re.compile(r"(?:\.|->|::)[ \t]*([A-Za-z_][A-Za-z0-9_]*)")
#: Languages where a method is called by its bare name inside its class (implicit ``this``/``self``), so a bare
#: identifier may reference a method.
IMPLICIT_RECEIVER_LANGUAGES = frozenset({"java", "cpp", "ruby"})

_KEYWORDS = """
and as assert async await break case catch class const continue def default del delete do elif else enum
except export extends false final finally fn for from func function global go goto if impl implements import in
instanceof interface is lambda let loop match mod module mut namespace new nil none nonlocal not null or package
pass private protected pub public raise return static struct super switch this throw throws trait true try type
typeof union unless until use var void when where while with yield self cls begin end ensure rescue then elsif
require require_once include include_once echo defer select chan range map fallthrough
"""
_BUILTINS = """
abs all any ascii bool bytes callable chr dict dir divmod enumerate eval exec filter float format frozenset
getattr globals hasattr hash help hex int isinstance issubclass iter len list locals max min next object oct open
ord pow print property repr reversed round set setattr slice sorted staticmethod classmethod str sum tuple vars zip
None True False Exception ValueError TypeError KeyError IndexError AttributeError RuntimeError NotImplementedError
NotImplemented OSError IOError StopIteration Warning DeprecationWarning UserWarning
Array Boolean Date Error Function JSON Map Math Number Object Promise RegExp Set String Symbol console document
window undefined arguments prototype constructor length toString valueOf then catch finally push pop shift
unshift slice splice concat indexOf includes forEach reduce some every keys values entries assign create bind
call apply log warn error debug info string number boolean any unknown never void Record Partial
append cap close complex copy delete imag make panic real recover len nil error Error String Len Less Swap
System Integer Long Double Float Character Byte Short List ArrayList HashMap Override hashCode equals size
isEmpty contains containsKey remove clear addAll iterator stream collect
puts attr_accessor attr_reader attr_writer include extend raise initialize each to_s to_h to_a inspect
malloc free memcpy memset strlen sizeof printf fprintf sprintf main
"""
_COMMON_METHODS = """
get set add update items copy pop insert extend join split strip lstrip rstrip replace startswith endswith lower
upper find index count sort read write readline readlines flush seek tell encode decode setdefault
popitem discard union intersection difference issubset issuperset
name value key data type id args kwargs self other result init run test setUp tearDown setup teardown
"""
#: Names never linked: keywords of the ten languages, common builtins and builtin-container methods (a snapshot
#: that defines its own ``get`` would otherwise receive every ``dict.get`` call).
STOP_NAMES: frozenset[str] = frozenset((_KEYWORDS + _BUILTINS + _COMMON_METHODS).split())

_CODE_LANGUAGES_WITH_PACKAGE_DIRS = frozenset({"go"})
"""Languages whose files see the definitions of the other files of their directory without importing them."""


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
                arr = np.load(path, allow_pickle=False)
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


# -- building -------------------------------------------------------------------------------------------------


def _split_symbols(symbol: str) -> list[str]:
    """The symbols of a chunk's ``symbol`` string (``"a, B.c"`` -> ``["a", "B.c"]``)."""
    return [s for s in (part.strip() for part in symbol.split(", ")) if s] if symbol else []


@functools.lru_cache(maxsize=1 << 16)
def _name_of(symbol: str) -> str:
    """The last identifier of a symbol's last component (``Session.request`` -> ``request``; ``valid?`` ->
    ``valid``), ``""`` when it has none (``operator==`` gives ``operator``)."""
    last = symbol.rsplit(".", 1)[-1]
    found = IDENTIFIER.findall(last)
    return found[-1] if found else ""


_STRING_DQ = r'"(?:[^"\\\n]|\\.)*"'
_STRING_SQ = r"'(?:[^'\\\n]|\\.)*'"
_CHAR_SQ = r"'(?:[^'\\\n]|\\.[^'\n]{0,9})'"
_SLASH_COMMENTS = r"//[^\n]*|/\*[\s\S]*?\*/"
_HASH_COMMENT = r"#[^\n]*"
_TRIPLE_QUOTED = r'"""[\s\S]*?"""|' + r"'''[\s\S]*?'''"
_NOISE_PATTERNS: dict[str, re.Pattern[str]] = {
    "python": re.compile(f"{_HASH_COMMENT}|{_TRIPLE_QUOTED}|{_STRING_DQ}|{_STRING_SQ}"),
    "ruby": re.compile(f"{_HASH_COMMENT}|^=begin\\b[\\s\\S]*?^=end\\b|{_STRING_DQ}|{_STRING_SQ}", re.MULTILINE),
    "php": re.compile(f"{_SLASH_COMMENTS}|{_HASH_COMMENT}|{_STRING_DQ}|{_STRING_SQ}"),
    "rust": re.compile(f"{_SLASH_COMMENTS}|{_STRING_DQ}|{_CHAR_SQ}"),
    "go": re.compile(f"{_SLASH_COMMENTS}|{_STRING_DQ}|{_CHAR_SQ}|`[^`]*`"),
    "script": re.compile(f"{_SLASH_COMMENTS}|{_STRING_DQ}|{_STRING_SQ}|`(?:[^`\\\\]|\\\\.)*`"),
    "c": re.compile(f"{_SLASH_COMMENTS}|{_STRING_DQ}|{_CHAR_SQ}|^[ \\t]*#[ \\t]*include[^\\n]*", re.MULTILINE),
}
"""Per language family: comments and string literals, blanked out before identifiers are read (see *Identifiers*
in the module docstring)."""
_NOISE_FAMILY = {
    "python": "python",
    "ruby": "ruby",
    "php": "php",
    "rust": "rust",
    "go": "go",
    "javascript": "script",
    "typescript": "script",
    "tsx": "script",
    "java": "c",
    "c": "c",
    "cpp": "c",
}


def code_text(text: str, language: str) -> str:
    """``text`` with its comments and string literals replaced by a blank (regex approximation of the parse tree).

    Per language family (:data:`_NOISE_PATTERNS`): Python ``#`` comments and (triple-)quoted strings; Ruby ``#``
    comments, ``=begin``/``=end`` blocks and quoted strings; C, C++, Java, JavaScript, TypeScript, Go, Rust and PHP
    ``//`` and ``/* */`` comments and double-quoted strings, plus single-quoted strings (JavaScript, PHP),
    character literals only (C family, Go, Rust: so a Rust lifetime ``'a`` is kept), template or raw strings in
    backticks (JavaScript, Go), ``#`` comments (PHP) and ``#include`` lines (C family: a file name is not a
    reference). The leftmost match wins, so a ``#`` inside a string is not a comment. Text of other languages is
    returned unchanged.

    :param text: source text.
    :param language: its language name.
    :return: the text with every match replaced by ``" "``.
    """
    family = _NOISE_FAMILY.get(language)
    return text if family is None else _NOISE_PATTERNS[family].sub(" ", text)


def _member_pattern(language: str) -> re.Pattern[str]:
    """The member-access regex of a language (:data:`DOT_ACCESS` or :data:`MEMBER_ACCESS`)."""
    return MEMBER_ACCESS if language in ("php", "rust", "ruby", "c", "cpp") else DOT_ACCESS


def _linkable(name: str, max_sites: int, n_sites: int) -> bool:
    """Whether references to ``name`` are linked (see the module docstring)."""
    return (
        len(name) >= MIN_NAME_CHARS
        and n_sites <= max_sites
        and name not in STOP_NAMES
        and not (name.startswith("__") and name.endswith("__"))
    )


def build_graph(
    files: Sequence[SourceFile], chunks: Sequence[Chunk], max_definition_sites: int = MAX_DEFINITION_SITES
) -> SymbolGraph:
    """Build the symbol graph of one snapshot.

    :param files: the snapshot's walked files (:func:`chunking.walk.walk_snapshot`); their text is read for
        imports.
    :param chunks: the files' chunks with text, from the ``function`` (or ``hybrid``) chunker
        (:func:`chunking.registry.chunk_files`); chunk ``i`` becomes node ``i``.
    :param max_definition_sites: names with more definition sites are not linked by ``references``.
    :return: the graph (edges as described in the module docstring).
    :raises ValueError: if ``max_definition_sites < 1``.
    """
    if max_definition_sites < 1:
        raise ValueError(f"max_definition_sites must be >= 1, got {max_definition_sites}")
    paths = sorted({f.path for f in files} | {c.path for c in chunks})
    file_id = {p: j for j, p in enumerate(paths)}
    n_chunks = len(chunks)
    n_nodes = n_chunks + len(paths)
    chunk_file = [file_id[c.path] for c in chunks]

    # Symbols, definition sites and names.
    chunk_symbols = [_split_symbols(c.symbol) for c in chunks]
    symbols = sorted({s for i, c in enumerate(chunks) if c.kind in DEFINITION_KINDS for s in chunk_symbols[i]})
    symbol_id = {s: k for k, s in enumerate(symbols)}
    def_src: list[int] = []
    def_dst: list[int] = []
    site: dict[tuple[int, str], int] = {}  # (file id, symbol) -> first definition chunk
    for i, c in enumerate(chunks):
        if c.kind in DEFINITION_KINDS:
            for s in chunk_symbols[i]:
                def_src.append(i)
                def_dst.append(symbol_id[s])
                site.setdefault((chunk_file[i], s), i)
    sites_of_symbol: dict[str, list[int]] = {}
    sites_of_name: dict[str, list[int]] = {}
    for (_, s), i in site.items():
        sites_of_symbol.setdefault(s, []).append(i)
        name = _name_of(s)
        if name:
            sites_of_name.setdefault(name, []).append(i)

    # Containment: file -> chunks, parent site -> child, site -> other pieces of its symbol.
    con_src = [n_chunks + f for f in chunk_file]
    con_dst = list(range(n_chunks))
    dir_site: dict[tuple[str, str], int] = {}  # (directory, symbol) -> site in the first file; made on first use
    for i in range(n_chunks):
        fid = chunk_file[i]
        for s in chunk_symbols[i]:
            head = site.get((fid, s))
            if head is not None and head != i:
                con_src.append(head)
                con_dst.append(i)
                continue
            if head is None or "." not in s:
                continue
            parent = s.rsplit(".", 1)[0]
            up = site.get((fid, parent))
            if up is None:
                if not dir_site:
                    for (site_file, site_symbol), site_i in sorted(site.items(), key=lambda it: (it[0][0], it[0][1])):
                        dir_site.setdefault((posixpath.dirname(paths[site_file]), site_symbol), site_i)
                up = dir_site.get((posixpath.dirname(paths[fid]), parent))
            if up is None and len(sites_of_symbol.get(parent, ())) == 1:
                up = sites_of_symbol[parent][0]
            if up is not None and up != i:
                con_src.append(up)
                con_dst.append(i)

    # Imports.
    resolver = _ImportResolver(files)
    imported: list[set[int]] = [set() for _ in paths]
    for f in files:
        fid = file_id[f.path]
        imported[fid].update(file_id[t] for t in resolver.targets(f) if t != f.path and t in file_id)
    imp_src = [n_chunks + fid for fid, targets in enumerate(imported) for _ in targets]
    imp_dst = [n_chunks + t for targets in imported for t in targets]

    # References.
    visible = [targets | {fid} for fid, targets in enumerate(imported)]
    package_files: dict[str, set[int]] = {}
    for fid, path in enumerate(paths):
        package_files.setdefault(posixpath.dirname(path), set()).add(fid)
    for f in files:
        if f.language in _CODE_LANGUAGES_WITH_PACKAGE_DIRS:
            visible[file_id[f.path]] |= package_files[posixpath.dirname(f.path)]
    single: dict[str, int] = {}  # names of one site, not a method -> that site
    several: dict[str, list[tuple[int, int, bool]]] = {}  # other names -> [(site, file id, is a method)]
    for name, sites in sites_of_name.items():
        if _linkable(name, max_definition_sites, len(sites)):
            if len(sites) == 1 and chunks[sites[0]].kind != "method":
                single[name] = sites[0]
            else:
                several[name] = sorted((t, chunk_file[t], chunks[t].kind == "method") for t in sites)
    linkable = set(single) | set(several)
    own_names = [{_name_of(s) for s in symbols_i} for symbols_i in chunk_symbols]
    ref_src: list[int] = []
    ref_dst: list[int] = []
    for i, c in enumerate(chunks):
        if c.language == TEXT or not c.text:
            continue
        text = code_text(c.text, c.language)
        used = linkable.intersection(IDENTIFIER.findall(text))
        if not used:
            continue
        used -= own_names[i]
        targets: set[int] = set()
        seen = visible[chunk_file[i]]
        members: set[str] | None = None if c.language not in IMPLICIT_RECEIVER_LANGUAGES else linkable
        for name in used:
            only = single.get(name)
            if only is not None:
                targets.add(only)
                continue
            candidates = several[name]
            if members is None:
                members = set(_member_pattern(c.language).findall(text))
            if name not in members:
                candidates = [t for t in candidates if not t[2]]
            local = [t for t, f, _ in candidates if f in seen]
            targets.update(local or [t for t, _, _ in candidates])
        targets.discard(i)
        ref_src.extend([i] * len(targets))
        ref_dst.extend(targets)

    config = {
        "max_definition_sites": max_definition_sites,
        "min_name_chars": MIN_NAME_CHARS,
        "stop_names_sha256": hashlib.sha256("\n".join(sorted(STOP_NAMES)).encode()).hexdigest(),
    }
    return SymbolGraph(
        n_chunks=n_chunks,
        files=paths,
        chunk_file=np.asarray(chunk_file, dtype=np.int32),
        symbols=symbols,
        defines=Csr.from_pairs(def_src, def_dst, n_chunks, len(symbols)),
        edges={
            "contains": Csr.from_pairs(con_src, con_dst, n_nodes, n_nodes),
            "references": Csr.from_pairs(ref_src, ref_dst, n_nodes, n_nodes),
            "imports": Csr.from_pairs(imp_src, imp_dst, n_nodes, n_nodes),
        },
        fingerprint=chunks_fingerprint(chunks),
        config=config,
    )


# -- imports --------------------------------------------------------------------------------------------------

_PY_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)", re.MULTILINE)
_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+)", re.MULTILINE)
_GO_IMPORT_BLOCK = re.compile(r"^import[ \t]*\(([^)]*)\)", re.MULTILINE)
_GO_IMPORT_ONE = re.compile(r"^import[ \t]+(?:[\w.]+[ \t]+)?\"([^\"]+)\"", re.MULTILINE)
_GO_QUOTED = re.compile(r"\"([^\"]+)\"")
_GO_MODULE = re.compile(r"^module[ \t]+(\S+)", re.MULTILINE)
_JS_SPEC = re.compile(
    r"""(?:\bfrom[ \t]*|\bimport[ \t]*\(?[ \t]*|\brequire[ \t]*\([ \t]*|^[ \t]*import[ \t]+)"""
    r"""(['"])(\.{1,2}/[^'"\n]*)\1""",
    re.MULTILINE,
)
_JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_RUST_USE = re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?use[ \t]+([^;]+);", re.MULTILINE)
_RUST_MOD = re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?mod[ \t]+(\w+)[ \t]*;", re.MULTILINE)
_JAVA_IMPORT = re.compile(r"^[ \t]*import[ \t]+(static[ \t]+)?([\w.]+(?:\.\*)?)[ \t]*;", re.MULTILINE)
_PHP_USE = re.compile(r"^[ \t]*use[ \t]+(?:function[ \t]+|const[ \t]+)?([^;]+);", re.MULTILINE)
_PHP_REQUIRE = re.compile(
    r"\b(?:require|include)(?:_once)?[ \t]*\(?[ \t]*(__DIR__[ \t]*\.[ \t]*)?['\"]([^'\"\n]+\.php)['\"]"
)
_RUBY_REQUIRE = re.compile(r"^[ \t]*(require|require_relative)[ \t(]+['\"]([^'\"\n]+)['\"]", re.MULTILINE)
_C_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*([\"<])([^\">\n]+)[\">]", re.MULTILINE)
_RUBY_LOAD_DIRS = frozenset({"lib", "test", "spec"})


def _line_matches(text: str, keywords: Sequence[str], *patterns: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """Matches of line-anchored ``patterns`` (``^`` with ``re.MULTILINE``) at the start of every line that holds
    one of ``keywords``, in line order.

    Equivalent to ``finditer`` for statements that start their line and contain a keyword, but only the few
    lines holding a keyword are tried: ``str.find`` skips the rest (a ``^``-anchored ``finditer`` tries every
    position, several times slower over a whole snapshot).
    """
    starts: set[int] = set()
    for keyword in keywords:
        pos = text.find(keyword)
        while pos >= 0:
            starts.add(text.rfind("\n", 0, pos) + 1)
            pos = text.find(keyword, pos + len(keyword))
    for start in sorted(starts):
        for pattern in patterns:
            match = pattern.match(text, start)
            if match:
                yield match


def _split_top(text: str) -> list[str]:
    """``text`` split at commas outside braces."""
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _expand_braces(path: str) -> list[str]:
    """``a::{b, c::{d, e}}`` -> ``[a::b, a::c::d, a::c::e]`` (``as`` aliases and blanks dropped), for Rust and PHP
    group imports."""
    path = re.sub(r"\s+as\s+\w+", "", path).replace(" ", "").replace("\n", "").replace("\t", "")
    brace = path.find("{")
    if brace < 0:
        return [path] if path else []
    prefix, inner = path[:brace], path[brace + 1 : path.rfind("}")]
    out: list[str] = []
    for item in _split_top(inner):
        out.extend(prefix + expanded for expanded in _expand_braces(item))
    return out


class _ImportResolver:
    """Resolves the import statements of a snapshot's files to snapshot paths (see the module docstring)."""

    def __init__(self, files: Sequence[SourceFile]) -> None:
        self.paths = sorted({f.path for f in files})
        self.path_set = set(self.paths)
        self.dir_files: dict[str, list[str]] = {}
        self.py_dirs: set[str] = set()
        self.py_modules: dict[str, list[str]] = {}  # dotted module suffix -> files
        self.go_dirs: set[str] = set()
        for path in self.paths:
            directory = posixpath.dirname(path)
            self.dir_files.setdefault(directory, []).append(path)
            if path.endswith((".py", ".pyi")):
                self.py_dirs.add(directory)
                module = path.rsplit(".", 1)[0].split("/")
                if module[-1] == "__init__":
                    module = module[:-1]
                for k in range(1, len(module) + 1):
                    self.py_modules.setdefault(".".join(module[-k:]), []).append(path)
            elif path.endswith(".go") and not path.endswith("_test.go"):
                self.go_dirs.add(directory)
        self.go_modules: list[tuple[str, str]] = []  # (module path, its directory), longest module first
        for f in files:
            if posixpath.basename(f.path) == "go.mod":
                match = _GO_MODULE.search(f.text)
                if match:
                    self.go_modules.append((match.group(1), posixpath.dirname(f.path)))
        self.go_modules.sort(key=lambda m: (-len(m[0]), m[0], m[1]))
        self.rust_roots = {posixpath.dirname(p) for p in self.paths if posixpath.basename(p) in ("lib.rs", "main.rs")}

    @functools.cached_property
    def by_suffix(self) -> dict[str, list[str]]:
        """Path suffix (``a/b.h``: the last one or more components) -> files ending with it, sorted."""
        out: dict[str, list[str]] = {}
        for path in self.paths:
            parts = path.split("/")
            for k in range(1, len(parts) + 1):
                out.setdefault("/".join(parts[-k:]), []).append(path)
        return out

    @functools.cached_property
    def dirs_by_suffix(self) -> dict[str, list[str]]:
        """Directory path suffix -> directories holding non-test ``.go`` files that end with it (``""``: all)."""
        out: dict[str, list[str]] = {}
        for directory in sorted(self.go_dirs):
            parts = directory.split("/") if directory else []
            for k in range(len(parts) + 1):
                out.setdefault("/".join(parts[len(parts) - k :]), []).append(directory)
        return out

    # -- shared helpers --

    @staticmethod
    def _closest(candidates: Sequence[str], importer: str, directories: bool = False) -> list[str]:
        """The candidate files (or ``directories``) sharing the longest directory prefix with the importer (all
        of them on a tie), sorted."""
        if len(candidates) <= 1:
            return list(candidates)
        base = posixpath.dirname(importer).split("/")

        def shared(path: str) -> int:
            parts = (path if directories else posixpath.dirname(path)).split("/")
            n = 0
            while n < len(parts) and n < len(base) and parts[n] == base[n]:
                n += 1
            return n

        best = max(shared(c) for c in candidates)
        return sorted(c for c in candidates if shared(c) == best)

    def _suffix(self, suffix: str, importer: str) -> list[str]:
        return self._closest(self.by_suffix.get(suffix, []), importer)

    def _longest_suffix(self, parts: Sequence[str], ext: str, importer: str) -> list[str]:
        """Files whose path ends with the longest suffix ``parts[-k:] + ext`` that exists."""
        for k in range(len(parts), 0, -1):
            found = self.by_suffix.get("/".join(parts[-k:]) + ext)
            if found:
                return self._closest(found, importer)
        return []

    # -- per language --

    def targets(self, source: SourceFile) -> set[str]:
        """The snapshot paths one file imports (see the module docstring for the rules per language)."""
        lang = source.language
        if lang == TEXT or lang not in _IMPORT_LANGUAGES:
            return set()
        text = source.text
        method = getattr(self, f"_{_IMPORT_LANGUAGES[lang]}")
        return set(method(source.path, text))

    def _python_relative(self, parts: Sequence[str]) -> list[str]:
        """The module file of a path relative to the snapshot root (``a/b.py``, ``a/b/__init__.py``, ``.pyi``)."""
        stem = "/".join(parts)
        for candidate in (stem + ".py", stem + "/__init__.py", stem + ".pyi", stem + "/__init__.pyi"):
            if candidate.lstrip("/") in self.path_set:
                return [candidate.lstrip("/")]
        return []

    def _python_absolute(self, dotted: str, importer: str) -> list[str]:
        """The files of an absolute module name whose prefix directory can be on ``sys.path`` (module docstring)."""
        out = []
        importer_dir = posixpath.dirname(importer)
        n_parts = dotted.count(".") + 1
        for path in self.py_modules.get(dotted, []):
            parts = path.split("/")
            n_prefix = len(parts) - n_parts - (1 if parts[-1].startswith("__init__.") else 0)
            prefix = "/".join(parts[:n_prefix])
            if (
                prefix == ""
                or not any("/".join(parts[:k]) in self.py_dirs for k in range(1, n_prefix + 1))
                or (prefix == importer_dir and importer_dir + "/__init__.py" not in self.path_set)
            ):
                out.append(path)
        return self._closest(out, importer)

    def _python(self, path: str, text: str) -> list[str]:
        out: list[str] = []
        package = posixpath.dirname(path).split("/") if posixpath.dirname(path) else []
        for match in _line_matches(text, ("import",), _PY_IMPORT):
            for item in match.group(1).split(","):
                words = item.split()
                if words:
                    out += self._python_absolute(words[0], path)
        for match in _line_matches(text, ("import",), _PY_FROM):
            dots, module, names_text = match.group(1), match.group(2), match.group(3)
            names = [n.split()[0] for n in names_text.strip("()").replace("\\", " ").split(",") if n.split()]
            names = [n for n in names if n.isidentifier()]
            if dots:
                up = len(dots) - 1
                if up > len(package):
                    continue
                base = package[: len(package) - up] + (module.split(".") if module else [])
                if base:
                    out += self._python_relative(base)
                for name in names:
                    out += self._python_relative(base + [name])
            elif module:
                out += self._python_absolute(module, path)
                for name in names:
                    out += self._python_absolute(f"{module}.{name}", path)
        return out

    def _go(self, path: str, text: str) -> list[str]:
        specs = [m.group(1) for m in _line_matches(text, ("import",), _GO_IMPORT_ONE)]
        for block in _line_matches(text, ("import",), _GO_IMPORT_BLOCK):
            specs += _GO_QUOTED.findall(block.group(1))
        out: list[str] = []
        for spec in specs:
            directories = self._go_dirs(spec, path)
            for directory in directories:
                out += [
                    p for p in self.dir_files.get(directory, []) if p.endswith(".go") and not p.endswith("_test.go")
                ]
        return out

    def _go_dirs(self, spec: str, importer: str) -> list[str]:
        for module, module_dir in self.go_modules:
            if spec == module or spec.startswith(module + "/"):
                rest = spec[len(module) + 1 :]
                directory = posixpath.join(module_dir, rest) if rest else module_dir
                return [directory] if directory in self.dir_files else []
        parts = spec.split("/")
        if self.go_modules and "." in parts[0]:
            return []  # another module's package
        if "." not in parts[0]:  # standard library or a dot-less module: whole-path matches only
            for candidate in (spec, "/".join(parts[1:])):
                if (
                    candidate
                    and candidate in self.dir_files
                    and any(p.endswith(".go") for p in self.dir_files[candidate])
                ):
                    return [candidate]
            return []
        for k in range(len(parts), 0, -1):
            found = self.dirs_by_suffix.get("/".join(parts[-k:]))
            if found:
                return self._closest(found, importer, directories=True)
        return []

    def _script(self, path: str, text: str) -> list[str]:
        out: list[str] = []
        base = posixpath.dirname(path)
        for match in _JS_SPEC.finditer(text):
            target = posixpath.normpath(posixpath.join(base, match.group(2)))
            if target.startswith(".."):
                continue
            stem = target.rsplit(".", 1)[0] if posixpath.splitext(target)[1] in _JS_EXTENSIONS else target
            candidates = (
                [target] + [stem + ext for ext in _JS_EXTENSIONS] + [f"{target}/index{ext}" for ext in _JS_EXTENSIONS]
            )
            for candidate in candidates:
                if candidate in self.path_set:
                    out.append(candidate)
                    break
        return out

    def _rust_module_dir(self, path: str) -> str:
        directory, name = posixpath.dirname(path), posixpath.basename(path)
        if name in ("lib.rs", "main.rs", "mod.rs"):
            return directory
        return posixpath.join(directory, name[:-3])

    def _rust_file(self, directory: str, parts: Sequence[str]) -> str | None:
        """The module file of the longest prefix of ``parts`` under ``directory``."""
        for k in range(len(parts), 0, -1):
            stem = posixpath.join(directory, *parts[:k]) if directory else "/".join(parts[:k])
            for candidate in (stem + ".rs", stem + "/mod.rs"):
                if candidate in self.path_set:
                    return candidate
        return None

    def _rust(self, path: str, text: str) -> list[str]:
        out: list[str] = []
        module_dir = self._rust_module_dir(path)
        root = None
        directory = posixpath.dirname(path)
        while True:
            if directory in self.rust_roots:
                root = directory
                break
            if not directory:
                break
            directory = posixpath.dirname(directory)
        for match in _line_matches(text, ("use",), _RUST_USE):
            for item in _expand_braces(match.group(1)):
                parts = [p for p in item.split("::") if p and p != "*"]
                if not parts:
                    continue
                if parts[0] == "crate":
                    base, parts = root, parts[1:]
                elif parts[0] == "self":
                    base, parts = module_dir, parts[1:]
                elif parts[0] == "super":
                    base = module_dir
                    while parts and parts[0] == "super":
                        base, parts = posixpath.dirname(base), parts[1:]
                else:
                    base = root
                if base is None or not parts:
                    continue
                found = self._rust_file(base, parts)
                if found:
                    out.append(found)
        for match in _line_matches(text, ("mod",), _RUST_MOD):
            found = self._rust_file(module_dir, [match.group(1)])
            if found:
                out.append(found)
        return out

    def _java(self, path: str, text: str) -> list[str]:
        out: list[str] = []
        for match in _line_matches(text, ("import",), _JAVA_IMPORT):
            parts = match.group(2).split(".")
            if parts[-1] == "*":
                for directory in self._suffix_dirs(parts[:-1], path):
                    out += [p for p in self.dir_files[directory] if p.endswith(".java")]
                continue
            if match.group(1):  # import static a.b.C.m -> a/b/C.java
                parts = parts[:-1]
            if parts:
                out += self._suffix("/".join(parts) + ".java", path)
        return out

    def _suffix_dirs(self, parts: Sequence[str], importer: str) -> list[str]:
        suffix = "/".join(parts)
        found = sorted(d for d in self.dir_files if d == suffix or d.endswith("/" + suffix))
        return self._closest(found, importer, directories=True)

    def _php(self, path: str, text: str) -> list[str]:
        out: list[str] = []
        for match in _line_matches(text, ("use",), _PHP_USE):
            for item in _expand_braces(match.group(1)):
                parts = [p for p in item.strip("\\").split("\\") if p]
                if parts:
                    out += self._longest_suffix(parts, ".php", path)
        base = posixpath.dirname(path)
        for match in _PHP_REQUIRE.finditer(text):
            target = posixpath.normpath(posixpath.join(base, match.group(2).lstrip("/")))
            if target in self.path_set:
                out.append(target)
            elif not match.group(1):
                parts = [p for p in match.group(2).split("/") if p not in ("", ".", "..")]
                out += self._longest_suffix(parts[:-1] + [parts[-1][:-4]], ".php", path) if parts else []
        return out

    def _ruby(self, path: str, text: str) -> list[str]:
        out: list[str] = []
        base = posixpath.dirname(path)
        for match in _line_matches(text, ("require",), _RUBY_REQUIRE):
            spec = match.group(2)
            spec = spec if spec.endswith(".rb") else spec + ".rb"
            if match.group(1) == "require_relative":
                target = posixpath.normpath(posixpath.join(base, spec))
                if target in self.path_set:
                    out.append(target)
                continue
            candidates = []
            for candidate in self.by_suffix.get(spec, []):
                prefix = candidate[: len(candidate) - len(spec)].rstrip("/")
                if prefix == "" or posixpath.basename(prefix) in _RUBY_LOAD_DIRS:
                    candidates.append(candidate)
            out += self._closest(candidates, path)
        return out

    def _c(self, path: str, text: str) -> list[str]:
        out: list[str] = []
        base = posixpath.dirname(path)
        for match in _line_matches(text, ("include",), _C_INCLUDE):
            quote, spec = match.group(1), match.group(2).strip()
            if quote == '"':
                target = posixpath.normpath(posixpath.join(base, spec))
                if target in self.path_set:
                    out.append(target)
                    continue
            elif "/" not in spec:
                continue
            parts = [p for p in spec.split("/") if p not in ("", ".", "..")]
            if parts:
                out += self._suffix("/".join(parts), path)
        return out


_IMPORT_LANGUAGES: dict[str, str] = {
    "python": "python",
    "go": "go",
    "javascript": "script",
    "typescript": "script",
    "tsx": "script",
    "rust": "rust",
    "java": "java",
    "php": "php",
    "ruby": "ruby",
    "c": "c",
    "cpp": "c",
}
"""Language name -> the resolver method (``_python``, ...) that reads its imports."""


def import_targets(files: Sequence[SourceFile]) -> dict[str, list[str]]:
    """The import edges of :func:`build_graph` as paths, for inspection and tests.

    :param files: the snapshot's walked files.
    :return: importing path -> sorted imported paths (files importing nothing inside the snapshot left out).
    """
    resolver = _ImportResolver(files)
    out = {}
    for f in files:
        targets = sorted(t for t in resolver.targets(f) if t != f.path)
        if targets:
            out[f.path] = targets
    return out


# -- expansion ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExpansionInfo:
    """How :func:`expand` reached one chunk.

    :param dist: fewest hops from a seed over all directions (0 for a seed).
    :param dist_callee: fewest hops along ``references`` edges (what the seeds use), ``None`` if not reached so.
    :param dist_caller: fewest hops along reversed ``references`` edges (what uses the seeds), or ``None``.
    :param dist_contain: fewest hops along ``contains`` edges between chunks, either way, or ``None``.
    :param dist_import: fewest hops along import steps (see :func:`expand`), or ``None``.
    :param origin: the seed it was first reached from (the best-ranked one among those at distance ``dist``).
    :param origin_score: that seed's score.
    """

    dist: int
    dist_callee: int | None
    dist_caller: int | None
    dist_contain: int | None
    dist_import: int | None
    origin: int
    origin_score: float

    def direction_dist(self, direction: str) -> int | None:
        """The distance along one of :data:`DIRECTIONS` (``dist_<direction>``)."""
        value: int | None = getattr(self, f"dist_{direction}")
        return value


def _import_reach(graph: SymbolGraph, fid: int) -> list[int]:
    """Chunks of the files that file ``fid`` imports and that a chunk of file ``fid`` references (cached)."""
    cached = graph._import_reach.get(fid)
    if cached is not None:
        return cached
    n = graph.n_chunks
    imported = graph.edges["imports"].row(n + fid) - n
    out: list[int] = []
    if imported.size:
        own = graph.edges["contains"].row(n + fid)
        refs = graph.edges["references"]
        rows = [refs.row(int(c)) for c in own]
        if rows:
            targets = np.unique(np.concatenate(rows))
            out = targets[np.isin(graph.chunk_file[targets], imported)].tolist()
    graph._import_reach[fid] = out
    return out


def _neighbours(graph: SymbolGraph, direction: str, node: int) -> list[int]:
    """Chunk neighbours of a chunk along one direction, sorted ascending."""
    if direction == "callee":
        return list(graph.edges["references"].row(node).tolist())
    if direction == "caller":
        return list(graph.reverse("references").row(node).tolist())
    if direction == "contain":
        both = set(graph.edges["contains"].row(node).tolist()) | set(graph.reverse("contains").row(node).tolist())
        return sorted(v for v in both if v < graph.n_chunks)
    return _import_reach(graph, int(graph.chunk_file[node]))


def _ranked_seeds(graph: SymbolGraph, seeds: Mapping[int, float] | Sequence[int]) -> list[tuple[int, float]]:
    """Seeds as ``(chunk, score)`` best first: by score descending then chunk id (mapping), or in the given
    order with score 1.0 (sequence; repeats dropped)."""
    if isinstance(seeds, Mapping):
        items = []
        for node, score in seeds.items():
            value = float(score)
            if math.isnan(value):
                raise ValueError(f"seed {node} has a NaN score")
            items.append((_check_node(graph, node), value))
        items.sort(key=lambda item: (-item[1], item[0]))
        return items
    out: dict[int, float] = {}
    for node in seeds:
        out.setdefault(_check_node(graph, node), 1.0)
    return list(out.items())


def _check_node(graph: SymbolGraph, node: Any) -> int:
    if isinstance(node, bool) or not isinstance(node, (int, np.integer)) or not 0 <= node < graph.n_chunks:
        raise ValueError(f"seed {node!r} is not a chunk id in 0..{graph.n_chunks - 1}")
    return int(node)


def expand(
    graph: SymbolGraph,
    seeds: Mapping[int, float] | Sequence[int],
    hops: int = 2,
    max_nodes: int = 200,
    edge_types: Sequence[str] = DIRECTIONS,
) -> dict[int, ExpansionInfo]:
    """Chunks near the seeds in the graph: breadth-first search up to ``hops`` along each direction on its own.

    Directions (:data:`DIRECTIONS`): ``callee`` (reference edges forward), ``caller`` (backward), ``contain``
    (chunk-to-chunk ``contains`` edges either way: class <-> member) and ``import`` (from a chunk of file F to
    every chunk of a file F imports that some chunk of F references). A path never mixes directions, so
    ``dist_callee == 2`` means "used by something the seed uses".

    Order and bounds: seeds are ranked (mapping: by score descending, then chunk id; sequence: as given, score
    1.0); at most ``max_nodes`` chunks are returned, seeds first (lower-ranked seeds beyond ``max_nodes`` are
    dropped). Hop ``h`` of every direction is done before hop ``h + 1`` of any; within a hop the frontier
    chunks are taken by the rank of the seed they come from, then direction, then the order they were reached,
    and each chunk's neighbours in ascending id, so the closest chunks of the best seeds win when the budget
    runs out. A chunk is expanded at most once per direction, so at most ``4 * max_nodes`` neighbour lists are
    read. When the budget cut a path, distances are those of the paths through the returned chunks.

    :param graph: the snapshot's graph.
    :param seeds: chunk id -> score, or chunk ids best first.
    :param hops: largest distance (``0``: the seeds only).
    :param max_nodes: most chunks returned (``>= 1``).
    :param edge_types: the directions to follow, a subset of :data:`DIRECTIONS`.
    :return: chunk id -> :class:`ExpansionInfo`, in the order reached (seeds first, by rank).
    :raises ValueError: for a seed that is not a chunk id, a NaN score, ``hops < 0``, ``max_nodes < 1`` or an
        unknown direction.
    """
    if hops < 0:
        raise ValueError(f"hops must be >= 0, got {hops}")
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")
    unknown = [d for d in edge_types if d not in DIRECTIONS]
    if unknown or isinstance(edge_types, str):
        raise ValueError(f"unknown expansion direction(s) {unknown or [edge_types]}; valid: {', '.join(DIRECTIONS)}")
    directions = [d for d in DIRECTIONS if d in edge_types]
    ranked = _ranked_seeds(graph, seeds)[:max_nodes]

    dist: dict[int, int] = {}
    origin: dict[int, int] = {}  # chunk -> rank of its origin seed
    per_dir: dict[str, dict[int, int]] = {d: {} for d in DIRECTIONS}
    frontier: dict[str, list[tuple[int, int]]] = {}  # direction -> [(origin rank, chunk)]
    for rank, (node, _) in enumerate(ranked):
        dist[node] = 0
        origin[node] = rank
        for d in DIRECTIONS:
            per_dir[d][node] = 0
    for d in directions:
        frontier[d] = [(rank, node) for rank, (node, _) in enumerate(ranked)]

    for hop in range(1, hops + 1):
        work = sorted(
            (rank, di, pos, node) for di, d in enumerate(directions) for pos, (rank, node) in enumerate(frontier[d])
        )
        nxt: dict[str, list[tuple[int, int]]] = {d: [] for d in directions}
        for rank, di, _, node in work:
            d = directions[di]
            reached = per_dir[d]
            for v in _neighbours(graph, d, node):
                if v in reached:
                    continue
                if v not in dist:
                    if len(dist) >= max_nodes:
                        continue
                    dist[v] = hop
                    origin[v] = rank
                reached[v] = hop
                nxt[d].append((rank, v))
        frontier = nxt
        if not any(frontier.values()):
            break

    out: dict[int, ExpansionInfo] = {}
    for node, d0 in dist.items():
        rank = origin[node]
        out[node] = ExpansionInfo(
            dist=d0,
            dist_callee=per_dir["callee"].get(node),
            dist_caller=per_dir["caller"].get(node),
            dist_contain=per_dir["contain"].get(node),
            dist_import=per_dir["import"].get(node),
            origin=ranked[rank][0],
            origin_score=ranked[rank][1],
        )
    return out


# -- features -------------------------------------------------------------------------------------------------

FEATURE_NAMES: tuple[str, ...] = (
    "is_seed",
    "origin_score",
    "dist",
    "dist_callee",
    "dist_caller",
    "dist_contain",
    "dist_import",
    "n_callees",
    "n_callers",
    "n_caller_files",
    "n_children",
    "has_parent",
    "n_symbols",
    "name_sites",
    "file_imports",
    "file_imported_by",
)
"""The features :func:`graph_features` gives every reached chunk, in this order:

- ``is_seed``: 1.0 for a seed, else 0.0; ``origin_score``: the score of the seed it was reached from;
- ``dist``, ``dist_callee``, ``dist_caller``, ``dist_contain``, ``dist_import``: the hop distances of
  :class:`ExpansionInfo`; NaN when not reached along that direction (a missing value for gradient-boosted
  trees such as LightGBM);
- ``n_callees``: out-degree in ``references`` (distinct definitions the chunk uses); ``n_callers``: in-degree
  (chunks using it); ``n_caller_files``: distinct files of those chunks (the fan-in of the chunk's symbol
  across the snapshot);
- ``n_children``: chunks it contains (members of a class); ``has_parent``: 1.0 when a chunk contains it;
- ``n_symbols``: symbols it defines (0 for gaps and windows); ``name_sites``: definition sites of its first
  symbol's name in the snapshot (how ambiguous a reference to it is; 0 without a symbol);
- ``file_imports`` / ``file_imported_by``: out- and in-degree of its file in ``imports``.
"""


def graph_features(graph: SymbolGraph, reached: Mapping[int, ExpansionInfo]) -> dict[int, dict[str, float]]:
    """Ranking features of the chunks :func:`expand` reached, named and ordered as :data:`FEATURE_NAMES`.

    :param graph: the graph the chunks were reached in.
    :param reached: :func:`expand`'s result (or any chunk id -> :class:`ExpansionInfo`).
    :return: chunk id -> feature name -> value, in the order of ``reached``.
    :raises ValueError: for a chunk id outside the graph.
    """
    n = graph.n_chunks
    refs, rev_refs = graph.edges["references"], graph.reverse("references")
    contains, rev_contains = graph.edges["contains"], graph.reverse("contains")
    imports, rev_imports = graph.edges["imports"], graph.reverse("imports")
    name_sites: dict[str, int] = {}
    out: dict[int, dict[str, float]] = {}
    for node, info in reached.items():
        _check_node(graph, node)
        callers = rev_refs.row(node)
        symbol_ids = graph.defines.row(node)
        sites = 0
        if symbol_ids.size:
            name = _name_of(graph.symbols[int(symbol_ids[0])])
            if name not in name_sites:
                name_sites[name] = _count_name_sites(graph, name)
            sites = name_sites[name]
        fnode = n + int(graph.chunk_file[node])
        values = {
            "is_seed": 1.0 if info.dist == 0 else 0.0,
            "origin_score": float(info.origin_score),
            "dist": float(info.dist),
            "n_callees": float(refs.row(node).size),
            "n_callers": float(callers.size),
            "n_caller_files": float(np.unique(graph.chunk_file[callers]).size) if callers.size else 0.0,
            "n_children": float(contains.row(node).size),
            "has_parent": 1.0 if (rev_contains.row(node) < n).any() else 0.0,
            "n_symbols": float(symbol_ids.size),
            "name_sites": float(sites),
            "file_imports": float(imports.row(fnode).size),
            "file_imported_by": float(rev_imports.row(fnode).size),
        }
        for d in DIRECTIONS:
            value = info.direction_dist(d)
            values[f"dist_{d}"] = math.nan if value is None else float(value)
        out[node] = {name: values[name] for name in FEATURE_NAMES}
    return out


def _count_name_sites(graph: SymbolGraph, name: str) -> int:
    """Definition sites (first defining chunk per file) of the symbols named ``name`` (counted once per graph)."""
    if graph._name_sites is None:
        counts: dict[str, int] = {}
        rows = np.repeat(np.arange(graph.n_chunks, dtype=np.int64), graph.defines.degrees())
        pairs = np.unique(np.stack([graph.chunk_file[rows].astype(np.int64), graph.defines.indices]), axis=1)
        for sid in pairs[1].tolist():
            key = _name_of(graph.symbols[sid])
            counts[key] = counts.get(key, 0) + 1
        graph._name_sites = counts
    return graph._name_sites.get(name, 0) if name else 0


# -- persisted with the index ------------------------------------------------------------------------------

#: The graph's directory inside a snapshot's chunker directory (next to ``chunks.json`` and ``retrievers/``).
GRAPH_DIR = "graph"


def graph_dir_for(store: Path, snapshot: str, chunker: Any, walk_config: Any) -> Path:
    """Where a snapshot's graph is stored: ``<store>/<snapshot>/<chunker>-<hash8>/graph``.

    :param store: index store root.
    :param snapshot: the snapshot's name in the store.
    :param chunker: the chunk strategy (the graph is built from its chunks).
    :param walk_config: the walking rules.
    :return: the directory (not checked).
    """
    from swe_explore.indexes.build import chunk_dir_for

    return chunk_dir_for(store, snapshot, chunker, walk_config) / GRAPH_DIR


def _stored_fingerprint(directory: Path) -> str | None:
    try:
        value = json.loads((directory / GRAPH_JSON).read_text(encoding="utf-8")).get("fingerprint")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def ensure_graph(
    snapshot_dir: Path,
    store: Path,
    chunker: Any,
    walk_config: Any = None,
    rebuild: bool = False,
    snapshot_name: str | None = None,
) -> bool:
    """Build and save the snapshot's graph next to its chunk table unless a graph of that table is there.

    Call after :func:`swe_explore.indexes.build.ensure_index` with the same chunker: the graph is built from the
    chunk table's chunks (texts cut from the walked files) and records the table's fingerprint, so a rebuilt
    table makes the graph stale and it is rebuilt. The directory is written atomically.

    :param snapshot_dir: the snapshot.
    :param store: index store root.
    :param chunker: the chunk strategy of the index.
    :param walk_config: the walking rules (default ``WalkConfig()``).
    :param rebuild: rebuild even when current.
    :param snapshot_name: the snapshot's name in the store (default: the directory name).
    :return: whether the graph was built (``False``: reused).
    :raises FileNotFoundError: if the chunk table was never built.
    :raises CorruptIndexError: if the chunk table is broken.
    """
    from swe_explore.chunking.walk import WalkConfig, walk_snapshot
    from swe_explore.indexes.build import chunk_dir_for, chunks_with_text
    from swe_explore.indexes.files import MANIFEST, read_json
    from swe_explore.indexes.store import ChunkTable, atomic_directory

    walk_config = walk_config or WalkConfig()
    cdir = chunk_dir_for(store, snapshot_name or Path(snapshot_dir).name, chunker, walk_config)
    if not (cdir / MANIFEST).is_file():
        raise FileNotFoundError(f"no chunk table at {cdir}; build the index first (ensure_index)")
    manifest = read_json(cdir / MANIFEST)
    table = ChunkTable.load(cdir, manifest["counts"]["chunks"], manifest.get("files"))
    gdir = cdir / GRAPH_DIR
    if not rebuild and _stored_fingerprint(gdir) == table.fingerprint():
        return False
    files, _ = walk_snapshot(snapshot_dir, walk_config)
    graph = build_graph(files, chunks_with_text(table, files))
    with atomic_directory(gdir) as tmp:
        graph.save(tmp)
    return True


def open_graph(
    snapshot_dir: Path, store: Path, chunker: Any, walk_config: Any = None, snapshot_name: str | None = None
) -> SymbolGraph:
    """Load a snapshot's graph and check that it belongs to the stored chunk table.

    :param snapshot_dir: the snapshot (only its name is used unless ``snapshot_name`` is given).
    :param store: index store root.
    :param chunker: the chunk strategy of the index.
    :param walk_config: the walking rules (default ``WalkConfig()``).
    :param snapshot_name: the snapshot's name in the store.
    :return: the graph.
    :raises FileNotFoundError: if the graph was never built.
    :raises CorruptGraphError: if a file is broken or the graph was built from another chunk table.
    """
    from swe_explore.chunking.walk import WalkConfig
    from swe_explore.indexes.files import MANIFEST, read_json

    walk_config = walk_config or WalkConfig()
    gdir = graph_dir_for(store, snapshot_name or Path(snapshot_dir).name, chunker, walk_config)
    if not (gdir / GRAPH_JSON).is_file():
        raise FileNotFoundError(f"no symbol graph at {gdir}; build it with ensure_graph (or scripts/index_repos.py)")
    graph = SymbolGraph.load(gdir)
    table_files = read_json(gdir.parent / MANIFEST).get("counts", {})
    if graph.n_chunks != table_files.get("chunks", graph.n_chunks):
        raise CorruptGraphError(gdir / GRAPH_JSON, "built from another chunk table (stale graph); rebuild it")
    return graph
