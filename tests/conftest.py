"""Shared pytest fixtures: a tiny model2vec model built in code, the real Potion model (or a skip), sample chunks."""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from swe_explore.chunking.types import Chunk

#: Where the real Potion model lives in this workspace (``../shared/models/potion-base-8M`` from the project).
REAL_POTION_DIR = Path(__file__).resolve().parents[2] / "shared" / "models" / "potion-base-8M"

#: The developer's ``$SWE_EXPLORE_POTION_MODEL``, read once before :func:`_no_potion_model_env` hides it; used
#: only to find the real model for the slow tests.
_POTION_ENV = os.environ.get("SWE_EXPLORE_POTION_MODEL")


@pytest.fixture(autouse=True)
def _no_potion_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide ``$SWE_EXPLORE_POTION_MODEL`` from every test (a test that needs it sets it), so results do not
    depend on the developer's environment: with it set, the default model of a retriever built without
    ``model=`` would change."""
    monkeypatch.delenv("SWE_EXPLORE_POTION_MODEL", raising=False)


@pytest.fixture(autouse=True)
def _store_in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Point the default index store (``$SWE_EXPLORE_STORE``) at a temporary directory, so tests that do not pass
    a store never write into the user's cache; subprocesses inherit it."""
    monkeypatch.setenv("SWE_EXPLORE_STORE", str(tmp_path_factory.getbasetemp() / "default-store"))


#: Word -> vector of the default tiny model (dimension 4; ``[UNK]`` is added with a zero vector).
TINY_VOCAB: dict[str, list[float]] = {
    "alpha": [1.0, 0.0, 0.0, 0.0],
    "beta": [0.0, 1.0, 0.0, 0.0],
    "gamma": [0.0, 0.0, 1.0, 0.0],
    "delta": [0.0, 0.0, 0.0, 1.0],
    "request": [0.6, 0.8, 0.0, 0.0],
    "session": [0.0, 0.6, 0.8, 0.0],
    "cookie": [0.0, 0.0, 0.6, 0.8],
    "timeout": [0.8, 0.0, 0.0, 0.6],
}

TinyModelFactory = Callable[[Mapping[str, Sequence[float]]], Path]


@pytest.fixture(scope="session")
def tiny_model_factory(tmp_path_factory: pytest.TempPathFactory) -> TinyModelFactory:
    """Return a function that saves a word-level model2vec model with the given word vectors and returns its dir.

    The tokenizer lower-cases, splits on whitespace and punctuation, and maps unknown words to ``[UNK]`` (which
    model2vec drops), so a text's vector is the mean of the vectors of its known words. No network, no weights.
    """
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    def make(vectors: Mapping[str, Sequence[float]]) -> Path:
        """Save a model whose word ``w`` has vector ``vectors[w]``; return its directory."""
        words = list(vectors)
        vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(words)}}
        tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
        tokenizer.normalizer = normalizers.Lowercase()
        tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
        dim = len(next(iter(vectors.values())))
        matrix = np.zeros((len(vocab), dim), dtype=np.float32)
        for w in words:
            matrix[vocab[w]] = np.asarray(vectors[w], dtype=np.float32)
        path = tmp_path_factory.mktemp("tiny_model")
        StaticModel(matrix, tokenizer).save_pretrained(path)
        return path

    return make


@pytest.fixture(scope="session")
def tiny_model_dir(tiny_model_factory: TinyModelFactory) -> Path:
    """Directory of the default tiny model (:data:`TINY_VOCAB`)."""
    return tiny_model_factory(TINY_VOCAB)


@pytest.fixture(scope="session")
def real_potion_dir() -> Path:
    """The real potion-base-8M directory (``$SWE_EXPLORE_POTION_MODEL`` or ``../shared/models``), else skip."""
    path = Path(_POTION_ENV) if _POTION_ENV else REAL_POTION_DIR
    if not (path / "model.safetensors").is_file():
        pytest.skip(f"real Potion model not found at {path} (set SWE_EXPLORE_POTION_MODEL to its directory)")
    return path


