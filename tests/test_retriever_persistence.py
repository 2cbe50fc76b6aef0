"""Tests of retriever persistence (indexes/files.py) and the registry: round trips, corrupt index files ->
CorruptIndexError naming them, and the retriever states behind them."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from swe_explore.chunking.types import Chunk
from swe_explore.indexes.files import (
    META_FILE,
    CorruptIndexError,
    _read_state_file,
    _write_state_file,
    file_records,
    load_retriever,
    save_retriever,
    write_json,
)
from swe_explore.retrievers.base import InvalidStateError, Retriever, RetrieverState
from swe_explore.retrievers.registry import RETRIEVERS, make_retriever, retriever_options

Saved = tuple[Retriever, Path]
QUERIES = ["Session timeout when sending a request", "get_cookie from the jar", "alpha beta gamma delta", "zzz"]

FACTORIES: dict[str, Callable[[str], Retriever]] = {
    "bm25-numpy": lambda m: make_retriever("bm25"),
    "bm25-rank_bm25": lambda m: make_retriever("bm25", backend="rank_bm25"),
    "bm25-bm25s": lambda m: make_retriever("bm25", backend="bm25s"),
    "tfidf": lambda m: make_retriever("tfidf"),
    "potion": lambda m: make_retriever("potion", model=m),
    "faiss-flat": lambda m: make_retriever("faiss", model=m),
    "faiss-hnsw": lambda m: make_retriever("faiss", model=m, index="hnsw"),
    "hybrid": lambda m: make_retriever("hybrid", parts=["bm25", "potion"], model=m),
}


_NO_BM25S = pytest.mark.skipif(importlib.util.find_spec("bm25s") is None, reason="bm25s not installed")


@pytest.fixture(params=[pytest.param(n, marks=_NO_BM25S) if n == "bm25-bm25s" else n for n in FACTORIES])
def saved(request: pytest.FixtureRequest, tiny_model_dir: Path, sample_chunks: list[Chunk], tmp_path: Path) -> Saved:
    """Each retriever built on the sample chunks and saved into ``tmp_path/index``; yields (retriever, dir)."""
    retriever = FACTORIES[request.param](str(tiny_model_dir))
    retriever.build(sample_chunks)
    directory = tmp_path / "index"
    directory.mkdir()
    save_retriever(retriever, directory)
    return retriever, directory


def _data_files(directory: Path) -> list[Path]:
    """Every data file listed in the retriever.json files of ``directory`` and its part subdirectories."""
    out = []
    for meta_path in sorted(directory.rglob(META_FILE)):
        meta = json.loads(meta_path.read_text())
        out += [meta_path.parent / f for f in meta["files"]]
    return out


def test_round_trip_gives_identical_results(saved: Saved) -> None:
    """save -> load_retriever -> search gives the same class, config, size and hits as the built retriever."""
    retriever, directory = saved
    loaded = load_retriever(directory)
    assert type(loaded) is type(retriever)
    assert loaded.config() == retriever.config()
    assert loaded.n_docs == retriever.n_docs == 6
    for query in QUERIES:
        assert loaded.search(query, 5) == retriever.search(query, 5)


@pytest.mark.parametrize("damage", ["truncate", "edit", "delete"])
def test_damaged_data_file_names_the_file(saved: Saved, damage: str) -> None:
    """A truncated, edited or deleted data file raises CorruptIndexError whose message names that file."""
    _, directory = saved
    for path in _data_files(directory):
        original = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(original[: len(original) // 2])
        elif damage == "edit":
            path.write_bytes(original[:-1] + bytes([original[-1] ^ 0xFF]))
        else:
            path.unlink()
        with pytest.raises(CorruptIndexError) as err:
            load_retriever(directory)
        assert str(path) in str(err.value) and err.value.path == path
        assert str(err.value).endswith("; rerun with --rebuild to rebuild it")
        path.write_bytes(original)
    load_retriever(directory)  # restored: loads again


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(n_docs=m["n_docs"] + 1), "expected"),
        (lambda m: m.update(name="bm99"), "unknown retriever 'bm99'"),
        (lambda m: m.update(format_version=99), "format version 99"),
        (lambda m: m.pop("config"), "field 'config'"),
        (lambda m: m["config"].update(bogus_option=1), "invalid config"),
    ],
    ids=["n_docs", "name", "version", "no-config", "bad-option"],
)
def test_edited_json_names_the_file(saved: Saved, edit: Callable[[dict[str, Any]], object], message: str) -> None:
    """A hand-edited retriever.json raises CorruptIndexError naming a file of the index, not a numpy traceback."""
    _, directory = saved
    meta_path = directory / META_FILE
    meta = json.loads(meta_path.read_text())
    edit(meta)
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(CorruptIndexError, match=message) as err:
        load_retriever(directory)
    assert str(directory) in str(err.value)


def test_unreadable_or_missing_json(saved: Saved) -> None:
    """Truncated JSON, a missing retriever.json and a missing directory each raise CorruptIndexError naming the path."""
    _, directory = saved
    meta_path = directory / META_FILE
    text = meta_path.read_text()
    meta_path.write_text(text[: len(text) // 2])
    with pytest.raises(CorruptIndexError, match="unreadable JSON") as err:
        load_retriever(directory)
    assert err.value.path == meta_path
    meta_path.unlink()
    with pytest.raises(CorruptIndexError, match="file is missing"):
        load_retriever(directory)
    with pytest.raises(CorruptIndexError, match="index directory is missing"):
        load_retriever(directory / "nope")


def _rerecord(directory: Path) -> None:
    """Rewrite retriever.json with the current files' sizes and hashes (a damaged but self-consistent index)."""
    meta = json.loads((directory / META_FILE).read_text())
    meta["files"] = file_records(directory, list(meta["files"]))
    write_json(directory / META_FILE, meta)


