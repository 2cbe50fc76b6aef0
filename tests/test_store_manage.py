"""Store management (issue 22): store list / du / gc on hand-made stores with known sizes, the last-use mark, the
one ``indexes:`` line of the commands, and a prebuilt store moved with its snapshots and queried read-only."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swe_explore import MINI_REPOS
from swe_explore.chunking.registry import make_chunker
from swe_explore.chunking.walk import WalkConfig
from swe_explore.commands.explore import main as explore_main
from swe_explore.commands.run import main as run_main
from swe_explore.commands.store import format_size
from swe_explore.commands.store import main as store_main
from swe_explore.explore.explorer import IndexedExplorer, make_explorer
from swe_explore.indexes.build import ensure_index
from swe_explore.indexes.manage import (
    USED_FILE,
    NotAStoreError,
    collect_garbage,
    disk_usage,
    list_store,
    mark_used,
    parse_date,
    store_name,
)
from swe_explore.indexes.store import check_snapshot_name, snapshot_key
from swe_explore.retrievers.registry import make_retriever

QUERY = "cart total discount"
DAY = 86400.0
T_2026 = 1767225600.0  # 2026-01-01T00:00:00Z


def _write(path: Path, data: bytes) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return len(data)


def _entry(store: Path, name: str, folder: Path, graph: bool) -> dict[str, int]:
    """One snapshot entry by hand: a chunk table manifest, a 1000-byte chunk file, a BM25 directory and, with
    ``graph``, a 300-byte graph. Returns the bytes written per kind."""
    cdir = store / name / "function-0123abcd"
    manifest = json.dumps({"chunker": {"name": "function"}, "snapshot": {"path": str(folder)}}).encode()
    sizes = {"indexes": _write(cdir / "manifest.json", manifest) + _write(cdir / "chunks.npz", b"x" * 1000)}
    rdir = cdir / "retrievers" / "bm25-89abcdef"
    sizes["indexes"] += _write(rdir / "manifest.json", b'{"retriever": {"name": "bm25"}}')
    sizes["indexes"] += _write(rdir / "data" / "retriever.json", b"y" * 200)
    sizes["graph"] = _write(cdir / "graph" / "graph.npz", b"g" * 300) if graph else 0
    return sizes


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    """Two entries, ``kept`` (its folder exists, graph) and ``gone`` (its folder is missing), a 500-byte reuse
    cache and a 70-byte run report."""
    root = tmp_path / "store"
    (tmp_path / "here").mkdir()
    _entry(root, "kept", tmp_path / "here", graph=True)
    _entry(root, "gone", tmp_path / "nowhere", graph=False)
    _write(root / "_cache" / "chunks" / "ab" / "entry.bin", b"c" * 500)
    _write(root / "_reports" / "index.json", b"r" * 70)
    return root


def test_du_counts_the_bytes_written_per_kind(store: Path, tmp_path: Path) -> None:
    """du: each entry's files (manifests + 1000 + 200 bytes; 300 of graph for one), the cache, the report."""
    manifest = len(json.dumps({"chunker": {"name": "function"}, "snapshot": {"path": str(tmp_path / "here")}}))
    manifest_gone = manifest + len("nowhere") - len("here")
    rmanifest = len(b'{"retriever": {"name": "bm25"}}')
    indexes = manifest + manifest_gone + 2 * (1000 + rmanifest + 200)
    usage = disk_usage(store)
    assert usage == {
        "indexes": indexes,
        "graph": 300,
        "reuse_cache": 500,
        "other": 70,
        "total": indexes + 300 + 500 + 70,
        "snapshots": 2,
    }