@pytest.fixture
def sample_chunks() -> list[Chunk]:
    """Six chunks of three small Python files, with texts that share and differ in identifiers."""
    rows = [
        ("pkg/session.py", 1, 3, "class", "Session", "class Session:\n    timeout = 30\n    alpha = 1"),
        ("pkg/session.py", 4, 5, "method", "Session.send", "    def send(self, request):\n        return beta"),
        ("pkg/cookies.py", 1, 2, "function", "get_cookie", "def get_cookie(jar, name):\n    return gamma"),
        ("pkg/cookies.py", 3, 4, "function", "set_cookie", "def set_cookie(jar, name, value):\n    pass"),
        ("pkg/models.py", 1, 2, "class", "Request", "class Request:\n    delta = cookie"),
        ("pkg/models.py", 3, 3, "gap", "", "x = 1"),
    ]
    return [Chunk(path, start, end, kind, symbol, "python", text) for path, start, end, kind, symbol, text in rows]


def _store_tree(store: Path) -> dict[str, bytes]:
    """Every file of an index store by relative path; manifests without their timestamps and timings."""
    out: dict[str, bytes] = {}
    for path in sorted(store.rglob("*")):
        if path.is_dir() or "_reports" in path.parts:
            continue
        data = path.read_bytes()
        if path.name == "manifest.json":
            manifest = json.loads(data)
            for key in ("created_at", "seconds"):
                manifest.pop(key, None)
            data = json.dumps(manifest, sort_keys=True).encode()
        out[path.relative_to(store).as_posix()] = data
    return out


def _linked_snapshot(root: Path, edited: bool = False) -> Path:
    """Three files: pkg/a.py (alpha, beta reading ``y.real``; ``edited``: ``y.imag`` instead), pkg/b.py (gamma
    calls alpha), README.md (one window)."""
    beta = "y.imag * 3" if edited else "y.real * 2"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text(f"def alpha(x):\n    return x + 1\n\n\ndef beta(y):\n    return {beta}\n")
    (root / "pkg" / "b.py").write_text("from pkg.a import alpha\n\n\ndef gamma():\n    return alpha(2)\n")
    (root / "README.md").write_text("# Demo\n\nAlpha and beta.\n")
    return root


@pytest.fixture()
def linked_snapshot() -> Callable[..., Path]:
    """A function writing a three-file snapshot whose files reference each other (``(root, edited=False) ->
    root``), for the graph and reuse tests."""
    return _linked_snapshot


@pytest.fixture()
def store_tree() -> Callable[[Path], dict[str, bytes]]:
    """A function mapping an index store to ``{relative path: bytes}`` (manifests without timings), to compare
    two builds file by file."""
    return _store_tree


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


@pytest.fixture()
def read_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], list[str]]]:
    """Make a directory tree behave like a read-only mount: every write below it (creating, opening for writing,
    renaming, removing) raises ``OSError(EROFS)``, as it does even for root on a read-only file system (``chmod``
    does not stop root), and ``os.statvfs`` reports the mount read-only (``ST_RDONLY``). Returns the list of
    refused writes, for the test to inspect."""
    refused: list[str] = []
    roots: list[str] = []

    def inside(path: Any, dir_fd: int | None = None) -> bool:
        if dir_fd is not None or isinstance(path, int):
            return False
        name = os.path.abspath(os.fsdecode(path))
        return any(name == r or name.startswith(r + os.sep) for r in roots)

    def refuse(path: Any) -> None:
        refused.append(os.fsdecode(path))
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(path))

    def guard(real: Callable[..., Any], n_paths: int = 1) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            for path in args[:n_paths]:
                if inside(path, kwargs.get("dir_fd")):
                    refuse(path)
            return real(*args, **kwargs)

        return wrapped

    real_os_open, real_open = os.open, builtins.open

    def os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & _WRITE_FLAGS and inside(path, kwargs.get("dir_fd")):
            refuse(path)
        return real_os_open(path, flags, *args, **kwargs)

    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if not isinstance(file, int) and set(mode) & set("wax+") and inside(file):
            refuse(file)
        return real_open(file, mode, *args, **kwargs)

    real_statvfs = os.statvfs

    def statvfs(path: Any) -> os.statvfs_result:  # a read-only mount says so (ST_RDONLY), as indexes/manage.py asks
        result = real_statvfs(path)
        if not inside(path):
            return result
        fields = list(result)
        fields[8] |= os.ST_RDONLY  # f_flag
        return os.statvfs_result(fields)

    monkeypatch.setattr(os, "statvfs", statvfs)
    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(io, "open", open_)
    for name in ("mkdir", "unlink", "remove", "rmdir"):
        monkeypatch.setattr(os, name, guard(getattr(os, name)))
    for name in ("replace", "rename"):
        monkeypatch.setattr(os, name, guard(getattr(os, name), 2))

    def make(root: Path) -> list[str]:
        roots.append(os.path.abspath(root))
        return refused

    yield make