@pytest.mark.parametrize(
    ("name", "file", "payload"),
    [
        ("bm25-numpy", "tf.npz", b"PK\x03\x04 not a zip"),
        ("bm25-numpy", "vocab.json", b'["dup", "dup"]'),
        ("tfidf", "idf.npy", b"\x93NUMPY garbage"),
        ("tfidf", "matrix.npz", b"not a zip at all"),
        ("potion", "vectors.npy", b"\x93NUMPY\x01\x00garbage"),
        ("faiss-flat", "index.faiss", b"IxFI\x00\x00"),
    ],
)
def test_loaders_wrap_parse_errors(
    name: str, file: str, payload: bytes, tiny_model_dir: Path, sample_chunks: list[Chunk], tmp_path: Path
) -> None:
    """Even with matching checksums, unparsable files give CorruptIndexError naming them (parser errors wrapped)."""
    retriever = FACTORIES[name](str(tiny_model_dir))
    retriever.build(sample_chunks)
    save_retriever(retriever, tmp_path)
    (tmp_path / file).write_bytes(payload)
    _rerecord(tmp_path)
    with pytest.raises(CorruptIndexError) as err:
        load_retriever(tmp_path)
    assert err.value.path == tmp_path / file


def test_wrong_dtype_and_shape_detected(tiny_model_dir: Path, sample_chunks: list[Chunk], tmp_path: Path) -> None:
    """A vectors.npy of the wrong dtype, or a tf.npz of the wrong shape, is reported with the file's name."""
    potion = make_retriever("potion", model=str(tiny_model_dir))
    potion.build(sample_chunks)
    (tmp_path / "p").mkdir()
    save_retriever(potion, tmp_path / "p")
    np.save(tmp_path / "p" / "vectors.npy", np.zeros((6, 4), dtype=np.float64))
    _rerecord(tmp_path / "p")
    with pytest.raises(CorruptIndexError, match="dtype float64, expected float32"):
        load_retriever(tmp_path / "p")
    bm25 = make_retriever("bm25")
    bm25.build(sample_chunks)
    (tmp_path / "b").mkdir()
    save_retriever(bm25, tmp_path / "b")
    sp.save_npz(tmp_path / "b" / "tf.npz", sp.csr_matrix(np.ones((2, 2), dtype=np.int32)))
    _rerecord(tmp_path / "b")
    with pytest.raises(CorruptIndexError, match=r"tf.npz: shape \(2, 2\), expected \(6, "):
        load_retriever(tmp_path / "b")


