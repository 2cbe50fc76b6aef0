"""One parse of a file's rows, as the ``function`` strategy (:mod:`~swe_explore.chunking.treesitter`) reads it:
where its definitions are (rule 2 of that module's docstring), how far up their comments and decorators reach
(rule 3), and rule 2b's checks for definitions that a parse error swallowed (a string, heredoc or template
literal that ran too far), with the re-parses those checks need and their budget (:class:`Recovery`).
:class:`ParseScan` holds this per-parse state; the chunking of the file builds on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from tree_sitter import Node, Tree

from swe_explore.chunking.languages import LanguageSpec, get_parser

__all__ = ["NodeFrame", "ParseScan", "Recovery", "last_row"]

_MAX_SINGLE_ROW_DEPTH = 3
"""How many levels of one-line non-definition nodes are searched for definitions (``export function f() {}``
on one line is found; the inside of long one-line expressions is not walked)."""

_MAX_RESTARTS = 4
"""Re-parses tried per stretch check once a stretch is found, to find the definition nearest to its start."""


@dataclass
class Recovery:
    """Limits and bookkeeping of the rule 2b re-parses of one file (shared by the parse and its re-parses).

    :param budget: bytes that may still be re-parsed.
    :param window_lines: window size of the ``hybrid_region`` fallback.
    """

    budget: int
    window_lines: int
    reparses: int = 0
    unchecked: int = 0  # stretch checks skipped because the budget could not pay for their re-parse
    trees: list[Tree] = field(default_factory=list)  # keeps re-parsed trees alive while their nodes are in use
    indents: list[int] = field(default_factory=list)  # leading whitespace width per row, filled on first use


NodeFrame = tuple[list[Node], int, "NodeFrame | None"]
"""Where a node sits: its parent's children, its index there, and the parent's own frame (``None`` at the
scope being searched)."""


def last_row(node: Node) -> int:
    """Last row holding a character of ``node`` (a node ending at column 0 ends on the previous row)."""
    end = node.end_point
    start_row = node.start_point.row
    if end.column == 0 and end.row > start_row:
        return end.row - 1
    return end.row


class ParseScan:
    """The definitions of one parse of a file's rows and rule 2b's checks on it.

    :param spec: the language's table.
    :param lines: the file's lines.
    :param blank: per row, whether it is blank.
    :param recovery: rule 2b's limits and bookkeeping, shared with re-parses; ``None``: no rule 2b (the tree
        has no error, or the caller does not want it).
    :param first_row: first row of the text this tree was parsed from (> 0 for a re-parse).
    """

    def __init__(
        self,
        spec: LanguageSpec,
        lines: Sequence[str],
        blank: Sequence[bool],
        recovery: Recovery | None = None,
        first_row: int = 0,
    ) -> None:
        self.spec = spec
        self.lines = lines
        self.blank = blank
        self.header_end = -1  # last row of the file's opening comment block (set by the chunking)
        self.recovery = recovery
        self.first_row = first_row
        self.root: Node | None = None  # the tree being read (set by the chunking)
        self.def_rows: set[int] = set()  # start rows of the definitions this parse found (rule 2b)
        self._error_prefix: list[int] | None = None

    # -- finding definitions -------------------------------------------------------------------------------

    def find_definitions(self, scope: Node) -> list[tuple[Node, NodeFrame]]:
        """Definitions under ``scope`` that are not inside another definition, in document order.

        Each comes with its :data:`NodeFrame` (sibling list, index, parent frame), so attachments and parents are
        read from lists instead of tree-sitter's ``prev_sibling``/``parent``, which are linear in the number of
        siblings (quadratic on minified or generated files).
        """
        found: list[tuple[Node, NodeFrame]] = []
        stack: list[tuple[Node, int, NodeFrame | None]] = [(scope, 0, None)]
        definitions, body_required = self.spec.definitions, self.spec.body_required
        while stack:
            node, single_depth, frame = stack.pop()
            children = node.children
            todo = []
            for index, child in enumerate(children):
                if not child.is_named:
                    continue
                # a definition: a definition type, with a body where its type needs one (inline: this loop sees
                # every node outside a definition)
                kind = child.type
                if kind in definitions and not (kind in body_required and child.child_by_field_name("body") is None):
                    found.append((child, (children, index, frame)))
                    continue
                if child.child_count == 0:
                    continue
                start_row = child.start_point.row
                end = child.end_point  # last_row, inlined
                if end.row > start_row and not (end.column == 0 and end.row - 1 == start_row):
                    todo.append((child, 0, (children, index, frame)))
                elif single_depth < _MAX_SINGLE_ROW_DEPTH:
                    todo.append((child, single_depth + 1, (children, index, frame)))
            stack.extend(reversed(todo))
        found.sort(key=lambda item: item[0].start_byte)
        return found

    # -- one definition -----------------------------------------------------------------------------------

    def _starts_line(self, node: Node) -> bool:
        """Whether ``node`` is the first thing on its line (only whitespace before it)."""
        point = node.start_point
        if point.column == 0:
            return True
        line = self.lines[point.row]
        return not line[: point.column].encode("utf-8", "surrogatepass")[: point.column].strip()

    def extended_start(self, node: Node, frame: NodeFrame) -> int:
        """First row of ``node`` with its directly preceding comments and decorators (rule 3).

        Comments in the file's opening comment block (starting on line 1) are the file's header and are never
        attached to a definition.
        """
        spec = self.spec
        start = node.start_point.row
        siblings, index, up = frame
        while True:
            for j in range(index - 1, -1, -1):
                sib = siblings[j]
                if not sib.is_named:  # a keyword such as ``export``/``template``: fine if on the same line
                    if sib.start_point.row >= start:
                        continue
                    break
                t = sib.type
                if t in spec.comments:
                    if not self._starts_line(sib):
                        break
                    if sib.start_point.row <= self.header_end and not (
                        last_row(sib) == start - 1 and self._is_doc(sib)
                    ):  # the file's opening comments, unless a doc comment directly above
                        break
                elif t not in spec.attachments:
                    break
                if last_row(sib) < start - 1 and not (t in spec.comments and self._doc_above(sib, start)):
                    break
                start = sib.start_point.row
            if up is None:
                return start
            parent_siblings, parent_index, parent_up = up
            if parent_siblings[parent_index].start_point.row != start:
                return start
            siblings, index, up = parent_siblings, parent_index, parent_up

    def _is_doc(self, comment: Node) -> bool:
        """Whether ``comment`` starts with one of the language's doc comment prefixes (``/**``, ``///``);
        ``////`` and ``/***`` banners are not doc comments."""
        text = self.lines[comment.start_point.row].lstrip()
        for prefix in self.spec.doc_comments:
            if text.startswith(prefix) and text[len(prefix) : len(prefix) + 1] not in ("/", "*"):
                return True
        return False

    def _doc_above(self, comment: Node, row: int) -> bool:
        """Whether ``comment`` is a doc comment with only blank rows between its end and ``row``."""
        if not self.spec.doc_comments or not self._is_doc(comment):
            return False
        return all(self.blank[r] for r in range(last_row(comment) + 1, row))

    # -- recovery from stretched regions (rule 2b) --------------------------------------------------------

    def _indents(self) -> list[int]:
        """Width of each row's leading whitespace (tabs to multiples of 8), computed once per file."""
        assert self.recovery is not None
        indents = self.recovery.indents
        if not indents:
            lines = self.lines
            indents.extend([len(line) - len(line.lstrip()) for line in lines])
            for row in [row for row, line in enumerate(lines) if "\t" in line]:
                indents[row] = len(lines[row][: indents[row]].expandtabs(8))
        return indents

    def _error_rows(self) -> list[int]:
        """Prefix counts of the rows covered by ERROR or MISSING nodes of this parse: rows ``a..b`` hold an
        error iff ``p[b + 1] > p[a]``."""
        if self._error_prefix is None:
            n_rows = len(self.lines)
            diff = [0] * (n_rows + 1)
            stack = [self.root] if self.root is not None else []
            while stack:
                node = stack.pop()
                if node.is_error or node.is_missing:
                    first = min(node.start_point.row, n_rows - 1)
                    diff[first] += 1
                    diff[min(max(first, last_row(node)) + 1, n_rows)] -= 1
                    continue
                stack.extend(child for child in node.children if child.has_error)
            covered = accumulate(diff[:n_rows])
            self._error_prefix = list(accumulate((depth > 0 for depth in covered), initial=0))
        return self._error_prefix

    def _token_at(self, row: int) -> Node | None:
        """The node of this parse holding the row's first non-blank character when that character lies inside it
        rather than at its start (a multi-line string, heredoc, template literal or comment); ``None`` when a
        token starts there."""
        assert self.root is not None
        line = self.lines[row]
        column = len(line[: len(line) - len(line.lstrip())].encode("utf-8", "surrogatepass"))
        node = self.root.descendant_for_point_range((row, column), (row, column))
        if node is None or (node.start_point.row == row and node.start_point.column == column):
            return None
        return node

    def _starts_token(self, row: int) -> bool:
        """Whether a token of this parse starts at the row's first non-blank character."""
        return self._token_at(row) is None

    def _inside_token(self, row: int, end: int | None = None) -> bool:
        """Whether the row's first non-blank character lies inside a multi-line token of this parse other than a
        comment: a string, heredoc or template literal, what runs too far when the lexer goes wrong. With
        ``end``, only a token that looks like it ran too far counts: its last row is covered by an ERROR or
        MISSING node (the text after it did not parse) or it reaches row ``end`` (the end of the definition). The
        token is taken with the ancestors starting where it starts (a heredoc body split by interpolations), and
        a closed string holding code, followed by code that parses, does not count."""
        node = self._token_at(row)
        if node is None or node.type in self.spec.comments:
            return False
        if end is None:
            return True
        last = last_row(node)
        start = node.start_point
        parent = node.parent
        while parent is not None and parent.start_point.row == start.row and parent.start_point.column == start.column:
            last = max(last, last_row(parent))
            parent = parent.parent
        prefix = self._error_rows()
        return last >= end or prefix[last + 1] > prefix[last]

    def _reparse(self, first: int, last: int, check: bool = False) -> Node | None:
        """Parse rows ``first..last`` alone, preceded by ``first`` newlines so that tree rows are file rows;
        ``None`` when the file's re-parse budget cannot pay for it (counted as unchecked for a ``check``)."""
        recovery = self.recovery
        text = "\n".join(self.lines[first : last + 1])
        data = text.encode("utf-8", "surrogatepass")
        grammar = self.spec.grammar_for(text)
        if recovery is None or grammar is None:
            return None
        if len(data) > recovery.budget:
            recovery.unchecked += check
            return None
        recovery.budget -= len(data)
        tree = get_parser(grammar).parse(b"\n" * first + data + b"\n")
        recovery.trees.append(tree)
        return tree.root_node

    def _missed_definition(self, root: Node, candidates: set[int]) -> int | None:
        """First row (with attached comments) of a definition of the re-parsed tree ``root`` that starts on a
        ``candidates`` row where this parse found no definition; ``None`` if there is none."""
        probe = ParseScan(self.spec, self.lines, self.blank)
        best: int | None = None
        stack = [root]
        while stack:
            scope = stack.pop()
            for node, frame in probe.find_definitions(scope):
                row = node.start_point.row
                if row in candidates and row not in self.def_rows:
                    start = probe.extended_start(node, frame)
                    best = start if best is None else min(best, start)
                elif node.type in self.spec.containers or node.has_error:
                    stack.append(node)
        return best

    def _member_indent(self, core: int, end: int) -> int:
        """Indentation of the first non-blank row after ``core`` up to ``end`` (a container's members), or -1."""
        indents = self._indents()
        blank = self.blank
        for row in range(core + 1, min(end, len(self.lines) - 1) + 1):
            if not blank[row]:
                return indents[row]
        return -1

    def _stretched_at(self, core: int, end: int, width: int) -> int | None:
        """Where a definition holding a parse error (rows ``core..end``) was stretched over definitions indented
        ``width`` or less that it does not contain, or ``None``.

        Candidates are the rows after ``core`` indented no deeper than ``width`` that lie inside a multi-line
        token of this parse other than a comment (a string, heredoc or template literal that ran too far,
        :meth:`_inside_token`). Rows from the first candidate to
        ``end`` are re-parsed alone (:meth:`_restart`), and a definition of that parse starting on a candidate
        row where this parse found none proves the stretch. Returns that definition's first row (with its
        attached comments).
        """
        end = min(end, len(self.lines) - 1)
        indents = self._indents()
        blank = self.blank
        shallow = [row for row in range(core + 1, end + 1) if indents[row] <= width and not blank[row]]
        candidates = [row for row in shallow if self._inside_token(row, end)]
        if not candidates:
            return None
        return self._restart(candidates, candidates, end)

    def _restart(self, restarts: list[int], candidates: list[int], end: int) -> int | None:
        """Re-parse rows ``restarts[0]..end`` alone and return the first row of the first definition of that parse
        starting on a ``candidates`` row where this parse found none (:meth:`_missed_definition`), or ``None``.

        When one is found at row ``p``, up to :data:`_MAX_RESTARTS` - 1 more restarts between ``restarts[0]`` and
        ``p`` are tried (the first restart row is often garbage, e.g. the rest of a broken string, which can hide
        the definition right after it); the earliest definition found wins.
        """
        wanted = set(candidates)
        root = self._reparse(restarts[0], end, check=True)
        point = None if root is None else self._missed_definition(root, wanted)
        if point is None:
            return None
        for row in restarts[1:_MAX_RESTARTS]:
            if row >= point:
                break
            root = self._reparse(row, end, check=True)
            found = None if root is None else self._missed_definition(root, wanted)
            if found is not None and found < point:
                point = found
                break
        return point

    def _gap_stretched_at(self, start: int, end: int) -> int | None:
        """Where definitions swallowed by a parse error start inside rows ``start..end`` outside every definition
        of the parsed text (a gap of the file or of a re-parse), or ``None``.

        Only rows from the second row of this parse on are checked, and only when some of them, indented no
        deeper than the first, lie inside an ERROR node and inside a multi-line token of this parse other than a
        comment (:meth:`_inside_token`). Candidates are those rows and the rows that start with a token of this
        parse. Rows from the first candidate starting a token to ``end`` are re-parsed alone, then (if that
        finds nothing) rows from the first candidate inside a token (:meth:`_restart`); a definition of such a
        parse starting on a candidate row proves the swallowing. Returns that definition's first row (with its
        attached comments).
        """
        prefix = self._error_rows()
        if prefix[end + 1] == prefix[start]:
            return None
        blank = self.blank
        indents = self._indents()
        rows = [row for row in range(max(start, self.first_row + 1), end + 1) if not blank[row]]
        if not rows:
            return None
        width = indents[rows[0]]
        inside_rows = [
            row for row in rows if indents[row] <= width and prefix[row + 1] > prefix[row] and self._inside_token(row)
        ]
        if not inside_rows:
            return None
        token_rows = [row for row in rows if self._starts_token(row)]
        candidates = sorted(set(token_rows) | set(inside_rows))
        for restarts in (token_rows, inside_rows):
            if restarts:
                point = self._restart(restarts, candidates, end)
                if point is not None:
                    return point
        return None
