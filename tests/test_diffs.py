"""Tests for benchprep/diffs.py: old-side gold regions and per-file statuses from hand-written unified diffs."""

from __future__ import annotations

import pytest

from swe_explore.benchprep.diffs import (
    DiffError,
    diff_path,
    parse_diff,
    regions_from_diff,
    unquote_c_style,
)


def _regions(text: str) -> list[tuple[str, int, int]]:
    return [(r.path, r.start, r.end) for r in parse_diff(text).regions]


MODIFIED = """\
diff --git a/pkg/core.py b/pkg/core.py
index 1111111..2222222 100644
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -0,0 +1,2 @@
+import os
+import sys
@@ -4 +6 @@ def load(path):
-    return open(path)
+    return open(path, encoding="utf-8")
@@ -10,3 +12 @@ class Cache:
-    a = 1
-    b = 2
-    c = 3
+    abc = 6
@@ -20,0 +19,2 @@ class Cache:
+    def clear(self):
+        self.items = {}
@@ -31,2 +32,0 @@ def main():
-    print("debug")
-    print("more")
"""


def test_one_region_per_hunk_old_side_and_insert_only_anchors() -> None:
    """Replace, multi-line replace and delete-only hunks cover their old lines; insertions anchor on the old line
    they follow (line 20), or line 1 for an insertion at the top of the file (-0,0)."""
    assert _regions(MODIFIED) == [
        ("pkg/core.py", 1, 1),  # -0,0: insertion before line 1
        ("pkg/core.py", 4, 4),  # -4 (length 1 when omitted)
        ("pkg/core.py", 10, 12),  # -10,3
        ("pkg/core.py", 20, 20),  # -20,0: insertion after old line 20
        ("pkg/core.py", 31, 32),  # -31,2 deleted
    ]
    (f,) = parse_diff(MODIFIED).files
    assert (f.status, f.old_path, f.new_path, f.added, f.removed) == ("modified", "pkg/core.py", "pkg/core.py", 6, 6)
    assert regions_from_diff(MODIFIED)[2] == {"path": "pkg/core.py", "start": 10, "end": 12}


def test_section_header_text_and_context_lines() -> None:
    """Section text after @@ is ignored; with 3 context lines the region is the whole old side (7-13)."""
    diff = """\
--- a/main.go
+++ b/main.go
@@ -7,7 +7,8 @@ func main() { // @@ -1,1 +1,1 @@ inside the section text
 a
 b
 c
-d
+D
+E
 e
 f
 g
"""
    assert _regions(diff) == [("main.go", 7, 13)]


def test_no_newline_at_end_of_file_markers() -> None:
    """``\\ No newline at end of file`` on both sides: the last old line (3) is the region, nothing more."""
    diff = """\
diff --git a/y.go b/y.go
index 4a3d8e8..0b0e96b 100644
--- a/y.go
+++ b/y.go
@@ -3 +3 @@ l2
-l3
\\ No newline at end of file
+L3
\\ No newline at end of file
"""
    assert _regions(diff) == [("y.go", 3, 3)]
    assert parse_diff(diff).files[0].added == 1


def test_two_files_no_state_leaks() -> None:
    """The second file's hunk starts right after the first file's last changed line (which has no newline at
    end of file): each file keeps its own path and numbers."""
    diff = """\
diff --git a/a.py b/a.py
index 1111111..2222222 100644
--- a/a.py
+++ b/a.py
@@ -98,3 +98,3 @@ def tail():
 x = 1
 y = 2
-z = 3
\\ No newline at end of file
+z = 4
\\ No newline at end of file
diff --git a/b.py b/b.py
index 3333333..4444444 100644
--- a/b.py
+++ b/b.py
@@ -101 +101,2 @@ def head():
-w = 0
+w = 1
+v = 2
"""
    assert _regions(diff) == [("a.py", 98, 100), ("b.py", 101, 101)]
    assert [(f.path, f.added, f.removed) for f in parse_diff(diff).files] == [("a.py", 1, 1), ("b.py", 2, 1)]


def test_renamed_and_modified_file_is_reported_not_guessed() -> None:
    """A rename with content changes: status ``renamed``, paths from rename from/to, no regions."""
    diff = """\
diff --git a/old/r.py b/new/r2.py
similarity index 96%
rename from old/r.py
rename to new/r2.py
index ac9837c..5cc678a 100644
--- a/old/r.py
+++ b/new/r2.py
@@ -15 +15 @@ line 14
-line 15
+LINE 15
"""
    (f,) = parse_diff(diff).files
    assert (f.status, f.old_path, f.new_path, f.regions) == ("renamed", "old/r.py", "new/r2.py", ())
    assert (f.added, f.removed) == (1, 1)


