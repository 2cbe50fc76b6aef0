"""Tests of Potion (docs/retrievers.md): model resolution, cosine ranking, long chunks, NaN and empty chunks."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from swe_explore.chunking.types import Chunk
from swe_explore.indexes.files import CorruptIndexError, load_retriever, save_retriever
from swe_explore.retrievers.base import Hit
from swe_explore.retrievers.potion import (
    DEFAULT_EMBEDDING_MODEL,
    MODEL_ENV_VAR,
    PotionRetriever,
    load_embedding_model,
    resolve_model_spec,
)

ModelFactory = Callable[[Mapping[str, Sequence[float]]], Path]


def _chunks(texts: list[str]) -> list[Chunk]:
    """One chunk per text in ``f.py``."""
    return [Chunk("f.py", i + 1, i + 1, text=t) for i, t in enumerate(texts)]


def _potion(model: Path, texts: list[str], **kw: object) -> PotionRetriever:
    """A Potion retriever over the texts only."""
    r = PotionRetriever(model=str(model), fields=("text",), **kw)  # type: ignore[arg-type]
    r.build(_chunks(texts))
    return r


def test_model_spec_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model is the argument, else $SWE_EXPLORE_POTION_MODEL, else the default hub id."""
    monkeypatch.delenv(MODEL_ENV_VAR, raising=False)
    assert resolve_model_spec(None) == DEFAULT_EMBEDDING_MODEL == "minishlab/potion-base-8M"
    monkeypatch.setenv(MODEL_ENV_VAR, "/models/potion")
    assert resolve_model_spec(None) == "/models/potion"
    assert resolve_model_spec("/other") == "/other"