def test_list_shows_name_folder_configs_size_and_last_used(store: Path, tmp_path: Path) -> None:
    """list: per entry its folder, configs (chunker, retrievers, graph), size and last use (newest manifest)."""
    os.utime(store / "kept" / "function-0123abcd" / "manifest.json", (T_2026, T_2026))
    os.utime(store / "kept" / "function-0123abcd" / "retrievers" / "bm25-89abcdef" / "manifest.json", (T_2026,) * 2)
    gone, kept = list_store(store)
    assert (gone.name, kept.name) == ("gone", "kept")
    assert kept.paths == [str(tmp_path / "here")] and kept.exists()
    assert gone.paths == [str(tmp_path / "nowhere")] and not gone.exists()
    assert kept.configs == [
        {
            "kind": "chunks",
            "chunker": "function",
            "key": "function-0123abcd",
            "walk": {},
            "retrievers": ["bm25"],
            "graph": True,
        }
    ]
    assert kept.size - gone.size == 300 - (len("nowhere") - len("here"))
    assert kept.to_json()["last_used"] == "2026-01-01T00:00:00Z"


def test_gc_dry_run_removes_nothing_and_gc_removes_exactly_the_missing(store: Path) -> None:
    """gc removes the entry whose folder is gone and nothing else (cache and reports kept); a dry run first
    reports the same and removes nothing."""
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    gone_size = next(e.size for e in list_store(store) if e.name == "gone")
    dry = collect_garbage(store, dry_run=True)
    assert dry.removed == [("gone", "missing", gone_size)] and dry.freed == gone_size
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before
    done = collect_garbage(store)
    assert done.removed == [("gone", "missing", gone_size)] and done.reuse_cache is None
    assert sorted(p.name for p in store.iterdir()) == ["_cache", "_reports", "kept"]


def test_gc_older_than_uses_the_last_use_mark_and_all_takes_the_cache(store: Path, tmp_path: Path) -> None:
    """--older-than removes an entry last used (its mark's mtime) before the date, not one used after it; --all
    removes every entry and the reuse cache, and keeps the run reports."""
    mark_used(store, "kept", tmp_path / "here")
    marker = store / "kept" / USED_FILE
    assert json.loads(marker.read_text()) == {"path": str((tmp_path / "here").resolve())}
    os.utime(marker, (T_2026, T_2026))
    assert collect_garbage(store, older_than=T_2026 - DAY, dry_run=True).removed == [
        ("gone", "missing", next(e.size for e in list_store(store) if e.name == "gone"))
    ]
    result = collect_garbage(store, older_than=T_2026 + DAY, dry_run=True)
    assert [(name, reason) for name, reason, _ in result.removed] == [("gone", "missing"), ("kept", "older")]
    everything = collect_garbage(store, remove_all=True)
    assert [name for name, _, _ in everything.removed] == ["gone", "kept"] and everything.reuse_cache == 500
    assert sorted(p.name for p in store.iterdir()) == ["_reports"]


def test_parse_date_forms() -> None:
    """--older-than: a date is midnight UTC, an ISO time without zone is UTC, ``<N>d`` an age; others refused."""
    assert parse_date("2026-01-01") == T_2026
    assert parse_date("2026-01-02T12:00") == T_2026 + 1.5 * DAY
    assert parse_date("2026-01-01T01:00:00+01:00") == T_2026
    with pytest.raises(ValueError, match="'yesterday' is not a date"):
        parse_date("yesterday")


