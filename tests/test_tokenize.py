"""Tests of the code-aware tokenizer: exact token lists for every rule."""

from __future__ import annotations

import pytest

from swe_explore.chunking.types import Chunk
from swe_explore.retrievers.common import document_text
from swe_explore.retrievers.tokenize import CODE_STOP_WORDS, ENGLISH_STOP_WORDS, CodeTokenizer

PLAIN = CodeTokenizer(stopwords="none")


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("getUserName", ["getusername", "get", "user", "name"]),
        ("HTTPServerError", ["httpservererror", "http", "server", "error"]),
        ("getHTTPResponse", ["gethttpresponse", "get", "http", "response"]),
        ("XMLHttpRequest", ["xmlhttprequest", "xml", "http", "request"]),
        ("parseURL", ["parseurl", "parse", "url"]),
        ("get_user_name", ["get_user_name", "get", "user", "name"]),
        ("MAX_RETRY_COUNT", ["max_retry_count", "max", "retry", "count"]),
        ("__init__", ["init"]),
        ("_private_helper", ["private_helper", "private", "helper"]),
        ("os.path.join", ["os", "path", "join"]),
        ("utf8Decode", ["utf8decode", "utf", "decode"]),
        ("int64", ["int64", "int"]),
        ("ABC", ["abc"]),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_identifier_splitting(text: str, tokens: list[str]) -> None:
    """camelCase, PascalCase with acronyms, snake_case and dotted names split into the whole word plus parts."""
    assert PLAIN.tokenize(text) == tokens


def test_whole_identifier_modes() -> None:
    """``whole`` emits the identifier raw (underscores kept), joined (underscores removed) or not at all."""
    text = "get_user_name getUserName"
    assert CodeTokenizer(whole="raw", stopwords="none").tokenize(text) == [
        "get_user_name",
        "get",
        "user",
        "name",
        "getusername",
        "get",
        "user",
        "name",
    ]
    assert CodeTokenizer(whole="joined", stopwords="none").tokenize(text) == [
        "getusername",
        "get",
        "user",
        "name",
        "getusername",
        "get",
        "user",
        "name",
    ]
    assert CodeTokenizer(whole="none", stopwords="none").tokenize(text) == ["get", "user", "name"] * 2


def test_punctuation_numbers_and_short_tokens_dropped() -> None:
    """Punctuation separates, numeric literals and one-letter tokens are dropped, alphanumerics stay."""
    text = "x = foo(a, b) + 42 * 0x1f - 1e10 // 2d; v2 = int64[i]"
    assert PLAIN.tokenize(text) == ["foo", "v2", "int64", "int"]


def test_min_len() -> None:
    """``min_len=3`` also drops two-letter tokens, whole identifiers included."""
    assert CodeTokenizer(stopwords="none", min_len=3).tokenize("os.path ab_cd abc_def") == [
        "path",
        "ab_cd",
        "abc_def",
        "abc",
        "def",
    ]


def test_default_stop_words() -> None:
    """The default drops English function words and ubiquitous code keywords but keeps the parts around them."""
    text = "The session is not closed when self.close() returns None in the Session class"
    assert CodeTokenizer().tokenize(text) == ["session", "closed", "close", "returns", "session"]


def test_stop_word_lists() -> None:
    """``english`` keeps code keywords, ``none`` keeps everything; a stop word inside an identifier still splits."""
    text = "def is_valid(self): return the_value"
    assert CodeTokenizer(stopwords="english").tokenize(text) == [
        "def",
        "is_valid",
        "valid",
        "self",
        "return",
        "the_value",
        "value",
    ]
    assert CodeTokenizer(stopwords="none").tokenize(text) == [
        "def",
        "is_valid",
        "is",
        "valid",
        "self",
        "return",
        "the_value",
        "the",
        "value",
    ]
    assert "self" in CODE_STOP_WORDS and "the" in ENGLISH_STOP_WORDS and "self" not in ENGLISH_STOP_WORDS


def test_bom_and_format_characters_never_leak() -> None:
    """A UTF-8 BOM and a zero-width space are separators, never part of a token."""
    assert PLAIN.tokenize("\ufeffimport os\n") == ["import", "os"]
    assert PLAIN.tokenize("foo\u200bbar\ufeffbaz") == ["foo", "bar", "baz"]
    assert all("\ufeff" not in t for t in PLAIN.tokenize("\ufeffclass \ufeffFoo\ufeff:"))


def test_unicode_identifiers() -> None:
    """Non-ASCII identifiers are kept, lower-cased and split at case changes; caseless scripts stay whole."""
    assert PLAIN.tokenize("größeWert = naïveBayes(Café)") == [
        "größewert",
        "größe",
        "wert",
        "naïvebayes",
        "naïve",
        "bayes",
        "café",
    ]
    assert PLAIN.tokenize("变量名 = ΔΕΛΤΑ_τιμή") == ["变量名", "δελτα_τιμή", "δελτα", "τιμή"]


@pytest.mark.parametrize("text", ["", "   \n\t", "+-*/()[]{}", "a b c 1 2 3", "\ufeff"])
def test_texts_without_tokens(text: str) -> None:
    """Empty, blank, punctuation-only and one-letter/number-only texts give no tokens."""
    assert CodeTokenizer().tokenize(text) == []


def test_small_cache_changes_nothing() -> None:
    """A cache far smaller than the vocabulary gives the same tokens as the default cache."""
    texts = ["fooBar baz_qux", "fooBar again", "HTTPError"]
    small = CodeTokenizer(stopwords="none", cache_size=1)
    assert (
        [small.tokenize(t) for t in texts]
        == [PLAIN.tokenize(t) for t in texts]
        == [
            ["foobar", "foo", "bar", "baz_qux", "baz", "qux"],
            ["foobar", "foo", "bar", "again"],
            ["httperror", "http", "error"],
        ]
    )


def test_config_round_trip_and_validation() -> None:
    """``config``/``from_config`` round-trip; unknown options and values raise ValueError naming them."""
    tok = CodeTokenizer(whole="joined", stopwords="english", min_len=3)
    assert tok.config() == {"whole": "joined", "stopwords": "english", "min_len": 3}
    assert CodeTokenizer.from_config(tok.config()).config() == tok.config()
    assert CodeTokenizer.from_config(None).config() == {"whole": "raw", "stopwords": "english+code", "min_len": 2}
    with pytest.raises(ValueError, match="whole-identifier mode 'bogus'"):
        CodeTokenizer(whole="bogus")
    with pytest.raises(ValueError, match="stop-word list 'french'"):
        CodeTokenizer(stopwords="french")
    with pytest.raises(ValueError, match="min_len"):
        CodeTokenizer(min_len=0)
    with pytest.raises(ValueError, match="lowercase"):
        CodeTokenizer.from_config({"lowercase": True})


def test_document_text_fields() -> None:
    """The document text joins path, symbol and text (skipping empty fields), or only the fields asked for."""
    text = "def to_dict(self):\n    pass"
    chunk = Chunk("xarray/core/dataset.py", 10, 11, "method", "Dataset.to_dict", "python", text)
    assert document_text(chunk) == "xarray/core/dataset.py\nDataset.to_dict\ndef to_dict(self):\n    pass"
    assert document_text(chunk, ("text",)) == "def to_dict(self):\n    pass"
    no_symbol = Chunk("a.py", 1, 1, text="pass")
    assert document_text(no_symbol) == "a.py\npass"
    assert CodeTokenizer().tokenize(document_text(chunk)) == [
        "xarray",
        "core",
        "dataset",
        "py",
        "dataset",
        "to_dict",
        "dict",
        "to_dict",
        "dict",
    ]
