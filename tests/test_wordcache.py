"""Tests of the word-cache token encoder (retrievers/wordcache.py): the same ids as the Hugging Face tokenizer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from swe_explore.retrievers.wordcache import WordCacheEncoder, supports_word_cache

if TYPE_CHECKING:
    from tokenizers import Tokenizer

WORDS = ["def", "get", "##ter", "user", "name", "self", "return", "cafe", "a", "b", "##c", "x", "1", "##2", "mask"]
PUNCT = list("_():.,[]#=\"'!-/{}`~")
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

#: Texts that exercise every rule of the word path and every reason to fall back to the tokenizer.
TEXTS = [
    "def getter(self):\n    return self.user_name",
    "A\x0cB\x0bC\x00D\x7fE\x1fF",  # control characters are deleted, so A..F is one word
    "tab\tand\r\nCRLF  line\rbreaks",
    "literal [CLS] and [mask] tokens",  # added tokens are matched before normalizing: fallback
    "naïve café 日本語 über",  # non-ASCII: fallback
    "x" * 150,  # longer than max_input_chars_per_word: [UNK]
    "getter" * 16,  # 96 characters: WordPiece pieces
    "",
    "   \n\t ",
    "UPPER_Case MiXeD123abc 12 getter1",
    "{'a': [b, \"c\"]} # ~`!",
    "unknown words zzz qqq",
]


def _bert_tokenizer() -> Tokenizer:
    """A tiny BERT-uncased-style tokenizer: BertNormalizer + BertPreTokenizer + WordPiece, special tokens added."""
    from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers

    vocab = {t: i for i, t in enumerate(SPECIAL + WORDS + PUNCT)}
    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.add_special_tokens([AddedToken(t, normalized=False) for t in SPECIAL])
    return tok


def _per_text(rows: np.ndarray, ids: np.ndarray, n: int) -> list[list[int]]:
    """Split the encoder's (rows, ids) output into one id list per text."""
    return [ids[rows == i].tolist() for i in range(n)]


@pytest.mark.parametrize("max_length", [None, 3])
def test_ids_equal_the_tokenizer_on_adversarial_texts(max_length: int | None) -> None:
    """Control characters, CRLF, [CLS] literals, Unicode, 150-character words: ids equal encode_batch_fast's."""
    tok = _bert_tokenizer()
    encoder = WordCacheEncoder(tok)
    assert encoder.enabled
    expected = [e.ids[:max_length] for e in tok.encode_batch_fast(TEXTS, add_special_tokens=False)]
    got = _per_text(*encoder.encode(TEXTS, max_length), len(TEXTS))
    assert got == expected
    assert expected[1] == [tok.token_to_id("[UNK]")]  # "abcdef" after deleting the control characters
    assert expected[3][1] == tok.token_to_id("[CLS]")  # the literal became the special token
    assert expected[0][:3] == [tok.token_to_id(w) for w in ("def", "get", "##ter")]


def test_word_cache_survives_clearing_and_reuse() -> None:
    """A cache cleared when full, and a second call reusing the cache, still give the tokenizer's ids."""
    tok = _bert_tokenizer()
    encoder = WordCacheEncoder(tok, max_words=5)
    expected = [e.ids for e in tok.encode_batch_fast(TEXTS, add_special_tokens=False)]
    for _ in range(2):
        assert _per_text(*encoder.encode(TEXTS), len(TEXTS)) == expected
    assert _per_text(*encoder.encode([]), 0) == []


def test_a_negative_max_length_is_an_error() -> None:
    """A negative token budget is refused (the word path and the tokenizer path would cut it differently)."""
    encoder = WordCacheEncoder(_bert_tokenizer())
    with pytest.raises(ValueError, match="max_length"):
        encoder.encode(TEXTS, -1)
    assert _per_text(*encoder.encode(TEXTS, 0), len(TEXTS)) == [[] for _ in TEXTS]


def test_other_tokenizers_fall_back_to_the_tokenizer(tiny_model_dir: Path) -> None:
    """A WordLevel + Whitespace tokenizer (the tiny test model's) is not eligible; its ids come from the tokenizer."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tiny_model_dir / "tokenizer.json"))
    assert not supports_word_cache(tok)
    encoder = WordCacheEncoder(tok)
    texts = ["alpha beta, gamma!", "Request session cookie"]
    expected = [e.ids for e in tok.encode_batch_fast(texts, add_special_tokens=False)]
    assert _per_text(*encoder.encode(texts), 2) == expected


def test_embedder_on_a_wordpiece_model_matches_model2vec(tmp_path: Path) -> None:
    """Potion vectors of a WordPiece model2vec model (word path) equal StaticModel.encode's, truncation included."""
    from model2vec import StaticModel

    from swe_explore.retrievers.potion import Embedder

    tok = _bert_tokenizer()
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(tok.get_vocab_size(), 8)).astype(np.float32)
    StaticModel(matrix, tok, normalize=False).save_pretrained(tmp_path)
    texts = [t for t in TEXTS if t.strip()]
    for max_length in (512, 4):
        ours = Embedder(str(tmp_path), max_length=max_length).encode(texts)
        ref = StaticModel.from_pretrained(tmp_path).encode(texts, max_length=max_length, normalize=False)
        norms = np.linalg.norm(ref, axis=1, keepdims=True)
        ref = np.divide(ref, norms, out=np.zeros_like(ref), where=norms > 0)
        np.testing.assert_allclose(ours, ref, atol=1e-6)


@pytest.mark.slow
def test_real_model_ids_on_a_dev_snapshot(real_potion_dir: Path) -> None:
    """On every window chunk of pydata__xarray-7393 the real model's ids equal the tokenizer's (truncated at 512)."""
    from swe_explore.chunking.registry import chunk_snapshot, make_chunker
    from swe_explore.retrievers.common import document_text
    from swe_explore.retrievers.potion import _untruncated_tokenizer, load_embedding_model

    snapshot = Path(__file__).resolve().parents[1] / "repos" / "dev" / "pydata__xarray-7393"
    if not snapshot.is_dir():
        pytest.skip(f"dev snapshot not materialised at {snapshot}")
    model, fingerprint = load_embedding_model(str(real_potion_dir))
    tok = _untruncated_tokenizer(model, fingerprint)
    chunks, _ = chunk_snapshot(snapshot, make_chunker("window"))
    texts = [document_text(c)[: 512 * model.median_token_length] for c in chunks]
    encoder = WordCacheEncoder(tok)
    rows, ids = encoder.encode(texts, 512)
    order = np.argsort(rows, kind="stable")
    bounds = np.searchsorted(rows[order], np.arange(len(texts) + 1))
    got = [ids[order][bounds[i] : bounds[i + 1]].tolist() for i in range(len(texts))]
    expected = [e.ids[:512] for e in tok.encode_batch_fast(texts, add_special_tokens=False)]
    assert len(texts) > 2000 and got == expected