def test_unreachable_hub_id_says_pass_model_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hub id that cannot be loaded (offline) raises ValueError telling the user to pass --model PATH."""
    import model2vec

    def offline(*args: object, **kwargs: object) -> None:
        """Fail like huggingface_hub does without network."""
        raise OSError("hub unreachable")

    monkeypatch.setattr(model2vec.StaticModel, "from_pretrained", offline)
    with pytest.raises(ValueError, match=r"'someone/no-such-model'.*pass --model PATH"):
        load_embedding_model("someone/no-such-model")


def test_missing_model_directory() -> None:
    """A model path that does not exist raises FileNotFoundError naming it."""
    with pytest.raises(FileNotFoundError, match="/no/such/potion-dir"):
        PotionRetriever(model="/no/such/potion-dir")


def test_cosine_ranking_and_zero_vectors(tiny_model_dir: Path) -> None:
    """Exact match scores 1, a half match 1/sqrt(2); empty and unknown-word chunks are zero vectors, never returned."""
    r = _potion(tiny_model_dir, ["alpha", "beta", "alpha beta", "", "zzz unknown"])
    # pytest.approx stands in for the float score
    assert r.search("alpha") == [Hit(0, pytest.approx(1.0)), Hit(2, pytest.approx(1 / math.sqrt(2)))]  # type: ignore[arg-type]
    vectors = r.state().files["vectors.npy"]
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1, 1, 1, 0, 0], abs=1e-6)
    assert np.isfinite(vectors).all() and vectors.dtype == np.float32
    assert r.search("") == [] and r.search("nothing known") == []


def test_br21_long_chunk_tail(tiny_model_factory: ModelFactory) -> None:
    """A word after token 600 counts with max_length=None; the default (512) truncates it, as documented.

    See docs/retrievers.md, 'Potion' (long chunks).
    """
    model = tiny_model_factory({"filler": [1.0, 0.0], "needle": [0.0, 1.0]})
    texts = ["filler " * 600 + "needle", "filler"]
    full = _potion(model, texts, max_length=None)
    # mean = (600 * (1, 0) + (0, 1)) / 601 -> unit vector (600, 1) / sqrt(360001); cosine with (0, 1):
    # pytest.approx stands in for the float score
    assert full.search("needle") == [Hit(0, pytest.approx(1 / math.sqrt(360001), rel=1e-4))]  # type: ignore[arg-type]
    truncated = _potion(model, texts)
    assert truncated.config()["max_length"] == 512
    assert truncated.search("needle") == []
    # only the first 512 tokens ('filler') count
    assert truncated.state().files["vectors.npy"][0] == pytest.approx([1.0, 0.0])


def test_encode_matches_model2vec(tiny_model_factory: ModelFactory) -> None:
    """Our mean pooling equals StaticModel.encode (then L2-normalised) for max_length None, 512 and 3."""
    model_dir = tiny_model_factory({"filler": [1.0, 0.5], "needle": [0.0, 1.0], "other": [-1.0, 2.0]})
    texts = ["filler needle", "other " * 700 + "needle", "", "unknown words only", "needle other filler needle"]
    for max_length in (None, 512, 3):
        r = PotionRetriever(model=str(model_dir), max_length=max_length)
        ref = r.embedder.model.encode(texts, max_length=max_length, normalize=False)
        norms = np.linalg.norm(ref, axis=1, keepdims=True)
        ref = np.divide(ref, norms, out=np.zeros_like(ref), where=norms > 0)
        np.testing.assert_allclose(r.embedder.encode(texts), ref, atol=1e-6)


def test_nan_vectors_rejected(tiny_model_factory: ModelFactory) -> None:
    """A model producing NaN raises ValueError naming the chunk instead of storing NaN vectors."""
    model = tiny_model_factory({"fine": [1.0, 0.0], "poison": [float("nan"), 0.0]})
    r = PotionRetriever(model=str(model), fields=("text",))
    chunks = [Chunk("ok.py", 1, 2, text="fine"), Chunk("bad.py", 3, 4, text="fine poison")]
    with pytest.raises(ValueError, match=r"NaN/inf in 1 vector\(s\), first for bad.py:3-4"):
        r.build(chunks)


def test_config_and_validation(tiny_model_dir: Path) -> None:
    """The config records the model spec, max_length and fields; bad max_length values raise ValueError."""
    r = PotionRetriever(model=str(tiny_model_dir), max_length=256)
    assert r.config() == {"model": str(tiny_model_dir), "max_length": 256, "fields": ["path", "symbol", "text"]}
    assert PotionRetriever(model=str(tiny_model_dir)).config()["max_length"] == 512
    with pytest.raises(ValueError, match="max_length"):
        PotionRetriever(model=str(tiny_model_dir), max_length=0)
    with pytest.raises(ValueError, match="top_n"):
        r.search("alpha", top_n=0)


def test_index_built_with_another_model_is_refused(
    tiny_model_dir: Path, tiny_model_factory: ModelFactory, tmp_path: Path
) -> None:
    """Loading with an explicitly given different model fails on the fingerprint, naming retriever.json."""
    r = _potion(tiny_model_dir, ["alpha", "beta"])
    save_retriever(r, tmp_path)
    other = tiny_model_factory({"alpha": [0.0, 1.0, 0.0, 0.0], "beta": [1.0, 0.0, 0.0, 0.0]})
    with pytest.raises(CorruptIndexError, match="the index is stale for this model.*--rebuild") as err:
        load_retriever(tmp_path, model=str(other))
    assert err.value.path == tmp_path / "retriever.json"
    assert load_retriever(tmp_path, model=str(tiny_model_dir)).search("alpha") == r.search("alpha")


def test_env_var_never_overrides_the_model_asked_for(
    tiny_model_dir: Path, tiny_model_factory: ModelFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With $SWE_EXPLORE_POTION_MODEL naming another model, load uses the explicit model, else the recorded one."""
    r = _potion(tiny_model_dir, ["alpha", "beta"])
    save_retriever(r, tmp_path)
    other = tiny_model_factory({"alpha": [0.0, 1.0, 0.0, 0.0], "beta": [1.0, 0.0, 0.0, 0.0]})
    monkeypatch.setenv(MODEL_ENV_VAR, str(other))
    explicit = load_retriever(tmp_path, model=str(tiny_model_dir))
    recorded = load_retriever(tmp_path)
    for loaded in (explicit, recorded):
        assert loaded.config()["model"] == str(tiny_model_dir)
        # pytest.approx stands in for the float score
        assert loaded.search("alpha") == r.search("alpha") == [Hit(0, pytest.approx(1.0))]  # type: ignore[arg-type]
    assert PotionRetriever(fields=("text",)).config()["model"] == str(other)  # building: env var over default
    assert PotionRetriever(model=str(tiny_model_dir)).config()["model"] == str(tiny_model_dir)  # explicit wins