def test_save_needs_an_existing_empty_directory(sample_chunks: list[Chunk], tmp_path: Path) -> None:
    """save_retriever refuses a missing directory (FileNotFoundError), a non-empty one (ValueError), and part
    directories to link for a retriever without parts."""
    r = make_retriever("bm25")
    r.build(sample_chunks)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save_retriever(r, tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="a bm25 retriever has no parts to link"):
        save_retriever(r, tmp_path / "empty", [tmp_path])
    (tmp_path / "junk.txt").write_text("x")
    with pytest.raises(ValueError, match="not empty"):
        save_retriever(r, tmp_path)


def test_empty_indexes_round_trip(tiny_model_dir: Path, tmp_path: Path) -> None:
    """Indexes of zero chunks, and token-less ones (docs/retrievers.md, 'TF-IDF'), save and load and still return []."""
    for i, name in enumerate(["bm25", "tfidf", "potion", "faiss"]):
        opts = {"model": str(tiny_model_dir)} if name in ("potion", "faiss") else {}
        for j, chunks in enumerate([[], [Chunk("x", 1, 1, text="a = b + c")]]):
            r = make_retriever(name, **opts)
            r.build(chunks)
            d = tmp_path / f"{i}-{j}"
            d.mkdir()
            save_retriever(r, d)
            loaded = load_retriever(d)
            assert loaded.n_docs == len(chunks) and loaded.search("a b c alpha") == []


def test_registry_names_and_errors() -> None:
    """The registry knows the five retrievers; unknown names and options raise ValueError listing valid ones."""
    assert list(RETRIEVERS) == ["bm25", "tfidf", "potion", "faiss", "hybrid"]
    assert retriever_options("bm25") == ["k1", "b", "backend", "tokenizer", "fields"]
    with pytest.raises(ValueError, match="unknown retriever 'bm26'; valid: bm25, tfidf, potion, faiss, hybrid"):
        make_retriever("bm26")
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['k3'\] for retriever 'bm25'; valid: k1, b"):
        make_retriever("bm25", k3=1.0)
    with pytest.raises(ValueError, match="valid: numpy, rank_bm25, bm25s"):
        make_retriever("bm25", backend="lucene")
    assert make_retriever("bm25", k1=1.2).config()["k1"] == 1.2