def test_store_command_json_and_text(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command: du --json as disk_usage, list --json names, gc --dry-run --json then gc."""
    assert store_main(["du", "--store", str(store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"store": str(store)} | disk_usage(store)
    assert store_main(["list", "--store", str(store), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(e["name"], e["exists"]) for e in listed] == [("gone", False), ("kept", True)]
    assert store_main(["gc", "--store", str(store), "--dry-run", "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)["removed"]] == ["gone"]
    assert (store / "gone").is_dir()
    assert store_main(["gc", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("removed gone (folder missing, ") and not (store / "gone").exists()
    with pytest.raises(SystemExit) as info:
        store_main(["gc", "--store", str(store), "--older-than", "soon"])
    assert info.value.code == 2
    assert format_size(512) == "512 B" and format_size(1536) == "1.5 KiB" and format_size(3 << 30) == "3.0 GiB"


def test_gc_refuses_a_read_only_store(store: Path, read_only: Callable[[Path], list[str]]) -> None:
    """gc on a read-only store: one-line error, exit 1, nothing tried; a dry run still answers."""
    refused = read_only(store)
    assert store_main(["gc", "--store", str(store)]) == 1
    assert store_main(["gc", "--store", str(store), "--dry-run"]) == 0
    assert refused == []


def test_mark_used_touches_and_skips_read_only(tmp_path: Path, read_only: Callable[[Path], list[str]]) -> None:
    """The mark is written once, then only touched; on a read-only store nothing is tried."""
    store, folder = tmp_path / "store", tmp_path / "snap"
    (store / "s").mkdir(parents=True)
    folder.mkdir()
    mark_used(store, "s", folder)
    marker = store / "s" / USED_FILE
    os.utime(marker, (T_2026, T_2026))
    mark_used(store, "s", folder)
    assert marker.stat().st_mtime > T_2026 + DAY
    os.utime(marker, (T_2026, T_2026))
    refused = read_only(store)
    mark_used(store, "s", folder)
    mark_used(store, "s", tmp_path / "elsewhere")
    assert refused == [] and marker.stat().st_mtime == T_2026


# ----------------------------------------------------------------------------------------------------------
# prebuilt indexes: moved with their snapshots, queried read-only
# ----------------------------------------------------------------------------------------------------------


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


def test_moved_store_and_snapshots_are_queried_read_only_without_rebuild(
    tmp_path: Path, read_only: Callable[[Path], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Build on one machine's paths (a folder named by path hash, one named as a bench run names it), move the store and
    the snapshots to new paths, make the store read-only: the same regions, nothing written, nothing built."""
    old_repos, old_store = tmp_path / "a" / "repos", tmp_path / "a" / "store"
    shutil.copytree(MINI_REPOS, old_repos)
    snapshot = old_repos / "mini__pyshop-1"
    explorer = IndexedExplorer(store=old_store)
    hashed = [(r.path, r.start, r.end) for r in explorer.explore(snapshot, QUERY)]
    named = [(r.path, r.start, r.end) for r in explorer.explore(snapshot, QUERY, "pyshop__1")]
    assert hashed[0][0] == "pyshop/cart.py"
    assert sorted(p.name for p in old_store.iterdir()) == sorted(["_cache", "pyshop__1", snapshot_key(snapshot)])

    new_repos, new_store = tmp_path / "b" / "repos", tmp_path / "b" / "store"
    new_repos.parent.mkdir()
    shutil.move(old_repos, new_repos)
    shutil.move(old_store, new_store)
    moved = new_repos / "mini__pyshop-1"
    before = _tree(new_store)
    refused = read_only(new_store)
    again = IndexedExplorer(store=new_store)
    assert [(r.path, r.start, r.end) for r in again.explore(moved, QUERY)] == hashed
    assert [(r.path, r.start, r.end) for r in again.explore(moved, QUERY, "pyshop__1")] == named
    assert again.store_use.built == set() and again.store_use.current == {snapshot_key(snapshot), "pyshop__1"}
    assert explore_main([str(moved), QUERY, "--store", str(new_store), "--retriever", "bm25", "--lines", "0"]) == 0
    assert capsys.readouterr().err == f"indexes: {new_store} (0 built, 1 current)\n"
    assert refused == [] and _tree(new_store) == before


def test_moved_snapshot_with_other_content_gets_its_own_index(tmp_path: Path) -> None:
    """The fallback matches content: a folder of the same name whose files differ is not given the old index."""
    store, snapshot = tmp_path / "store", tmp_path / "one" / "mini__pyshop-1"
    shutil.copytree(MINI_REPOS / "mini__pyshop-1", snapshot)
    chunker, walk = make_chunker("function"), WalkConfig()
    IndexedExplorer(store=store).index(snapshot)
    copy = tmp_path / "two" / "mini__pyshop-1"
    shutil.copytree(snapshot, copy)
    assert store_name(store, copy, chunker, walk) == snapshot_key(snapshot)
    with (copy / "pyshop" / "cart.py").open("a") as handle:
        handle.write("# changed\n")
    assert store_name(store, copy, chunker, walk) == snapshot_key(copy)


def test_moved_store_with_the_learned_explorer_reuses_index_and_graph(
    tmp_path: Path, read_only: Callable[[Path], list[str]]
) -> None:
    """The default explorer (retrievers and symbol graph) also finds a moved folder's index, read-only."""
    snapshot, store = tmp_path / "a" / "mini__pyshop-1", tmp_path / "a" / "store"
    shutil.copytree(MINI_REPOS / "mini__pyshop-1", snapshot)
    built = make_explorer(store=store).explore(snapshot, QUERY)
    shutil.move(tmp_path / "a", tmp_path / "b")
    refused = read_only(tmp_path / "b" / "store")
    again = make_explorer(store=tmp_path / "b" / "store")
    assert again.explore(tmp_path / "b" / "mini__pyshop-1", QUERY) == built
    assert refused == []


def test_run_prints_where_the_indexes_are_unless_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """run: one ``indexes:`` line on standard error (4 built on a new store, 4 current on the next run over a new
    result file); --quiet drops it."""
    store = tmp_path / "store"
    argv = ["--store", str(store), "--retriever", "bm25", "--limit", "4"]
    assert run_main([*argv, "--out", str(tmp_path / "r1.jsonl"), "--quiet"]) == 0
    assert "indexes:" not in capsys.readouterr().err
    assert run_main([*argv, "--out", str(tmp_path / "r2.jsonl")]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("indexes:")]
    assert lines == [f"indexes: {store} (0 built, 4 current)"]
    shutil.rmtree(store)
    assert run_main([*argv, "--out", str(tmp_path / "r3.jsonl")]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("indexes:")]
    assert lines == [f"indexes: {store} (4 built, 0 current)"]


def test_moved_store_made_read_only_by_chmod_is_queried(tmp_path: Path) -> None:
    """The same with real permissions (``chmod -R a-w``; skipped where they do not stop writes, as for root)."""
    probe = tmp_path / "probe"
    probe.mkdir(mode=0o555)
    try:
        (probe / "x").touch()
    except PermissionError:
        pass
    else:
        pytest.skip("permissions do not stop this user's writes (root); the EROFS test above covers it")
    old = tmp_path / "a"
    shutil.copytree(MINI_REPOS / "mini__pyshop-1", old / "mini__pyshop-1")
    built = IndexedExplorer(store=old / "store").explore(old / "mini__pyshop-1", QUERY)
    shutil.move(old, tmp_path / "b")
    store = tmp_path / "b" / "store"
    paths = sorted(store.rglob("*"), reverse=True)
    try:
        for path in [*paths, store]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        before = _tree(store)
        assert IndexedExplorer(store=store).explore(tmp_path / "b" / "mini__pyshop-1", QUERY) == built
        assert _tree(store) == before
    finally:
        for path in [store, *sorted(store.rglob("*"))]:
            path.chmod(path.stat().st_mode | 0o200)


def test_gc_skips_an_entry_whose_lock_a_builder_holds(store: Path) -> None:
    """An entry one of whose indexes is locked (a build under way) is listed as busy and left whole."""
    from swe_explore.indexes.store import IndexLock

    with IndexLock(store / "gone" / "function-0123abcd"):
        result = collect_garbage(store)
    assert result.removed == [] and result.busy == ["gone"]
    assert (store / "gone" / "function-0123abcd" / "chunks.npz").stat().st_size == 1000


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run a store command that must be refused (exit 2); return its one error line from ``error: ``."""
    with pytest.raises(SystemExit) as info:
        store_main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    return err[-1][err[-1].index("error: ") :]


def test_store_commands_refuse_a_source_folder_and_remove_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A source folder given as --store (an entry ``pkg`` without index manifests, no _cache/_reports): list, du
    and gc --all are refused with one line naming it, exit 2, and its file stays."""
    folder = tmp_path / "src"
    source = folder / "pkg" / "shapes.py"
    _write(source, b"def area(r):\n    return 3 * r * r\n")
    _write(folder / "pkg" / "manifest.json", b'{"name": "not an index"}')
    for argv in (["list"], ["du"], ["gc", "--all"], ["gc", "--dry-run"]):
        line = _refused([*argv, "--store", str(folder)], capsys)
        assert line == (
            f"error: --store {folder} is not an index store (no entry holds an index manifest, no _cache or _reports)"
        )
    assert source.read_bytes() == b"def area(r):\n    return 3 * r * r\n"


def test_store_commands_agree_on_a_missing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A --store that does not exist: list, du and gc all say ``no such index store``, exit 2; an empty directory
    is an empty store (0 snapshots, exit 0)."""
    missing = tmp_path / "nostore"
    for argv in (["list"], ["du"], ["gc"], ["gc", "--dry-run"]):
        line = _refused([*argv, "--store", str(missing)], capsys)
        assert line == f"error: --store {missing}: no such index store"
    (tmp_path / "empty").mkdir()
    assert store_main(["list", "--store", str(tmp_path / "empty")]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'empty'}: 0 snapshot(s)\n"


def test_gc_all_removes_only_entries_holding_indexes(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A store with a stray directory (no index manifest) and a stray file: gc --all removes the two entries and
    the cache, never the stray ones; list and du do not count them as snapshots."""
    _write(store / "notes" / "todo.txt", b"keep me")
    _write(store / "readme.txt", b"keep me too")
    assert [e.name for e in list_store(store)] == ["gone", "kept"]
    assert disk_usage(store)["snapshots"] == 2
    assert store_main(["gc", "--all", "--store", str(store)]) == 0
    assert sorted(p.name for p in store.iterdir()) == ["_reports", "notes", "readme.txt"]
    assert (store / "notes" / "todo.txt").read_bytes() == b"keep me"


def test_list_names_the_history_index_and_walk_differences(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An entry with a history index (``history-<hash8>``) and a second chunk table walked with ignore_files off:
    text ``history`` and ``function (ignore_files: off): ...``; JSON kind ``history`` and walk differences."""
    _write(store / "kept" / "history-00ff00ff" / "manifest.json", b'{"format_version": 1, "kind": "history"}')
    walk = WalkConfig(ignore_files=False).to_dict()
    manifest = {"chunker": {"name": "function"}, "snapshot": {"path": str(tmp_path / "here")}, "walk": walk}
    _write(store / "kept" / "function-44445555" / "manifest.json", json.dumps(manifest).encode())
    assert store_main(["list", "--store", str(store), "--json"]) == 0
    kept = json.loads(capsys.readouterr().out)[1]
    assert [(c["kind"], c["key"], c["walk"]) for c in kept["configs"]] == [
        ("chunks", "function-0123abcd", {}),
        ("chunks", "function-44445555", {"ignore_files": False}),
        ("history", "history-00ff00ff", {}),
    ]
    assert store_main(["list", "--store", str(store)]) == 0
    line = capsys.readouterr().out.splitlines()[2]
    assert "[function: bm25 + graph; function (ignore_files: off): no retriever; history]" in line


@pytest.mark.parametrize("name", ["", ".", "..", "../escaped", "/etc", "a/b", "a\\b", "_cache", ".hidden", "a\0b"])
def test_a_snapshot_name_must_be_one_folder_name_of_the_store(tmp_path: Path, name: str) -> None:
    """A name that would leave the store, land in its own folders or be skipped by its listing is refused before
    anything is written."""
    with pytest.raises(ValueError, match="is not a folder name of the store"):
        check_snapshot_name(name)
    if not name:
        return  # ensure_index takes an empty name for "the folder's name"
    with pytest.raises(ValueError, match="is not a folder name of the store"):
        snapshot = sorted(p for p in MINI_REPOS.iterdir() if p.is_dir())[0]
        ensure_index(
            snapshot, tmp_path / "store", make_chunker("function"), [make_retriever("bm25")], snapshot_name=name
        )
    assert not (tmp_path / "store").exists()
    assert check_snapshot_name("psf__requests-1142") == "psf__requests-1142"


def test_a_folder_of_any_name_gets_a_valid_default_name(tmp_path: Path) -> None:
    """``_tmp`` and ``.hidden`` folders are named without their leading ``_`` and ``.``."""
    for folder, base in ((tmp_path / "_tmp", "tmp"), (tmp_path / ".hidden", "hidden"), (tmp_path / "._", "root")):
        folder.mkdir()
        key = snapshot_key(folder)
        assert key.rsplit("-", 1)[0] == base and check_snapshot_name(key) == key


def test_gc_removes_what_a_killed_builder_left_and_spares_a_live_one(store: Path) -> None:
    """A builder killed while writing leaves a cache scratch directory beside the index, a retriever temporary
    inside it and its lock file: gc removes them (a dry run lists them first), counts their bytes, and keeps the
    index; the temporaries of an index whose lock is held (a build under way) are left alone."""
    from swe_explore.indexes.store import IndexLock

    cdir = store / "kept" / "function-0123abcd"
    scratch = cdir.parent / "function-0123abcd.tmp-vm-4242-cache-0badf00d"
    _write(scratch / "term_counts" / "x.pack", b"p" * 4000)
    _write(cdir / "retrievers" / "tfidf-01234567.tmp-vm-4242-abcdef01" / "data" / "v.npz", b"v" * 600)
    _write(cdir.parent / "function-0123abcd.lock", b"")
    index_files = sorted(p.relative_to(store) for p in cdir.rglob("*") if ".tmp-" not in str(p))
    dry = collect_garbage(store, dry_run=True)
    assert dry.temporaries == [
        ("kept/function-0123abcd.lock", 0),
        ("kept/function-0123abcd.tmp-vm-4242-cache-0badf00d", 4000),
        ("kept/function-0123abcd/retrievers/tfidf-01234567.tmp-vm-4242-abcdef01", 600),
    ]
    assert scratch.is_dir() and (cdir.parent / "function-0123abcd.lock").exists()  # a dry run writes nothing
    with IndexLock(cdir, timeout=0):
        assert collect_garbage(store, dry_run=True).temporaries == []
        assert collect_garbage(store).temporaries == [] and scratch.is_dir()
    done = collect_garbage(store)  # "gone" went in the call above; the lock file went with the lock held here
    assert done.temporaries == dry.temporaries[1:] and done.freed == 4600 and done.removed == []
    assert sorted(p.name for p in (store / "kept").iterdir()) == ["function-0123abcd"]
    assert sorted(p.relative_to(store) for p in cdir.rglob("*")) == index_files
    assert done.to_json()["temporaries"] == [{"path": p, "size": s} for p, s in dry.temporaries[1:]]


def test_gc_dry_run_lists_abandoned_temporaries_of_a_read_only_store(
    store: Path, read_only: Callable[[Path], list[str]]
) -> None:
    """On a store that cannot be written, a dry run still lists what a killed builder left (the lock is tested
    with ``flock`` on the existing lock file, nothing created)."""
    cdir = store / "kept" / "function-0123abcd"
    _write(cdir / "chunks.npz.tmp-vm-4242-0badf00d", b"h" * 70)
    _write(cdir.parent / "function-0123abcd.lock", b"")
    read_only(store)
    assert collect_garbage(store, dry_run=True).temporaries == [
        ("kept/function-0123abcd.lock", 0),
        ("kept/function-0123abcd/chunks.npz.tmp-vm-4242-0badf00d", 70),
    ]


def test_gc_cache_removal_lets_a_concurrent_writer_start_a_new_cache(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A builder that adds a cache entry while ``gc --cache`` removes the cache: the old entries go, the new one is
    kept in a new ``_cache`` (it was: ``OSError: Directory not empty``, or the entry removed with the rest)."""
    real_rmtree = shutil.rmtree

    def rmtree_while_a_builder_writes(path: Path, *args: object, **kwargs: object) -> None:
        if Path(path).name.startswith("_cache"):
            _write(store / "_cache" / "chunks" / "cd" / "new.bin", b"n" * 10)  # the writer renames a pack in
        real_rmtree(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "rmtree", rmtree_while_a_builder_writes)
    result = collect_garbage(store, reuse_cache=True)
    monkeypatch.undo()
    assert result.reuse_cache == 500
    assert sorted(p.relative_to(store).as_posix() for p in (store / "_cache").rglob("*.bin")) == [
        "_cache/chunks/cd/new.bin"
    ]
    assert sorted(p.name for p in store.iterdir()) == ["_cache", "_reports", "kept"]


def test_gc_touches_only_index_leftovers_and_follows_no_link(store: Path, tmp_path: Path) -> None:
    """Files of other names (``NOTES.tmp-keep.txt``, ``mydata.lock``, ``sub.tmp-dir/``) are kept; a symbolic link
    in an entry, even one named like an index, is not followed (the files it points to stay); a folder holding
    only what a killed first build left is cleaned."""
    outside = tmp_path / "outside"
    _write(outside / "a.tmp-vm-1-0badf00d" / "x", b"o")
    entry = store / "kept"
    user = [entry / "NOTES.tmp-keep.txt", entry / "mydata.lock", entry / "sub.tmp-dir" / "f"]
    for path in user:
        _write(path, b"u")
    (entry / "linked").symlink_to(outside)
    (entry / "window-0badf00d").symlink_to(outside)
    _write(store / "fresh" / "function-2625320e.lock", b"")
    _write(store / "fresh" / "function-2625320e.tmp-vm-7-cache-12345678" / "p.pack", b"p" * 9)
    result = collect_garbage(store)
    assert result.temporaries == [
        ("fresh/function-2625320e.lock", 0),
        ("fresh/function-2625320e.tmp-vm-7-cache-12345678", 9),
    ]
    assert all(path.exists() for path in user) and (outside / "a.tmp-vm-1-0badf00d" / "x").exists()
    assert list((store / "fresh").iterdir()) == []


def test_a_folder_of_a_killed_first_build_is_a_store(tmp_path: Path) -> None:
    """A store whose first build was killed holds only a lock file and a scratch directory: gc accepts it and
    removes them; a folder with other ``.lock`` files is still refused."""
    store = tmp_path / "store"
    _write(store / "seaborn" / "function-2625320e.lock", b"")
    _write(store / "seaborn" / "function-2625320e.tmp-vm-7-0badf00d" / "chunks.npz", b"c" * 5)
    result = collect_garbage(store)
    assert [path for path, _ in result.temporaries] == [
        "seaborn/function-2625320e.lock",
        "seaborn/function-2625320e.tmp-vm-7-0badf00d",
    ]
    _write(tmp_path / "src" / "pkg" / "yarn.lock", b"")
    with pytest.raises(NotAStoreError):
        collect_garbage(tmp_path / "src")


def test_gc_removes_a_cache_a_killed_gc_set_aside_even_while_another_gc_does(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``gc --cache`` killed after renaming the cache aside leaves ``_cache.tmp-...-gc-...``: every gc lists and
    removes it; if another gc removes it at the same time, neither fails."""
    _write(store / "_cache.tmp-vm-99-gc-0badf00d" / "chunks" / "p.pack", b"q" * 30)
    dry = collect_garbage(store, dry_run=True)
    assert dry.temporaries == [("_cache.tmp-vm-99-gc-0badf00d", 30)] and dry.reuse_cache is None
    real_rmtree = shutil.rmtree

    def raced(path: Path, *args: Any, **kwargs: Any) -> None:
        if ".tmp-" in Path(path).name and Path(path).exists():
            real_rmtree(path)  # the other gc was first
            raise FileNotFoundError(2, "No such file or directory", str(path))
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", raced)
    done = collect_garbage(store, reuse_cache=True)
    monkeypatch.undo()
    assert done.temporaries == dry.temporaries and done.reuse_cache == 500
    assert sorted(p.name for p in store.iterdir()) == ["_reports", "kept"]
