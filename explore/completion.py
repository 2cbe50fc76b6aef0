"""File-set completion: from the code files a ranking trusts, the test files agents read next (issue 19).

Two sources, both over the snapshot's file list:

* **naming conventions** (:func:`conventional_test_names`): for a code file ``<dir>/<m>.<ext>`` the basenames its tests
  carry in its language, found anywhere in the snapshot (:func:`conventional_tests`), nearest directory first:

  ==========  ===================================================================================================
  Python      ``test_<m>.py``, ``<m>_test.py``, ``tests.py`` beside it; ``__init__.py`` counts as its package
  Go          ``<m>_test.go``
  JS / TS     ``<m>.test.<ext>``, ``<m>.spec.<ext>`` (``js jsx mjs cjs ts tsx``), and ``<m>.<ext>`` in ``__tests__/``
  Rust        ``<m>.rs`` and ``test_<m>.rs``, ``<m>_test.rs`` under a ``tests/`` directory (in-file ``mod tests``
              is the code file itself and adds nothing)
  Java        ``<M>Test.java``, ``<M>Tests.java``, ``Test<M>.java`` (``src/test/java`` mirrors ``src/main/java``)
  PHP         ``<M>Test.php``
  Ruby        ``<m>_spec.rb``, ``<m>_test.rb``, ``test_<m>.rb``
  C / C++     ``test_<m>.<ext>``, ``<m>_test.<ext>``, ``<m>_unittest.<ext>``, ``test<m>.<ext>`` (``c cc cpp cxx``),
              and ``<m>.<ext>`` under a ``test/`` or ``tests/`` directory
  ==========  ===================================================================================================

* **the symbol graph** (:func:`importing_tests`): test files with an ``imports`` edge to the code file.

A file is a test file when :func:`swe_explore.explore.features.is_test_path` says so.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence

from swe_explore.explore.features import is_test_path
from swe_explore.indexes.graph import SymbolGraph

__all__ = ["complete_tests", "conventional_test_names", "conventional_tests", "importing_tests"]

_JS = ("js", "jsx", "mjs", "cjs", "ts", "tsx")
_C = ("c", "cc", "cpp", "cxx", "h", "hpp")
_TEST_DIRS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__", "unittest", "unittests"})


def conventional_test_names(path: str) -> tuple[frozenset[str], frozenset[str]]:
    """The basenames of a code file's tests by its language's conventions (module docstring).

    :param path: the code file's path (``/``-separated).
    :return: ``(anywhere, in_test_dir)``: basenames a test may have in any directory, and basenames that count
        only inside a test directory (``tests/``, ``__tests__/``, ...). Both empty for an unknown extension.
    """
    base = posixpath.basename(path)
    stem, dot, ext = base.rpartition(".")
    if not dot or not stem:
        return frozenset(), frozenset()
    anywhere: set[str] = set()
    in_dir: set[str] = set()
    if ext == "py":
        if stem == "__init__":
            stem = posixpath.basename(posixpath.dirname(path)) or stem
        anywhere |= {f"test_{stem}.py", f"{stem}_test.py", f"test{stem}.py"}
        in_dir.add(f"{stem}.py")
    elif ext == "go":
        anywhere.add(f"{stem}_test.go")
    elif ext in _JS:
        for e in _JS:
            anywhere |= {f"{stem}.test.{e}", f"{stem}.spec.{e}"}
            in_dir.add(f"{stem}.{e}")
    elif ext == "rs":
        if stem in ("mod", "lib", "main"):
            stem = posixpath.basename(posixpath.dirname(path)) or stem
        in_dir |= {f"{stem}.rs", f"test_{stem}.rs", f"{stem}_test.rs", f"{stem}_tests.rs"}
    elif ext == "java":
        anywhere |= {f"{stem}Test.java", f"{stem}Tests.java", f"Test{stem}.java"}
    elif ext == "php":
        anywhere |= {f"{stem}Test.php"}
    elif ext == "rb":
        anywhere |= {f"{stem}_spec.rb", f"{stem}_test.rb", f"test_{stem}.rb"}
    elif ext in _C:
        for e in ("c", "cc", "cpp", "cxx"):
            anywhere |= {f"test_{stem}.{e}", f"{stem}_test.{e}", f"{stem}_unittest.{e}", f"test{stem}.{e}"}
            in_dir.add(f"{stem}.{e}")
    return frozenset(anywhere), frozenset(in_dir)


def _in_test_dir(path: str) -> bool:
    return any(part in _TEST_DIRS for part in path.split("/")[:-1])


def _distance(a: str, b: str) -> int:
    """Directory hops between two files (up from ``a``'s directory to the common prefix, then down to ``b``'s)."""
    da, db = a.split("/")[:-1], b.split("/")[:-1]
    common = 0
    for x, y in zip(da, db):
        if x != y:
            break
        common += 1
    return (len(da) - common) + (len(db) - common)


def conventional_tests(code_path: str, paths: Iterable[str], limit: int | None = 2) -> list[str]:
    """The snapshot's test files named after a code file by its language's conventions, nearest first.

    :param code_path: the code file.
    :param paths: every file of the snapshot.
    :param limit: at most this many (``None``: all).
    :return: paths other than ``code_path``, ordered by directory distance (:func:`_distance`), then path.
    """
    anywhere, in_dir = conventional_test_names(code_path)
    if not anywhere and not in_dir:
        return []
    found = []
    for p in paths:
        if p == code_path:
            continue
        name = posixpath.basename(p)
        if name in anywhere or (name in in_dir and _in_test_dir(p)):
            found.append(p)
    found.sort(key=lambda p: (_distance(code_path, p), p))
    return found if limit is None else found[:limit]


def importing_tests(graph: SymbolGraph | None, code_path: str, limit: int | None = 2) -> list[str]:
    """Test files that import a code file (``imports`` edges of the symbol graph), nearest directory first.

    :param graph: the snapshot's symbol graph (``None``: no edges, ``[]``).
    :param code_path: the code file.
    :param limit: at most this many (``None``: all).
    :return: the test files' paths.
    """
    if graph is None:
        return []
    try:
        node = graph.file_node(code_path)
    except (KeyError, ValueError):
        return []
    n = graph.n_chunks
    importers = [graph.files[int(i) - n] for i in graph.reverse("imports").row(node) if int(i) >= n]
    tests = sorted((p for p in importers if is_test_path(p)), key=lambda p: (_distance(code_path, p), p))
    return tests if limit is None else tests[:limit]


def complete_tests(
    code_paths: Sequence[str], paths: Iterable[str], graph: SymbolGraph | None = None, per_file: int = 2
) -> list[tuple[str, str, str]]:
    """The test files of some code files, by naming conventions then by imports, each once.

    :param code_paths: code files, most trusted first.
    :param paths: every file of the snapshot.
    :param graph: the symbol graph, for importing tests (optional).
    :param per_file: at most this many tests per code file and source.
    :return: ``(test_path, code_path, relation)`` triples, ``relation`` being ``"named"`` or ``"imports"``, in the
        order of ``code_paths``; test paths that are themselves in ``code_paths`` are left out.
    """
    all_paths = sorted(set(paths))
    taken = set(code_paths)
    out = []
    for code in code_paths:
        for relation, found in (
            ("named", conventional_tests(code, all_paths, per_file)),
            ("imports", importing_tests(graph, code, per_file)),
        ):
            for test in found:
                if test not in taken:
                    taken.add(test)
                    out.append((test, code, relation))
    return out