@pytest.mark.parametrize("name", ["potion", "faiss-flat", "hybrid"])
def test_load_retriever_uses_the_model_asked_for(
    name: str,
    tiny_model_dir: Path,
    tiny_model_factory: Any,
    sample_chunks: list[Chunk],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """load_retriever(model=...) loads with that model (a different one is refused as stale); without it the
    recorded model is used even when $SWE_EXPLORE_POTION_MODEL names another."""
    retriever = FACTORIES[name](str(tiny_model_dir))
    retriever.build(sample_chunks)
    save_retriever(retriever, tmp_path)
    other = str(tiny_model_factory({"alpha": [0.0, 1.0], "beta": [1.0, 0.0]}))
    monkeypatch.setenv("SWE_EXPLORE_POTION_MODEL", other)
    for loaded in (load_retriever(tmp_path), load_retriever(tmp_path, model=str(tiny_model_dir))):
        assert loaded.config() == retriever.config()
        assert loaded.search("cookie timeout", 5) == retriever.search("cookie timeout", 5) != []
    with pytest.raises(CorruptIndexError, match="stale for this model") as err:
        load_retriever(tmp_path, model=other)
    assert err.value.path.name == META_FILE


def test_model_is_ignored_by_retrievers_without_one(sample_chunks: list[Chunk], tmp_path: Path) -> None:
    """load_retriever(model=...) on a BM25 index loads it unchanged (BM25 has no model)."""
    retriever = make_retriever("bm25")
    retriever.build(sample_chunks)
    save_retriever(retriever, tmp_path)
    loaded = load_retriever(tmp_path, model="/no/such/model")
    assert loaded.config() == retriever.config() and loaded.search("cookie", 3) == retriever.search("cookie", 3)


@pytest.mark.parametrize("name", ["bm25-numpy", "tfidf", "potion", "faiss-flat", "faiss-hnsw"])
def test_state_round_trip_in_memory(name: str, tiny_model_dir: Path, sample_chunks: list[Chunk]) -> None:
    """from_state(config, n_docs, state()) rebuilds the retriever without any file: same config, size and hits."""
    retriever = FACTORIES[name](str(tiny_model_dir))
    retriever.build(sample_chunks)
    state = retriever.state()
    assert all(not isinstance(v, Path) for v in state.files.values())
    loaded = type(retriever).from_state(retriever.config(), retriever.n_docs, state)
    assert loaded.config() == retriever.config() and loaded.n_docs == 6
    for query in QUERIES:
        assert loaded.search(query, 5) == retriever.search(query, 5)


def test_hybrid_state_is_its_parts(tiny_model_dir: Path, sample_chunks: list[Chunk], tmp_path: Path) -> None:
    """A hybrid's own state is empty; saved standalone, its parts go to part0/ and part1/ as retrievers of their
    own, and from_state rebuilds it from loaded parts (refusing parts that do not match its config)."""
    hybrid = FACTORIES["hybrid"](str(tiny_model_dir))
    hybrid.build(sample_chunks)
    assert hybrid.state() == RetrieverState({}, {})
    save_retriever(hybrid, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["part0", "part1", "retriever.json"]
    assert [load_retriever(tmp_path / f"part{i}").name for i in (0, 1)] == ["bm25", "potion"]
    rebuilt = type(hybrid).from_state(hybrid.config(), 6, RetrieverState(), hybrid.parts())
    assert rebuilt.search("cookie timeout", 5) == hybrid.search("cookie timeout", 5) != []
    with pytest.raises(InvalidStateError, match="part 0 is a 'potion' index"):
        type(hybrid).from_state(hybrid.config(), 6, RetrieverState(), hybrid.parts()[::-1])
    with pytest.raises(InvalidStateError, match="part 0 indexes 6 chunks, expected 7"):
        type(hybrid).from_state(hybrid.config(), 7, RetrieverState(), hybrid.parts())


def test_from_state_names_the_bad_file(sample_chunks: list[Chunk]) -> None:
    """from_state raises InvalidStateError naming the state file at fault (None for the config)."""
    bm25 = make_retriever("bm25")
    bm25.build(sample_chunks)
    state = bm25.state()
    cls = type(bm25)
    bad = {
        "tf.npz": (
            RetrieverState({**state.files, "tf.npz": sp.csr_matrix((2, 2), dtype=np.int32)}),
            r"shape \(2, 2\), expected \(6, ",
        ),
        "vocab.json": (RetrieverState({**state.files, "vocab.json": ["a", "a"]}), "1 repeated term"),
        None: (state, "invalid config"),
    }
    for file, (bad_state, message) in bad.items():
        config = {**bm25.config(), "k9": 1} if file is None else bm25.config()
        with pytest.raises(InvalidStateError, match=message) as err:
            cls.from_state(config, 6, bad_state)
        assert err.value.file == file
    with pytest.raises(InvalidStateError, match="file is not among") as err:
        cls.from_state(bm25.config(), 6, RetrieverState({"tf.npz": state.files["tf.npz"]}))
    assert err.value.file == "vocab.json"


def test_retrievers_never_import_indexes() -> None:
    """The package flow is one-directional (chunking -> retrievers -> indexes): importing every retrievers
    module loads no swe_explore.indexes module."""
    import subprocess
    import sys

    modules = [
        "base",
        "bm25",
        "common",
        "faiss_index",
        "features",
        "hybrid",
        "potion",
        "registry",
        "tfidf",
        "tokenize",
        "wordcache",
    ]
    script = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module('swe_explore.retrievers.' + m)\n"
        "print(sorted(n for n in sys.modules if n.startswith('swe_explore.indexes')))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    "terms",
    [[], ["a"], ["b", "a"], ['q"uote', "back\\slash", "tab\there", "nl\nx", "é", "\u2028", "nul\x00"]],
)
def test_vocabulary_file_is_json_with_one_term_per_line(tmp_path: Path, terms: list[str]) -> None:
    """A vocabulary is written as ``json.dumps(..., ensure_ascii=False, indent=0)`` wrote it (the files of an
    existing store keep their bytes): ``[``, one JSON string per line, ``]``, and reads back equal."""
    path = tmp_path / "vocab.json"
    _write_state_file(path, terms)
    expected = "[]\n" if not terms else "[\n" + ",\n".join(json.dumps(t, ensure_ascii=False) for t in terms) + "\n]\n"
    assert path.read_text(encoding="utf-8") == expected
    assert _read_state_file(path) == terms
