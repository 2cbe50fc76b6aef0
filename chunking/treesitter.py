"""Syntax-aware chunk strategies on tree-sitter: ``function`` and ``hybrid``.

Both read only the per-language table of :mod:`chunking.languages`; no language has its own code path. Finding
definitions, their attachments and rule 2b's checks on one parse are in :mod:`chunking.treesitter_scan`.
The rules, in order (also in ``docs/chunking.md``):

1. **Parse** the file's text (its lines joined with ``"\\n"``, plus a final ``"\\n"``, UTF-8 encoded) with the
   language's grammar; without the final newline Go and C grammars report a MISSING node after a last-line
   ``type`` declaration or ``#endif``. Tree-sitter rows count ``"\\n"`` only, so row ``r`` is exactly line
   ``r + 1`` of :mod:`chunking.lines` whatever the bytes before it. A node ending at column 0 ends on
   the previous row.
   **Parse guard**: a file of more than ``max_parse_bytes`` bytes, or whose lines average more than
   ``max_line_bytes`` bytes (minified code), is not parsed but cut into windows (fallback ``too_large`` /
   ``long_lines``). Docs/config files (language ``text``) are always cut into windows.
2. **Definitions**: node types listed in the language's ``definitions`` are found anywhere outside other
   definitions (inside ``if`` blocks, ``export`` statements, ``extern "C"`` blocks, ...); a definition is not
   searched for nested definitions unless it is a **container** (class bodies, impl blocks, namespaces,
   modules) or it holds a parse error (then definitions swallowed by error recovery become regions of their
   own, so an error never yields one region spanning the rest of the file).
2b. **Stretched regions** (files with ERROR or MISSING nodes only). Error recovery can also let a string,
   heredoc or template literal run too far (a Ruby heredoc nested in an interpolation, an unterminated Python
   docstring, a JavaScript template literal): then the definitions it swallowed are no nodes at all, and one
   definition, or one ERROR gap, spans them. Each definition holding an error is checked: *candidates* are the
   rows after its first row, indented no deeper than it, that lie inside a multi-line token other than a
   comment which ran too far (the text after it does not parse, or it reaches the definition's end). The rows
   from the first candidate to the definition's end are parsed alone; a definition of that parse starting on a
   candidate row where the file's parse found none proves the stretch. The stretched definition then ends above
   that definition (and its attached comments), and the rows from there to the end of the enclosing scope (the
   file, or the container) are chunked from a parse of those rows alone, by all these rules again (a
   container's symbol qualifies what is found inside it). Containers are also checked for swallowed members
   (candidates indented no deeper than their first member), and gaps of the file covered by ERROR nodes for
   swallowed definitions (candidates: rows starting a token, and rows inside both an ERROR node and such a
   token). At most :data:`MAX_REPARSE_DEPTH` re-parses nest and :data:`REPARSE_BUDGET` times the file's bytes
   are re-parsed; beyond, the rest of the scope is cut into ``hybrid``'s windows. The file's report says
   ``fallback="reparse"`` (or ``"hybrid_region"`` when windows were needed), with the regions cut and the lines
   re-chunked; checks skipped for the budget are counted as ``unchecked``.
3. **Attachments**: comments that start their line, and decorator/attribute/template-prefix nodes, directly
   above a definition (previous siblings, no blank line between) belong to it; when the definition starts a
   wrapper (``export``, ``decorated_definition``, ``template_declaration``, a ``const f = () =>`` declaration)
   the wrapper's preceding siblings are considered too. A doc comment (``/**``, ``///``: the language's
   ``doc_comments``) also belongs to the definition below it across blank lines. Comments of the file's
   opening comment block (starting on line 1) are the file's header and are not attached, except a doc
   comment directly above the definition. C-family **macro guard**: a definition whose header (start to body)
   spans a blank line starts after it (undeclared macros parsed into it).
4. **Containers** are chunked at the method level: the lines from the container's first line up to its first
   nested definition form a ``header`` chunk (signature, docstring, fields); other container lines outside
   nested definitions (fields between methods, the closing brace) form ``gap`` chunks carrying the
   container's symbol. Symbols are qualified with the enclosing containers (``Circle.area``), Go methods with
   their receiver type (``Circle.Area``), and ``::``/``\\`` inside names become ``.`` (C++ ``Circle::Scaled``
   -> ``Circle.Scaled``). A function inside a container is a ``method``. Containers nested deeper than
   :data:`MAX_CONTAINER_DEPTH` are not descended.
5. **Gaps**: file lines outside every definition (imports, constants, module-level statements) form ``gap``
   chunks, one per run between definitions, so every non-blank line is in some chunk.
6. **Overlaps**: two definitions sharing a line (``}; function b() {``) are merged into one chunk; attached
   comments never reach into the previous chunk. Chunks of this strategy never overlap.
7. **Trimming and splitting**: leading and trailing blank lines of every chunk are dropped. A chunk
   longer than ``max_lines`` is split at child-node boundaries (children of the definition, expanded while
   a child is itself too long), greedily packed up to ``max_lines``; a comment or attachment starting its line
   is glued to the code on the next row (and the definition's attached comments to its first row), so a cut
   never separates them; a single node still too long is cut into ``max_lines`` windows. Every piece keeps the
   kind and symbol of the chunk it came from.
8. **Merging** (``merge_small``): consecutive chunks shorter than ``min_lines`` are joined (left to right,
   until the group reaches ``min_lines``); a chunk still shorter than ``min_lines`` is then merged into its
   shorter neighbour. A merge never makes a chunk span more than ``max_lines`` lines; the merged chunk takes
   the kind of the longer part and the symbols of both (``"a, b"``).

``hybrid`` does the same for files that parse cleanly and windows (fallback ``parse_error``) for files whose
tree has ERROR or MISSING nodes. Files that parse cleanly never reach rule 2b, so their chunks do not depend on
it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from tree_sitter import Node

from swe_explore.chunking.languages import TEXT, LanguageSpec, get_parser, get_spec
from swe_explore.chunking.treesitter_scan import ParseScan, Recovery, last_row
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.chunking.window import Chunker, FileReport, blank_flags, block_ranges, make_chunk, pack_ranges

MAX_CONTAINER_DEPTH = 48
"""Containers nested deeper than this are treated as single definitions (split by size), which bounds the
recursion of the container walk; everything else is iterative."""

_MAX_NAME_DEPTH = 6
"""How deep a name is searched through nested name fields (C declarator chains)."""

_MAX_SYMBOL_CHARS = 200

MAX_SYMBOLS = 16
"""A merged chunk (definitions sharing a line, or ``merge_small``) names at most this many symbols."""

_C_CALL_NAME = re.compile(r"([A-Za-z_~][\w:~]*)\s*\(")
"""Name of a C-family function from its header text, used when the macro guard moved its start."""

DEFINITION_KINDS = frozenset({"function", "method", "class", "header", "definition"})
"""Chunk kinds that hold (part of) a definition, as opposed to ``gap``/``window``/``file``."""

MAX_REPARSE_DEPTH = 8
"""Re-parses nested in re-parses (rule 2b: each stretched region found inside the rows of a re-parse needs one
more) at most; a stretched region found deeper gets hybrid's windows (fallback ``hybrid_region``)."""

