"""Building the symbol graph of one snapshot from its walked files and ``function`` chunks (:func:`build_graph`).

Nodes are as in :mod:`swe_explore.indexes.graph`; the edges are found as follows:


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
- ``references`` (chunk -> chunk, "calls"): every identifier (:data:`~swe_explore.indexes.graph.IDENTIFIER`) of a
  code chunk's text, comments and string literals blanked first (:func:`code_text`), that is the name of a
  definition site elsewhere in the snapshot links the chunk to those sites. Names are ignored when they have more
  than :data:`MAX_DEFINITION_SITES` (8) sites (``__init__``, ``run``: too ambiguous to resolve without types), are
  in :data:`STOP_NAMES` (keywords, builtins and the methods of builtin containers: ``get`` defined once in a
  snapshot would otherwise attract every ``dict.get`` call), are dunder names (``__eq__``, called implicitly) or
  have fewer than :data:`MIN_NAME_CHARS` characters. A chunk's own names are not references from it (a
  ``def request`` line does not call every other ``request``). A **method** site (chunk kind ``method``) is linked only
  when the name also follows a member access (``.request``; ``->``/``::`` too in PHP, Rust, Ruby, C and C++), except
  in Java, C++ and Ruby where methods are called bare inside their class (``_IMPLICIT_RECEIVER_LANGUAGES``): a
  parameter named ``request`` does not call ``Session.request``. **Local preference**: when some of a name's sites
  are *visible* from the chunk's file (the file itself, the files it imports, and for Go the files of its package
  directory) only those are linked, else all of them. Chunks of docs/config files (language ``text``) and chunks
  without text (reloaded from a persisted table) have no outgoing references. Resolution is by name only, so a
  variable named like a definition elsewhere links to it (pytest fixtures such as ``linter`` or ``array`` collect
  hundreds of callers); the ``n_callers`` and ``name_sites`` features (:mod:`swe_explore.explore.graph_features`)
  let a ranker discount such hubs.
- ``imports`` (file node -> file node): the snapshot files a file imports or includes
  (:mod:`swe_explore.indexes.graph_imports`).

**Identifiers.** A regex over the chunk text (:data:`~swe_explore.indexes.graph.IDENTIFIER`, ASCII identifiers)
after a regex blanking of comments and strings (:func:`code_text`), rather than a second tree-sitter parse. Measured
with ``scripts/bench_graph.py --compare-treesitter`` against a graph built from text whose comment and string nodes
were blanked in the parse tree: the reference edges are the same on psf__requests-1142 (698 edges), differ by 2 of
12,344 on pylint-dev__pylint-7080 and by 431 of 28,441 (1.5 %: pieces of split definitions that start inside a
docstring) on pydata__xarray-7393, none missing from the regex graph; the parse and masking alone cost 3-9x the
whole graph build. Without the blanking, 19 %, 46 % and 18 % of the reference edges of these snapshots came from
comments and strings only (pylint's ``# pylint: disable=...`` comments linked a thousand chunks to every ``disable``
method).

**Speed** (``scripts/bench_graph.py``: walk + ``function`` chunks + BM25 build against :func:`build_graph`, in
one process, alternating, median of 3 rounds, on a machine shared with other jobs): the graph costs 0.04
(psf__requests-1142: 0.04 s), 0.19 (pylint-dev__pylint-7080: 0.59 s for 11,678 chunks and 2,918 files) and 0.19
(pydata__xarray-7393: 0.39 s for 7,298 chunks and 160K lines) of the index build time; the budget is 0.30.
About half of it is reading identifiers (the regex findall); :func:`~swe_explore.indexes.graph_expand.expand` from
10 seeds takes 1-7 ms.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import numpy as np

from swe_explore.chunking.languages import TEXT
from swe_explore.chunking.treesitter import DEFINITION_KINDS
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.indexes.collector import paused_gc
from swe_explore.indexes.graph import IDENTIFIER, Csr, SymbolGraph, chunks_fingerprint, name_of
from swe_explore.indexes.graph_imports import ImportResolver, ImportSpecs

__all__ = [
    "MAX_DEFINITION_SITES",
    "MIN_NAME_CHARS",
    "STOP_NAMES",
    "ChunkNames",
    "build_graph",
    "chunk_names",
    "code_text",
]

#: Names with more definition sites than this are not linked (too ambiguous to resolve without types).
MAX_DEFINITION_SITES = 8
#: Names shorter than this many characters are not linked (``x``, ``np``, ``eq``).
MIN_NAME_CHARS = 3
_DOT_ACCESS = re.compile(r"\.[ \t]*([A-Za-z_][A-Za-z0-9_]*)")
"""A member access ``.name`` (Python, JavaScript, TypeScript, Go, Java)."""
_MEMBER_ACCESS = re.compile(r"(?:\.|->|::)[ \t]*([A-Za-z_][A-Za-z0-9_]*)")
"""A member access with ``->`` and ``::`` too (PHP, Rust, Ruby, C and C++)."""
_IMPLICIT_RECEIVER_LANGUAGES = frozenset({"java", "cpp", "ruby"})
"""Languages where a method is called by its bare name inside its class (implicit ``this``/``self``), so a bare
identifier may reference a method."""

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
    """The member-access regex of a language (:data:`_DOT_ACCESS` or :data:`_MEMBER_ACCESS`)."""
    return _MEMBER_ACCESS if language in ("php", "rust", "ruby", "c", "cpp") else _DOT_ACCESS


def _linkable(name: str, max_sites: int, n_sites: int) -> bool:
    """Whether references to ``name`` are linked (see the module docstring)."""
    return (
        len(name) >= MIN_NAME_CHARS
        and n_sites <= max_sites
        and name not in STOP_NAMES
        and not (name.startswith("__") and name.endswith("__"))
    )


@dataclass
class _Sites:
    """The definition sites of a snapshot's symbols (see ``defines`` in the module docstring).

    :param chunk_symbols: the symbols of every chunk's ``symbol`` string, by chunk id.
    :param symbols: sorted symbols of the chunks of a definition kind; symbol ``k`` is ``symbols[k]``.
    :param def_src: the chunk of every ``defines`` pair.
    :param def_dst: the symbol id of every ``defines`` pair.
    :param site: ``(file id, symbol)`` -> its definition site (first chunk of a definition kind carrying it).
    :param of_symbol: symbol -> its sites.
    :param of_name: name (:func:`~swe_explore.indexes.graph.name_of`) -> the sites of the symbols of that name.
    """

    chunk_symbols: list[list[str]]
    symbols: list[str]
    def_src: list[int] = field(default_factory=list)
    def_dst: list[int] = field(default_factory=list)
    site: dict[tuple[int, str], int] = field(default_factory=dict)
    of_symbol: dict[str, list[int]] = field(default_factory=dict)
    of_name: dict[str, list[int]] = field(default_factory=dict)


def _split_symbols(symbol: str) -> list[str]:
    """The symbols of a chunk's ``symbol`` string (``"a, B.c"`` -> ``["a", "B.c"]``)."""
    if ", " not in symbol:  # most chunks: one symbol or none
        one = symbol.strip()
        return [one] if one else []
    return [s for s in (part.strip() for part in symbol.split(", ")) if s]