def test_env_var_replaces_a_recorded_model_that_is_missing(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recorded model path missing on this machine: load uses $SWE_EXPLORE_POTION_MODEL, else names the path."""
    import shutil

    import swe_explore.retrievers.potion as potion_module

    copy = tmp_path / "model-copy"
    shutil.copytree(tiny_model_dir, copy)
    r = _potion(copy, ["alpha", "beta"])
    (tmp_path / "index").mkdir()
    save_retriever(r, tmp_path / "index")
    shutil.rmtree(copy)
    monkeypatch.delitem(potion_module._MODEL_CACHE, str(copy.resolve()))  # as in a new process
    with pytest.raises(FileNotFoundError, match="model-copy"):
        load_retriever(tmp_path / "index")
    monkeypatch.setenv(MODEL_ENV_VAR, str(tiny_model_dir))  # the same weights, elsewhere
    loaded = load_retriever(tmp_path / "index")
    assert loaded.config()["model"] == str(tiny_model_dir)
    # pytest.approx stands in for the float score
    assert loaded.search("beta") == r.search("beta") == [Hit(1, pytest.approx(1.0))]  # type: ignore[arg-type]


@pytest.mark.slow
def test_real_model_encode_matches_model2vec(real_potion_dir: Path, sample_chunks: list[Chunk]) -> None:
    """With the real model our pooling equals StaticModel.encode for max_length None and 512."""
    texts = [c.text for c in sample_chunks] + ["café ☕ 变量 " * 300, ""]
    for max_length in (None, 512):
        r = PotionRetriever(model=str(real_potion_dir), max_length=max_length)
        ref = r.embedder.model.encode(texts, max_length=max_length, normalize=False)
        norms = np.linalg.norm(ref, axis=1, keepdims=True)
        ref = np.divide(ref, norms, out=np.zeros_like(ref), where=norms > 0)
        np.testing.assert_allclose(r.embedder.encode(texts), ref, atol=1e-5)


@pytest.mark.slow
def test_real_model_vectors_and_ranking(real_potion_dir: Path, sample_chunks: list[Chunk]) -> None:
    """The real potion-base-8M gives 256-d unit vectors and ranks the cookie functions first for a cookie query."""
    r = PotionRetriever(model=str(real_potion_dir))
    r.build(sample_chunks)
    vectors = r.state().files["vectors.npy"]
    assert vectors.shape == (6, 256)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0] * 6, abs=1e-5)
    assert sample_chunks[r.search("get_cookie from the cookie jar")[0].index].path == "pkg/cookies.py"


@pytest.mark.slow
def test_real_model_long_chunk_tail_counts(real_potion_dir: Path) -> None:
    """Long chunks, real model: a word at the end of a >512-token chunk moves its vector only without truncation."""
    long_text = "value = compute(value) + 1\n" * 150 + "def frobnicate_widget(): pass\n"
    chunks = _chunks([long_text])
    full = PotionRetriever(model=str(real_potion_dir), fields=("text",), max_length=None)
    truncated = PotionRetriever(model=str(real_potion_dir), fields=("text",))
    full.build(chunks)
    truncated.build(chunks)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(real_potion_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    assert len(tokenizer.encode(long_text, add_special_tokens=False).ids) > 600
    assert full.scores("frobnicate widget")[0] > truncated.scores("frobnicate widget")[0]