REPARSE_BUDGET = 4
"""Rule 2b re-parses at most this many times the file's bytes in all; a stretched region found once the budget is
spent gets hybrid's windows (fallback ``hybrid_region``), and no more regions are checked."""


@dataclass
class _Region:
    """A run of 0-based rows ``start..end`` with what it holds; ``node`` is used to split it if too long."""

    start: int
    end: int
    core: int
    kind: str
    symbols: tuple[str, ...]
    node: Node | None
    origin: int = 0
    """0 for rows of the file's own parse, else the number of the re-parse (rule 2b) that produced the region."""


def _join_symbols(*groups: tuple[str, ...]) -> tuple[str, ...]:
    """Union of symbol tuples, order kept, empties and duplicates dropped, at most :data:`MAX_SYMBOLS`."""
    out: dict[str, None] = {}
    for group in groups:
        for sym in group:
            if sym:
                out[sym] = None
                if len(out) >= MAX_SYMBOLS:
                    return tuple(out)
    return tuple(out)


class _FileChunking(ParseScan):
    """The function strategy applied to one parsed file (state shared by the steps of the algorithm); finding
    definitions and rule 2b's checks come from :class:`~swe_explore.chunking.treesitter_scan.ParseScan`."""

    def __init__(
        self,
        spec: LanguageSpec,
        lines: Sequence[str],
        blank: Sequence[bool],
        max_lines: int,
        recovery: Recovery | None = None,
        first_row: int = 0,
        level: int = 0,
    ) -> None:
        super().__init__(spec, lines, blank, recovery, first_row)
        self.max_lines = max_lines
        self.level = level  # number of re-parses this tree is nested in

    # -- names ---------------------------------------------------------------------------------------------

    def _receiver_type(self, node: Node) -> str:
        """Type name of a method's receiver (Go ``func (c *Circle[T]) Area()`` -> ``Circle``), ``""`` if none."""
        field_name = self.spec.receiver_field
        receiver = node.child_by_field_name(field_name) if field_name else None
        if receiver is None:
            return ""
        stack = [receiver]
        while stack:
            current = stack.pop()
            if current.type.endswith("type_identifier") and current.text is not None:
                return current.text.decode("utf-8", "replace")
            stack.extend(reversed(current.named_children))
        return ""

    def _name_node(self, node: Node, depth: int) -> Node | None:
        for field_name in self.spec.name_fields:
            child = node.child_by_field_name(field_name)
            if child is None:
                continue
            if (
                child.named_child_count == 0
                or "identifier" in child.type
                or child.type in self.spec.qualified_names
                or depth >= _MAX_NAME_DEPTH
            ):
                return child
            inner = self._name_node(child, depth + 1)
            return inner if inner is not None else child
        return None

    def symbol_name(self, node: Node, parent: Node | None) -> tuple[str, int]:
        """The definition's own (unqualified) name and the row it is on; ``("", -1)`` when it has none."""
        spec = self.spec
        name: Node | None = self._name_node(node, 0)
        if name is None:
            for child in node.named_children:
                if child.type in spec.comments or child.type in spec.attachments:
                    continue
                name = self._name_node(child, 1)
                break
        if name is None and spec.parent_name_fields and parent is not None:
            for field_name in spec.parent_name_fields:
                field_child = parent.child_by_field_name(field_name)
                if field_child is not None and field_child.id != node.id:
                    name = field_child
                    break
        if name is None or name.text is None:
            return "", -1
        text = name.text.decode("utf-8", "replace")
        return " ".join(text.split())[:_MAX_SYMBOL_CHARS], name.start_point.row

    def _macro_guard(self, node: Node, core: int) -> int:
        """Row where a C-family definition really starts when undeclared macros above it were parsed into it.

        If the header (definition start to body start) spans a blank line, the definition starts after the
        last such blank line (docs/chunking.md, rule 6); otherwise ``core`` is returned unchanged.
        """
        body = node.child_by_field_name("body")
        if body is None:
            return core
        body_row = body.start_point.row
        for row in range(body_row - 1, core, -1):
            if self.blank[row]:
                return row + 1
        return core

    # -- regions ------------------------------------------------------------------------------------------

    def regions(
        self,
        scope: Node,
        scope_symbol: str,
        in_container: bool,
        depth: int,
        scope_end: int,
        scope_symbols: tuple[str, ...],
    ) -> list[_Region]:
        """Disjoint, sorted regions for the definitions under ``scope`` (rules 2-4 and 6; rule 2b when
        recovering), ``scope_end`` being the scope's last row and ``scope_symbols`` the symbols of its gaps."""
        spec = self.spec
        recovery = self.recovery
        out: list[_Region] = []
        for node, frame in self.find_definitions(scope):
            core = node.start_point.row
            if recovery is not None:
                self.def_rows.add(core)
            start = self.extended_start(node, frame)
            end = last_row(node)
            up = frame[2]
            name, name_row = self.symbol_name(node, up[0][up[1]] if up is not None else scope)
            guarded = self._macro_guard(node, core) if spec.header_blank_guard else core
            if guarded != core:
                start = core = guarded
                if name_row < guarded:
                    match = _C_CALL_NAME.search(" ".join(self.lines[guarded : end + 1][:8]))
                    name = match.group(1) if match else ""
            for separator in spec.scope_separators:
                name = name.replace(separator, ".")
            receiver = self._receiver_type(node) if spec.receiver_field else ""
            if receiver and name:
                name = f"{receiver}.{name}"
            symbol = f"{scope_symbol}.{name}" if scope_symbol and name else name
            kind = spec.definitions[node.type]
            if kind == "function" and in_container:
                kind = "method"
            is_container = node.type in spec.containers
            item = [_Region(start, end, core, kind, (symbol,), node)]
            if (is_container or node.has_error) and depth < MAX_CONTAINER_DEPTH:
                inner_symbol = symbol if is_container else scope_symbol
                inner_in_container = (node.type not in spec.namespaces) if is_container else in_container
                inner = self.regions(node, inner_symbol, inner_in_container, depth + 1, end, (symbol,))
                inner = [r for r in inner if r.start >= start and r.end <= end]
                if inner:
                    first_kind = "header" if is_container else kind
                    item = self._fill(start, end, inner, first_kind, (symbol,), node)
                if is_container and recovery is not None and node.has_error and not any(r.origin for r in item):
                    member = self._member_indent(core, end)  # members swallowed inside the container
                    point = self._stretched_at(core, end, member) if member > self._indents()[core] else None
                    if point is not None:
                        tail = self._rechunk(point, end, (symbol,), inner_symbol, inner_in_container, depth + 1)
                        item = _cut(item, point)
                        if item and item[0].start == start:
                            item[0].kind = "header"  # the container's lines above its (recovered) members
                        item = _joined(item, tail)
            if recovery is not None and node.has_error:
                point = self._stretched_at(core, end, self._indents()[core])  # siblings swallowed
                if point is not None:  # rule 2b: the rest of the scope comes from a re-parse
                    out.extend(_cut(item, point))
                    out.extend(self._rechunk(point, scope_end, scope_symbols, scope_symbol, in_container, depth))
                    break
            out.extend(item)
        return self._resolve_overlaps(out)

    # -- recovery from stretched regions (rule 2b) --------------------------------------------------------

    def _recover_runs(
        self,
        filled: list[_Region],
        inner: list[_Region],
        last: int,
        symbols: tuple[str, ...],
        scope_symbol: str,
        in_container: bool,
        depth: int,
    ) -> list[_Region]:
        """``filled`` (the regions of a parsed text up to row ``last``) with the rows from the first gap outside
        ``inner`` that swallowed definitions (:meth:`_gap_stretched_at`) to ``last`` re-chunked from a re-parse."""
        inner_ids = {id(region) for region in inner}
        for region in filled:
            if id(region) in inner_ids:
                continue
            point = self._gap_stretched_at(region.start, min(region.end, len(self.lines) - 1))
            if point is not None:
                return _joined(
                    _cut(filled, point), self._rechunk(point, last, symbols, scope_symbol, in_container, depth)
                )
        return filled

    def _rechunk(
        self,
        first: int,
        last: int,
        symbols: tuple[str, ...],
        scope_symbol: str,
        in_container: bool,
        depth: int,
    ) -> list[_Region]:
        """Regions covering rows ``first..last`` of a scope from a parse of those rows alone (rule 2b, applied
        again inside), or hybrid's blank-line aligned windows once :data:`MAX_REPARSE_DEPTH` or
        :data:`REPARSE_BUDGET` is reached. Gaps carry ``symbols``; definitions are qualified with
        ``scope_symbol``."""
        recovery = self.recovery
        assert recovery is not None
        recovery.reparses += 1
        origin = recovery.reparses
        root = self._reparse(first, last) if self.level < MAX_REPARSE_DEPTH else None
        if root is None:
            windows = block_ranges(self.blank, first, last, recovery.window_lines)
            return [_Region(s, e, s, "window", (), None, origin) for s, e in windows]
        sub = _FileChunking(self.spec, self.lines, self.blank, self.max_lines, recovery, first, self.level + 1)
        out = sub.scope_regions(root, first, last, symbols, scope_symbol, in_container, depth)
        for region in out:
            if not region.origin:
                region.origin = origin
        return out

    @staticmethod
    def _resolve_overlaps(regions: list[_Region]) -> list[_Region]:
        regions.sort(key=lambda r: (r.start, r.end))
        out: list[_Region] = []
        for region in regions:
            if out and region.start <= out[-1].end:
                prev = out[-1]
                if region.core > prev.end:  # only attached comments reach back: cut them off
                    region.start = prev.end + 1
                else:  # two definitions share a line: one chunk
                    prev.end = max(prev.end, region.end)
                    prev.symbols = _join_symbols(prev.symbols, region.symbols)
                    continue
            out.append(region)
        return out

    @staticmethod
    def _fill(
        start: int,
        end: int,
        inner: list[_Region],
        first_kind: str,
        symbols: tuple[str, ...],
        node: Node | None,
    ) -> list[_Region]:
        """``inner`` plus regions for the rows of ``start..end`` outside it (first run ``first_kind``, the
        others ``gap``)."""
        out: list[_Region] = []
        row = start
        for region in inner:
            if region.start > row:
                out.append(_Region(row, region.start - 1, row, first_kind if row == start else "gap", symbols, node))
            out.append(region)
            row = max(row, region.end + 1)
        if row <= end:
            out.append(_Region(row, end, row, first_kind if row == start else "gap", symbols, node))
        return out

    # -- trimming and splitting ---------------------------------------------------------------------------

    def trim(self, start: int, end: int) -> tuple[int, int] | None:
        """``start..end`` without leading/trailing blank rows, ``None`` if all blank."""
        blank = self.blank
        while start <= end and blank[start]:
            start += 1
        while end >= start and blank[end]:
            end -= 1
        return (start, end) if start <= end else None

    def split(self, node: Node | None, start: int, end: int) -> list[tuple[int, int]]:
        """Rows ``start..end`` cut into pieces of at most ``max_lines`` rows at child boundaries of ``node``.

        Children are taken in document order and expanded into their own children while too long; children
        sharing a row form one segment, and a comment or attachment that starts its line is glued to what
        follows on the next row (as are the rows above the first child: the definition's attached comments),
        so a piece boundary never separates a comment from the code it documents. A child is also expanded
        when it would make its glued segment too long.
        """
        max_lines = self.max_lines
        glue_types = self.spec.comments | self.spec.attachments
        segments: list[tuple[int, int]] = []
        seg_start = seg_end = -1  # the open segment
        glue = False  # the open segment ends with a comment/attachment belonging to what follows
        if node is not None:
            stack = list(reversed(node.children))
            while stack:
                child = stack.pop()
                c_start = child.start_point.row
                c_end = last_row(child)
                if c_end < start or c_start > end:
                    continue
                if seg_start < 0 and c_start > start:  # rows above the first child: attached comments
                    seg_start, seg_end, glue = start, c_start - 1, True
                joins = seg_start >= 0 and (c_start <= seg_end or (glue and c_start == seg_end + 1))
                inside = start <= c_start and c_end <= end
                span = c_end - (seg_start if joins else c_start) + 1
                if child.child_count and (not inside or span > max_lines):
                    stack.extend(reversed(child.children))
                    continue
                a_start, a_end = max(c_start, start), min(c_end, end)
                if joins:
                    seg_end = max(seg_end, a_end)
                else:
                    if seg_start >= 0:
                        segments.append((seg_start, seg_end))
                    seg_start, seg_end = a_start, a_end
                glue = child.type in glue_types and a_end == seg_end and self._starts_line(child)
        if seg_start >= 0:
            segments.append((seg_start, seg_end))
        else:
            segments.append((start, end))
        pieces = pack_ranges(segments, max_lines)
        # Partition start..end at the pieces' starts so that no row between pieces is lost.
        starts = [start] + [p[0] for p in pieces[1:]]
        bounds = [(s, (starts[i + 1] - 1) if i + 1 < len(starts) else end) for i, s in enumerate(starts)]
        out = []
        for s, e in bounds:
            trimmed = self.trim(s, e)
            if trimmed is None:
                continue
            if trimmed[1] - trimmed[0] + 1 > max_lines:  # blank rows inside a cut window: cut again
                out.extend(pack_ranges([trimmed], max_lines))
            else:
                out.append(trimmed)
        return out

    # -- the whole file -----------------------------------------------------------------------------------

    def chunk_rows(self, root: Node) -> list[_Region]:
        """All regions of the file: definitions, headers and gaps, trimmed and split (rules 2-7)."""
        n_rows = len(self.lines)
        for child in root.named_children:  # the opening comment block: contiguous comments from line 1
            if child.type not in self.spec.comments or child.start_point.row > self.header_end + 1:
                break
            self.header_end = last_row(child)
        regions = self.scope_regions(root, 0, n_rows - 1, (), "", False, 0)
        out: list[_Region] = []
        for region in regions:
            trimmed = self.trim(region.start, region.end)
            if trimmed is None:
                continue
            start, end = trimmed
            if end - start + 1 <= self.max_lines:
                out.append(_Region(start, end, start, region.kind, region.symbols, None, region.origin))
                continue
            for s, e in self.split(region.node, start, end):
                out.append(_Region(s, e, s, region.kind, region.symbols, None, region.origin))
        return out

    def scope_regions(
        self,
        root: Node,
        first: int,
        last: int,
        symbols: tuple[str, ...],
        scope_symbol: str,
        in_container: bool,
        depth: int,
    ) -> list[_Region]:
        """Regions covering rows ``first..last`` (the whole text of this parse): definitions, then gaps carrying
        ``symbols``, before trimming and splitting."""
        self.root = root
        regions = self.regions(root, scope_symbol, in_container, depth, last, symbols)
        regions = [r for r in regions if r.start <= last]
        for r in regions:
            r.end = min(r.end, last)
        filled = self._fill(first, last, regions, "gap", symbols, root)
        if self.recovery is not None:
            filled = self._recover_runs(filled, regions, last, symbols, scope_symbol, in_container, depth)
        return filled