def _definition_sites(chunks: Sequence[Chunk], chunk_file: Sequence[int]) -> _Sites:
    """Symbols, ``defines`` pairs and definition sites of the chunks (``chunk_file``: file id of every chunk)."""
    chunk_symbols = [_split_symbols(c.symbol) for c in chunks]
    symbols = sorted({s for i, c in enumerate(chunks) if c.kind in DEFINITION_KINDS for s in chunk_symbols[i]})
    sites = _Sites(chunk_symbols, symbols)
    symbol_id = {s: k for k, s in enumerate(symbols)}
    for i, c in enumerate(chunks):
        if c.kind in DEFINITION_KINDS:
            for s in chunk_symbols[i]:
                sites.def_src.append(i)
                sites.def_dst.append(symbol_id[s])
                sites.site.setdefault((chunk_file[i], s), i)
    for (_, s), i in sites.site.items():
        sites.of_symbol.setdefault(s, []).append(i)
        name = name_of(s)
        if name:
            sites.of_name.setdefault(name, []).append(i)
    return sites


def _parent_site(
    sites: _Sites, fid: int, symbol: str, paths: Sequence[str], dir_site: dict[tuple[str, str], int]
) -> int | None:
    """The site of the symbol one level above ``symbol`` (a dotted name defined in file ``fid``): in the same
    file, else the same directory, else the one site of that symbol in the snapshot, else ``None``.

    ``dir_site`` (``(directory, symbol)`` -> site in the first file) is filled on first use and reused.
    """
    parent = symbol.rsplit(".", 1)[0]
    up = sites.site.get((fid, parent))
    if up is None:
        if not dir_site:
            for (site_file, site_symbol), site_i in sorted(sites.site.items(), key=lambda it: (it[0][0], it[0][1])):
                dir_site.setdefault((posixpath.dirname(paths[site_file]), site_symbol), site_i)
        up = dir_site.get((posixpath.dirname(paths[fid]), parent))
    if up is None and len(sites.of_symbol.get(parent, ())) == 1:
        up = sites.of_symbol[parent][0]
    return up