def test_pure_rename_copy_mode_only_binary_added_deleted() -> None:
    """Hunkless and one-sided entries each get their status and no region; the modified file keeps its region."""
    diff = """\
diff --git a/b.bin b/b.bin
index 88768ef..3e3315e 100644
Binary files a/b.bin and b/b.bin differ
diff --git a/m.sh b/m.sh
old mode 100644
new mode 100755
diff --git a/p.py b/q.py
similarity index 100%
rename from p.py
rename to q.py
diff --git a/c.py b/c2.py
similarity index 100%
copy from c.py
copy to c2.py
diff --git a/new.py b/new.py
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/new.py
@@ -0,0 +1,2 @@
+a = 1
+b = 2
diff --git a/gone.py b/gone.py
deleted file mode 100644
index 1111111..0000000
--- a/gone.py
+++ /dev/null
@@ -1 +0,0 @@
-a = 1
diff --git a/run.py b/run.py
old mode 100644
new mode 100755
index 5555555..6666666
--- a/run.py
+++ b/run.py
@@ -2 +2 @@
-x
+y
"""
    parsed = parse_diff(diff)
    got = [(f.old_path, f.new_path, f.status) for f in parsed.files]
    assert got == [
        ("b.bin", "b.bin", "binary"),
        ("m.sh", "m.sh", "mode_only"),
        ("p.py", "q.py", "renamed"),
        ("c.py", "c2.py", "copied"),
        (None, "new.py", "added"),
        ("gone.py", None, "deleted"),
        ("run.py", "run.py", "modified"),
    ]
    assert [(r.path, r.start, r.end) for r in parsed.regions] == [("run.py", 2, 2)]
    assert (parsed.files[-1].old_mode, parsed.files[-1].new_mode) == ("100644", "100755")
    assert parsed.status_counts == {
        "added": 1,
        "binary": 1,
        "copied": 1,
        "deleted": 1,
        "mode_only": 1,
        "modified": 1,
        "renamed": 1,
    }
    assert [f.path for f in parsed.files_with_status("added", "deleted")] == ["new.py", "gone.py"]


def test_symlink_and_submodule_are_reported() -> None:
    diff = """\
diff --git a/link b/link
index 1111111..2222222 120000
--- a/link
+++ b/link
@@ -1 +1 @@
-target_a.py
\\ No newline at end of file
+target_b.py
\\ No newline at end of file
diff --git a/ext/lib b/ext/lib
index 3333333..4444444 160000
--- a/ext/lib
+++ b/ext/lib
@@ -1 +1 @@
-Subproject commit 3333333333333333333333333333333333333333
+Subproject commit 4444444444444444444444444444444444444444
"""
    assert [f.status for f in parse_diff(diff).files] == ["symlink", "submodule"]
    assert parse_diff(diff).regions == []


def test_plain_diff_without_git_headers_or_prefixes() -> None:
    """``diff -u`` output: timestamps after a tab, no a/ b/ prefixes, a ``./`` prefix normalised away."""
    diff = """\
--- ./src/lib.rs\t2024-01-01 10:00:00.000000000 +0000
+++ ./src/lib.rs\t2024-01-02 10:00:00.000000000 +0000
@@ -5,2 +5,2 @@
-fn a() {}
-fn b() {}
+fn a() -> u8 { 0 }
+fn b() -> u8 { 1 }
"""
    assert _regions(diff) == [("src/lib.rs", 5, 6)]


def test_quoted_paths_are_unquoted() -> None:
    """git quotes names with a tab or non-ASCII bytes (octal UTF-8); a space gives a trailing tab instead."""
    diff = """\
diff --git "a/tab\\there.py" "b/tab\\there.py"
index 975fbec..1a78173 100644
--- "a/tab\\there.py"
+++ "b/tab\\there.py"
@@ -1 +1 @@
-y
+y2
diff --git "a/\\303\\251.py" "b/\\303\\251.py"
index b680253..67d0c15 100644
--- "a/\\303\\251.py"
+++ "b/\\303\\251.py"
@@ -2 +2 @@
-z
+z2
diff --git a/sp ace.py b/sp ace.py
index 587be6b..d735d34 100644
--- a/sp ace.py\t
+++ b/sp ace.py\t
@@ -3 +3 @@
-x
+x2
"""
    assert _regions(diff) == [("tab\there.py", 1, 1), ("\u00e9.py", 2, 2), ("sp ace.py", 3, 3)]


def test_unquote_and_path_rules() -> None:
    assert unquote_c_style('"a\\\\b\\"c\\n"') == 'a\\b"c\n'
    assert unquote_c_style("plain.py") == "plain.py"
    assert diff_path("/dev/null", "a/") is None
    assert diff_path("a/x.py", "a/") == "x.py"
    assert diff_path("b/a/x.py", "b/") == "a/x.py"  # only the side's own prefix, once
    assert diff_path("a\\win\\x.py", "b/") == "a/win/x.py"
    with pytest.raises(DiffError, match="not a repo-relative path"):
        diff_path("a/../etc/passwd", "a/")
    with pytest.raises(DiffError, match="not valid UTF-8"):
        unquote_c_style('"\\377.py"')


def test_malformed_diffs_raise_naming_the_source() -> None:
    short = """\
--- a/x.py
+++ b/x.py
@@ -1,3 +1,3 @@
-a
+b
"""
    with pytest.raises(DiffError, match=r"^commit abc: malformed diff"):
        parse_diff(short, where="commit abc")
    impossible = """\
--- a/x.py
+++ b/x.py
@@ -0,1 +1 @@
-a
+b
"""
    with pytest.raises(DiffError, match=r"x\.py: hunk .* starting at line 0"):
        parse_diff(impossible)
    twice = MODIFIED + MODIFIED
    with pytest.raises(DiffError, match="pkg/core.py appears twice"):
        parse_diff(twice)


def test_empty_diff_has_no_files() -> None:
    assert parse_diff("").files == ()