def _cut(regions: list[_Region], row: int) -> list[_Region]:
    """The parts of sorted, disjoint ``regions`` above ``row`` (a region reaching ``row`` ends just above it)."""
    out = []
    for region in regions:
        if region.start >= row:
            break
        if region.end >= row:
            region.end = row - 1
        out.append(region)
    return out


def _joined(head: list[_Region], tail: list[_Region]) -> list[_Region]:
    """``head + tail``, the last gap of ``head`` and a first gap of ``tail`` with the same symbols made one."""
    if head and tail and head[-1].kind == tail[0].kind == "gap" and head[-1].symbols == tail[0].symbols:
        head[-1].end = tail[0].end
        return head + tail[1:]
    return head + tail


def _merged(a: _Region, b: _Region) -> _Region:
    """One region spanning ``a`` then ``b`` (kind of the longer, symbols of both)."""
    kind = a.kind if a.end - a.start >= b.end - b.start else b.kind
    return _Region(a.start, b.end, a.start, kind, _join_symbols(a.symbols, b.symbols), None)


def _merge_small(regions: list[_Region], min_lines: int, max_lines: int) -> list[_Region]:
    """Rule 8: merge chunks shorter than ``min_lines`` with a neighbour, never beyond ``max_lines`` lines.

    Pass 1 joins runs of consecutive short chunks (left to right, until the group reaches ``min_lines``);
    pass 2 merges each chunk still short into its shorter neighbour. Both passes are linear.
    """

    def size(r: _Region) -> int:
        return r.end - r.start + 1

    grouped: list[_Region] = []
    for region in regions:
        if grouped:
            prev = grouped[-1]
            if size(prev) < min_lines and size(region) < min_lines and region.end - prev.start + 1 <= max_lines:
                grouped[-1] = _merged(prev, region)
                continue
        grouped.append(region)
    out: list[_Region] = []
    i = 0
    while i < len(grouped):
        region = grouped[i]
        if size(region) < min_lines:
            before = out[-1] if out else None
            nxt = grouped[i + 1] if i + 1 < len(grouped) else None
            fits_prev = before is not None and region.end - before.start + 1 <= max_lines
            fits_next = nxt is not None and nxt.end - region.start + 1 <= max_lines
            if before is not None and fits_prev and (nxt is None or not fits_next or size(before) <= size(nxt)):
                out[-1] = _merged(before, region)
                i += 1
                continue
            if fits_next:
                grouped[i + 1] = _merged(region, nxt)  # type: ignore[arg-type]
                i += 1
                continue
        out.append(region)
        i += 1
    return out