def _containment_pairs(sites: _Sites, chunk_file: Sequence[int], paths: Sequence[str]) -> tuple[list[int], list[int]]:
    """``contains`` pairs: file -> chunks, parent site -> child, site -> other pieces of its symbol."""
    n_chunks = len(chunk_file)
    con_src = [n_chunks + f for f in chunk_file]
    con_dst = list(range(n_chunks))
    dir_site: dict[tuple[str, str], int] = {}
    for i in range(n_chunks):
        fid = chunk_file[i]
        for s in sites.chunk_symbols[i]:
            head = sites.site.get((fid, s))
            if head is not None and head != i:
                con_src.append(head)
                con_dst.append(i)
                continue
            if head is None or "." not in s:
                continue
            up = _parent_site(sites, fid, s, paths, dir_site)
            if up is not None and up != i:
                con_src.append(up)
                con_dst.append(i)
    return con_src, con_dst


def _imported_files(
    files: Sequence[SourceFile], file_id: dict[str, int], imports: Mapping[str, ImportSpecs] | None
) -> list[set[int]]:
    """By file id: the ids of the other files it imports (found by
    :class:`~swe_explore.indexes.graph_imports.ImportResolver`; a file's import statements taken from ``imports``
    when there, else read from its text)."""
    resolver = ImportResolver(files)
    imported: list[set[int]] = [set() for _ in file_id]
    known = imports or {}
    for f in files:
        fid = file_id[f.path]
        specs = known.get(f.path)
        targets = resolver.targets(f) if specs is None else resolver.resolve(f.path, f.language, specs)
        imported[fid].update(file_id[t] for t in targets if t != f.path and t in file_id)
    return imported


def _visible_files(
    files: Sequence[SourceFile], paths: Sequence[str], file_id: dict[str, int], imported: list[set[int]]
) -> list[set[int]]:
    """By file id: the files whose definitions it sees (itself, its imports, for Go its package directory)."""
    visible = [targets | {fid} for fid, targets in enumerate(imported)]
    package_files: dict[str, set[int]] = {}
    for fid, path in enumerate(paths):
        package_files.setdefault(posixpath.dirname(path), set()).add(fid)
    for f in files:
        if f.language in _CODE_LANGUAGES_WITH_PACKAGE_DIRS:
            visible[file_id[f.path]] |= package_files[posixpath.dirname(f.path)]
    return visible