@dataclass(frozen=True)
class FunctionChunker(Chunker):
    """Definitions (functions, methods, classes, ...) with their comments and decorators, plus gap chunks.

    See the module docstring for the rules. Chunks never overlap, and every non-blank line of a file is in
    exactly one chunk. Regions that a parse error stretched over other definitions are cut and the rest of their
    scope re-chunked from a re-parse (rule 2b; the report's ``fallback`` is then ``reparse`` or
    ``hybrid_region``).

    :param max_lines: longest chunk in lines; longer definitions are split at child boundaries (default 120).
    :param min_lines: chunks shorter than this are merged with a neighbour when ``merge_small`` (default 5).
    :param merge_small: merge short neighbouring chunks up to ``max_lines`` (default false: every chunk is one
        definition, header or gap).
    :param window_lines: longest window, in lines, for docs/config files and files not parsed (default 80).
    :param max_parse_bytes: larger files are not parsed but windowed (fallback ``too_large``; default 1 MiB).
    :param max_line_bytes: files whose lines average more bytes than this are not parsed but windowed
        (minified code; fallback ``long_lines``; default 1000).
    :raises ValueError: if a size or limit is below 1.
    """

    name: ClassVar[str] = "function"
    max_lines: int = 120
    min_lines: int = 5
    merge_small: bool = False
    window_lines: int = 80
    max_parse_bytes: int = 1024 * 1024
    max_line_bytes: int = 1000

    _fallback_on_error: ClassVar[bool] = False

    def __post_init__(self) -> None:
        for key in ("max_lines", "min_lines", "window_lines", "max_parse_bytes", "max_line_bytes"):
            if getattr(self, key) < 1:
                raise ValueError(f"{self.name} chunker: {key} must be >= 1, got {getattr(self, key)}")

    def _windows(self, source: SourceFile, blank: list[bool], kind: str = "window") -> list[Chunk]:
        return [
            make_chunk(source, s + 1, e + 1, kind)
            for s, e in block_ranges(blank, 0, len(source.lines) - 1, self.window_lines)
        ]

    def chunk_file_report(self, source: SourceFile) -> tuple[list[Chunk], FileReport]:
        """Chunk one file by its syntax (or by windows for text files, guarded and, for hybrid, broken files).

        :param source: the file.
        :return: ``(chunks, report)``; chunks sorted by line, non-overlapping.
        :raises ValueError: if the file's language is unknown.
        """
        if not source.lines:
            return [], FileReport()
        spec = get_spec(source.language) if source.language else get_spec(TEXT)
        blank = blank_flags(source.lines)
        text = source.text
        grammar = spec.grammar_for(text)
        if grammar is None:
            return self._windows(source, blank), FileReport()
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > self.max_parse_bytes:
            return self._windows(source, blank), FileReport(fallback="too_large")
        if len(data) > self.max_line_bytes * len(source.lines):
            return self._windows(source, blank), FileReport(fallback="long_lines")
        tree = get_parser(grammar).parse(data + b"\n")  # a final newline: Go and C need one after the last line
        root = tree.root_node
        has_error = root.has_error
        if has_error and self._fallback_on_error:
            return self._windows(source, blank), FileReport(parsed=True, parse_error=True, fallback="parse_error")
        recovery = Recovery(REPARSE_BUDGET * len(data), self.window_lines) if has_error else None
        work = _FileChunking(spec, source.lines, blank, self.max_lines, recovery)
        regions = work.chunk_rows(root)
        report = FileReport(parsed=True, parse_error=has_error)
        if recovery is not None:
            origins = {r.origin for r in regions if r.origin}
            fallback = None
            if origins:
                fallback = "hybrid_region" if any(r.kind == "window" for r in regions) else "reparse"
            report = FileReport(
                parsed=True,
                parse_error=True,
                fallback=fallback,
                stretched=len(origins),
                recovered_lines=sum(r.end - r.start + 1 for r in regions if r.origin),
                unchecked=recovery.unchecked,
            )
        if self.merge_small:
            regions = _merge_small(regions, self.min_lines, self.max_lines)
        chunks = [make_chunk(source, r.start + 1, r.end + 1, r.kind, ", ".join(r.symbols)) for r in regions]
        return chunks, report


@dataclass(frozen=True)
class HybridChunker(FunctionChunker):
    """:class:`FunctionChunker` where the grammar parses a file cleanly; blank-line aligned windows of at most
    ``window_lines`` lines (fallback ``parse_error``) where the tree has ERROR or MISSING nodes.

    Same options as :class:`FunctionChunker`.
    """

    name: ClassVar[str] = "hybrid"
    _fallback_on_error: ClassVar[bool] = True