@dataclass
class _Linkable:
    """The names references may link to.

    :param single: names of one site that is not a method -> that site.
    :param several: the other linkable names -> ``[(site, its file id, whether it is a method)]``, sorted.
    """

    single: dict[str, int]
    several: dict[str, list[tuple[int, int, bool]]]

    @property
    def names(self) -> set[str]:
        """All linkable names."""
        return set(self.single) | set(self.several)


def _linkable_names(
    sites: _Sites, chunks: Sequence[Chunk], chunk_file: Sequence[int], max_definition_sites: int
) -> _Linkable:
    """The names of definition sites that pass :func:`_linkable`, split by whether one site resolves them."""
    out = _Linkable({}, {})
    for name, name_sites in sites.of_name.items():
        if _linkable(name, max_definition_sites, len(name_sites)):
            if len(name_sites) == 1 and chunks[name_sites[0]].kind != "method":
                out.single[name] = name_sites[0]
            else:
                out.several[name] = sorted((t, chunk_file[t], chunks[t].kind == "method") for t in name_sites)
    return out


#: What :func:`_reference_pairs` reads of one chunk's text: the identifiers of its code text (:func:`code_text`)
#: and the names that follow a member access there (:func:`_member_pattern`); both empty for a chunk that has
#: no outgoing references (language ``text``, no text).
ChunkNames = tuple[frozenset[str], frozenset[str]]


def chunk_names(chunk: Chunk) -> ChunkNames:
    """The identifiers and member-access names of a chunk's code text (:data:`ChunkNames`).

    They depend on the chunk's language and text only, so :mod:`indexes.reuse` stores them per chunk text.

    :param chunk: the chunk, with text.
    :return: ``(identifiers, member names)``.
    """
    if chunk.language == TEXT or not chunk.text:
        return frozenset(), frozenset()
    text = code_text(chunk.text, chunk.language)
    return frozenset(IDENTIFIER.findall(text)), frozenset(_member_pattern(chunk.language).findall(text))


def _chunk_references(
    chunk: Chunk, used: set[str], members: AbstractSet[str], links: _Linkable, linkable: set[str], seen: set[int]
) -> set[int]:
    """The sites one chunk references: ``used`` are the linkable names in its code text (own names removed),
    ``members`` the names following a member access there, ``seen`` the files visible from its file (local
    preference, see the module docstring)."""
    targets: set[int] = set()
    if chunk.language in _IMPLICIT_RECEIVER_LANGUAGES:
        members = linkable
    for name in used:
        only = links.single.get(name)
        if only is not None:
            targets.add(only)
            continue
        candidates = links.several[name]
        if name not in members:
            candidates = [t for t in candidates if not t[2]]
        local = [t for t, f, _ in candidates if f in seen]
        targets.update(local or [t for t, _, _ in candidates])
    return targets


def _reference_pairs(
    chunks: Sequence[Chunk],
    chunk_file: Sequence[int],
    sites: _Sites,
    visible: list[set[int]],
    max_definition_sites: int,
    names: Sequence[ChunkNames] | None,
) -> tuple[list[int], list[int]]:
    """``references`` pairs: every code chunk -> the definition sites of the linkable names it uses (``names``:
    each chunk's :func:`chunk_names`, computed here when ``None``)."""
    links = _linkable_names(sites, chunks, chunk_file, max_definition_sites)
    linkable = links.names
    if names is None:
        names = [chunk_names(c) for c in chunks]
    ref_src: list[int] = []
    ref_dst: list[int] = []
    for i, c in enumerate(chunks):
        if c.language == TEXT:
            continue
        used = linkable.intersection(names[i][0])  # empty for a chunk without text (chunk_names), whose text
        # a graph worker may not have been sent
        if not used:
            continue
        used -= {name_of(s) for s in sites.chunk_symbols[i]}
        targets = _chunk_references(c, used, names[i][1], links, linkable, visible[chunk_file[i]])
        targets.discard(i)
        ref_src.extend([i] * len(targets))
        ref_dst.extend(targets)
    return ref_src, ref_dst


def build_graph(
    files: Sequence[SourceFile],
    chunks: Sequence[Chunk],
    max_definition_sites: int = MAX_DEFINITION_SITES,
    names: Sequence[ChunkNames] | None = None,
    imports: Mapping[str, ImportSpecs] | None = None,
) -> SymbolGraph:
    """Build the symbol graph of one snapshot.

    :param files: the snapshot's walked files (:func:`chunking.walk.walk_snapshot`); their text is read for
        imports.
    :param chunks: the files' chunks with text, from the ``function`` (or ``hybrid``) chunker
        (:func:`chunking.registry.chunk_files`); chunk ``i`` becomes node ``i``.
    :param max_definition_sites: names with more definition sites are not linked by ``references``.
    :param names: each chunk's :func:`chunk_names`, if known (taken from the cache by
        :func:`indexes.reuse.graph_names_reusing`); computed here when ``None``. The graph is the same either way.
    :param imports: path -> the file's :func:`~indexes.graph_imports.extract_imports`, for the files whose import
        statements are known (from the cache); the others' are read from their text. The same graph either way.
    :return: the graph (edges as described in the module docstring).
    :raises ValueError: if ``max_definition_sites < 1``, or ``names`` is not one entry per chunk.
    """
    if max_definition_sites < 1:
        raise ValueError(f"max_definition_sites must be >= 1, got {max_definition_sites}")
    if names is not None and len(names) != len(chunks):
        raise ValueError(f"names holds {len(names)} entries for {len(chunks)} chunks")
    with paused_gc():
        return _build_graph(files, chunks, max_definition_sites, names, imports)


def _build_graph(
    files: Sequence[SourceFile],
    chunks: Sequence[Chunk],
    max_definition_sites: int,
    names: Sequence[ChunkNames] | None,
    imports: Mapping[str, ImportSpecs] | None,
) -> SymbolGraph:
    # build_graph after its argument checks
    paths = sorted({f.path for f in files} | {c.path for c in chunks})
    file_id = {p: j for j, p in enumerate(paths)}
    n_chunks = len(chunks)
    n_nodes = n_chunks + len(paths)
    chunk_file = [file_id[c.path] for c in chunks]

    sites = _definition_sites(chunks, chunk_file)
    con_src, con_dst = _containment_pairs(sites, chunk_file, paths)
    imported = _imported_files(files, file_id, imports)
    imp_src = [n_chunks + fid for fid, targets in enumerate(imported) for _ in targets]
    imp_dst = [n_chunks + t for targets in imported for t in targets]
    visible = _visible_files(files, paths, file_id, imported)
    ref_src, ref_dst = _reference_pairs(chunks, chunk_file, sites, visible, max_definition_sites, names)

    config = {
        "max_definition_sites": max_definition_sites,
        "min_name_chars": MIN_NAME_CHARS,
        "stop_names_sha256": hashlib.sha256("\n".join(sorted(STOP_NAMES)).encode()).hexdigest(),
    }
    return SymbolGraph(
        n_chunks=n_chunks,
        files=paths,
        chunk_file=np.asarray(chunk_file, dtype=np.int32),
        symbols=sites.symbols,
        defines=Csr.from_pairs(sites.def_src, sites.def_dst, n_chunks, len(sites.symbols)),
        edges={
            "contains": Csr.from_pairs(con_src, con_dst, n_nodes, n_nodes),
            "references": Csr.from_pairs(ref_src, ref_dst, n_nodes, n_nodes),
            "imports": Csr.from_pairs(imp_src, imp_dst, n_nodes, n_nodes),
        },
        fingerprint=chunks_fingerprint(chunks),
        config=config,
    )
