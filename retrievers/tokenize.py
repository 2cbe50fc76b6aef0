"""The code-aware tokenizer shared by every lexical retriever (BM25, TF-IDF), for chunks and issue text alike.

What :meth:`CodeTokenizer.tokenize` does, in order:

1. **Words.** One compiled regex, ``\\w+`` (Unicode), finds the words of the text. Everything else is a
   separator: punctuation, operators, whitespace, and also the ``.`` of dotted names (``os.path.join`` is the
   three words ``os``, ``path``, ``join``) and the ``/`` of paths. ``\\w`` does not match format characters
   such as a byte-order mark (``\\ufeff``) or a zero-width space, so they never leak into tokens.
2. **Parts.** Each word is split on ``_`` (snake_case) and at case changes (camelCase and PascalCase,
   acronyms included): a lower-case letter or digit followed by an upper-case one starts a part, and so does
   the last capital of a run that is followed by a lower-case letter (``HTTPServerError`` ->
   ``HTTP``, ``Server``, ``Error``). Letters and digits are split apart (``utf8Decode`` -> ``utf``, ``8``,
   ``Decode``). Case tests use :meth:`str.isupper`/:meth:`str.islower`, so non-ASCII identifiers split too
   (``naïveBayes`` -> ``naïve``, ``Bayes``); scripts without case (CJK) stay whole.
3. **Whole identifier.** When a word has two or more parts, the whole word is emitted *before* its parts
   (``whole="raw"``: lower-cased, leading/trailing underscores stripped, so ``get_user_name`` ->
   ``get_user_name``; ``whole="joined"``: underscores removed too, so ``get_user_name`` and ``getUserName``
   both give ``getusername``; ``whole="none"``: not emitted). An issue that names ``get_user_name`` then
   matches that identifier exactly, with a high idf, as well as its parts.
4. **Normalise and filter.** Every token is lower-cased (:meth:`str.lower`, so ``ß`` stays ``ß``). Tokens
   shorter than ``min_len`` characters (default 2: ``a``, ``i``, ``x``), tokens that start with a digit
   (numeric literals: ``42``, ``0x1f``, ``1e10``, ``2d``) and stop words are dropped.

Stop words (``stopwords=``): ``"none"``; ``"english"`` (about 150 English function words, including the
pieces contractions leave behind, e.g. ``doesn``); ``"english+code"`` (also ubiquitous keywords such as
``self``, ``def``, ``return``, ``import``, ``none``, ``true``). The defaults (``whole="raw"``,
``stopwords="english+code"``, ``min_len=2``) were chosen by measurement on the dev set: English stop words
matter most, whole identifiers next, the code keywords a little (``docs/retrievers.md``).

Examples with the defaults::

    >>> CodeTokenizer().tokenize("def getUserName(self): return os.path.join(a, b)")
    ['getusername', 'get', 'user', 'name', 'os', 'path', 'join']
    >>> CodeTokenizer().tokenize("raise HTTPServerError(404)  # the get_user_name() call")
    ['httpservererror', 'http', 'server', 'error', 'get_user_name', 'get', 'user', 'name', 'call']
    >>> CodeTokenizer(stopwords="none").tokenize("def getUserName(self):")
    ['def', 'getusername', 'get', 'user', 'name', 'self']

Speed: splitting a word is cached per distinct word (a dict of at most ``cache_size`` entries, cleared when
full), so the hot loop is one ``findall`` plus one dict lookup per word; see ``docs/retrievers.md`` for lines/s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "ASCII_WORD_BYTES",
    "CODE_STOP_WORDS",
    "ENGLISH_STOP_WORDS",
    "STOP_WORD_LISTS",
    "CodeTokenizer",
    "ascii_words",
    "byte_class",
    "word_codes",
]

_WORD_RE = re.compile(r"\w+")
# ASCII fast path of rule 2: an acronym before a capitalised word, a capitalised or lower-case word, an
# acronym, a digit run.
_ASCII_PART_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

#: English function words (NLTK-like), plus what contractions leave after splitting on ``'``.
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "either",
        "else",
        "etc",
        "even",
        "ever",
        "every",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "however",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "might",
        "more",
        "most",
        "must",
        "my",
        "myself",
        "neither",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "often",
        "on",
        "once",
        "only",
        "or",
        "other",
        "otherwise",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "per",
        "please",
        "quite",
        "rather",
        "really",
        "same",
        "shall",
        "she",
        "should",
        "since",
        "so",
        "some",
        "still",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "therefore",
        "these",
        "they",
        "this",
        "those",
        "though",
        "through",
        "thus",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "very",
        "via",
        "was",
        "we",
        "well",
        "were",
        "what",
        "whatever",
        "when",
        "whenever",
        "where",
        "whether",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "within",
        "without",
        "would",
        "yet",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "aren",
        "couldn",
        "didn",
        "doesn",
        "don",
        "hadn",
        "hasn",
        "haven",
        "isn",
        "ll",
        "mustn",
        "needn",
        "shan",
        "shouldn",
        "ve",
        "wasn",
        "weren",
        "won",
        "wouldn",
    ]
)

#: Keywords and names that occur in most chunks of a code base and say little about a particular issue.
CODE_STOP_WORDS: frozenset[str] = frozenset(
    [
        "self",
        "cls",
        "def",
        "return",
        "import",
        "from",
        "class",
        "none",
        "true",
        "false",
        "null",
        "nil",
        "elif",
        "pass",
        "raise",
        "try",
        "except",
        "finally",
        "lambda",
        "yield",
        "async",
        "await",
        "var",
        "const",
        "function",
        "func",
        "fn",
        "public",
        "private",
        "protected",
        "static",
        "void",
        "args",
        "kwargs",
    ]
)

#: The stop-word lists :class:`CodeTokenizer` accepts, by name.
STOP_WORD_LISTS: dict[str, frozenset[str]] = {
    "none": frozenset(),
    "english": ENGLISH_STOP_WORDS,
    "english+code": ENGLISH_STOP_WORDS | CODE_STOP_WORDS,
}

_WHOLE_MODES = ("raw", "joined", "none")


def _split_parts(word: str) -> list[str]:
    """Split one ``\\w+`` word into its parts (rule 2 of the module docstring), case preserved.

    :param word: a word matched by ``\\w+``.
    :return: the parts in order, without underscores; ``[]`` for a word made only of underscores.
    """
    parts: list[str] = []
    for piece in word.split("_"):
        if not piece:
            continue
        if piece.isascii():
            parts.extend(_ASCII_PART_RE.findall(piece))
            continue
        start = 0
        n = len(piece)
        for i in range(1, n):
            prev, cur = piece[i - 1], piece[i]
            boundary = (
                ((prev.islower() or prev.isdigit()) and cur.isupper())
                or (prev.isupper() and cur.isupper() and i + 1 < n and piece[i + 1].islower())
                or (prev.isdigit() != cur.isdigit())
            )
            if boundary:
                parts.append(piece[start:i])
                start = i
        parts.append(piece[start:])
    return parts


class CodeTokenizer:
    """Code-aware tokenizer: identifier splitting, whole identifiers, lower-casing, stop words.

    See the module docstring for the exact rules and examples. Instances are cheap; each keeps its own cache
    of split words, so reuse one instance for a whole snapshot.

    :param whole: how the whole identifier of a multi-part word is emitted: ``"raw"`` (lower-cased, outer
        underscores stripped), ``"joined"`` (underscores removed too) or ``"none"``.
    :param stopwords: name of a stop-word list in :data:`STOP_WORD_LISTS`.
    :param min_len: minimum token length in characters (``>= 1``).
    :param cache_size: maximum number of distinct words kept in the split cache.
    :raises ValueError: for an unknown ``whole`` mode or stop-word list, or ``min_len < 1``.
    """

    def __init__(
        self,
        whole: str = "raw",
        stopwords: str = "english+code",
        min_len: int = 2,
        cache_size: int = 500_000,
    ) -> None:
        if whole not in _WHOLE_MODES:
            raise ValueError(f"unknown whole-identifier mode {whole!r}; valid: {', '.join(_WHOLE_MODES)}")
        if stopwords not in STOP_WORD_LISTS:
            raise ValueError(f"unknown stop-word list {stopwords!r}; valid: {', '.join(STOP_WORD_LISTS)}")
        if not isinstance(min_len, int) or min_len < 1:
            raise ValueError(f"min_len must be an integer >= 1, got {min_len!r}")
        self.whole = whole
        self.stopwords = stopwords
        self.min_len = min_len
        self._stop = STOP_WORD_LISTS[stopwords]
        self._cache: dict[str, list[str]] = {}
        self._cache_size = cache_size

    def config(self) -> dict[str, Any]:
        """The tokenizer's parameters as JSON (the split cache size is not one: it never changes tokens).

        :return: ``{"whole": ..., "stopwords": ..., "min_len": ...}``.
        """
        return {"whole": self.whole, "stopwords": self.stopwords, "min_len": self.min_len}

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | CodeTokenizer | None) -> CodeTokenizer:
        """Build a tokenizer from :meth:`config` output (or pass an instance through).

        :param config: a mapping with any of the keys of :meth:`config`, an instance, or ``None`` (defaults).
        :return: the tokenizer.
        :raises ValueError: for unknown keys or invalid values.
        """
        if config is None:
            return cls()
        if isinstance(config, CodeTokenizer):
            return config
        if not isinstance(config, Mapping):
            raise ValueError(f"tokenizer config must be a mapping, got {type(config).__name__}")
        unknown = set(config) - {"whole", "stopwords", "min_len"}
        if unknown:
            raise ValueError(f"unknown tokenizer option(s) {sorted(unknown)}; valid: whole, stopwords, min_len")
        return cls(**dict(config))

    def __repr__(self) -> str:
        return f"CodeTokenizer(whole={self.whole!r}, stopwords={self.stopwords!r}, min_len={self.min_len})"

    def _word_tokens(self, word: str) -> list[str]:
        """Tokens of one ``\\w+`` word (rules 2-4), uncached.

        :param word: the word, case preserved.
        :return: its tokens in order: the whole identifier (if emitted) then the parts.
        """
        parts = _split_parts(word)
        candidates = [p.lower() for p in parts]
        if len(parts) >= 2 and self.whole != "none":
            whole = word.strip("_").lower()
            if self.whole == "joined":
                whole = whole.replace("_", "")
            candidates.insert(0, whole)
        stop = self._stop
        min_len = self.min_len
        return [t for t in candidates if len(t) >= min_len and not t[0].isdigit() and t not in stop]

    def word_tokens(self, word: str) -> list[str]:
        """Tokens of one ``\\w+`` word (rules 2-4), as :meth:`tokenize` emits them for it; cached.

        :param word: a word matched by ``\\w+`` (``""`` gives ``[]``).
        :return: its tokens in order (a shared list: do not modify it).
        """
        toks = self._cache.get(word)
        if toks is None:
            if len(self._cache) >= self._cache_size:
                self._cache.clear()
            if not word.isascii() or not word.isalnum():
                toks = self._word_tokens(word) if word else []
            elif word.isdigit():  # one part that starts with a digit
                toks = []
            elif word.isalpha() and word.islower():  # one part, itself
                toks = [word] if len(word) >= self.min_len and word not in self._stop else []
            else:
                toks = self._word_tokens(word)
            self._cache[word] = toks
        return toks

    def tokenize(self, text: str) -> list[str]:
        """Tokenize one text (a chunk's document text or an issue text).

        :param text: any text; ``""`` gives ``[]``.
        :return: the tokens in text order, duplicates kept (BM25 and TF-IDF count them).
        """
        cache = self._cache
        out: list[str] = []
        extend = out.extend
        for word in _WORD_RE.findall(text):
            toks = cache.get(word)
            extend(toks if toks is not None else self.word_tokens(word))
        return out


def byte_class(chars: bytes) -> np.ndarray:
    """A 256-entry boolean table: ``True`` at the given byte values."""
    table = np.zeros(256, dtype=bool)
    table[np.frombuffer(chars, dtype=np.uint8)] = True
    return table


#: Characters of ASCII text scanned at once by :func:`word_codes` (its arrays take about 10 bytes per character).
_SCAN_CHARS = 1 << 22

#: ASCII ``\\w``: ``[0-9A-Za-z_]``.
ASCII_WORD_BYTES = byte_class(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")


def ascii_words(texts: Sequence[str], run: np.ndarray, single: np.ndarray | None = None) -> tuple[Any, np.ndarray]:
    """The words of ASCII texts, found by one NumPy scan over their joined bytes (no per-word Python).

    A word is a maximal run of bytes of class ``run``, or one byte of class ``single`` (each such byte is a word
    of its own); every other byte separates words. The texts are joined by a space, which must be a separator.

    :param texts: ASCII texts.
    :param run: 256-entry boolean table of the bytes that form runs (e.g. :data:`ASCII_WORD_BYTES`).
    :param single: 256-entry boolean table of the bytes that are one-byte words, or ``None``; disjoint from ``run``.
    :return: ``(words, rows)``: an Arrow ``large_string`` array of the words, in text order, and an int64 array of
        the position in ``texts`` of each word's text.
    :raises UnicodeEncodeError: if a text is not ASCII.
    """
    import pyarrow as pa

    data = np.frombuffer(" ".join(texts).encode("ascii"), dtype=np.uint8)
    in_run = run[data]
    edges = np.flatnonzero(in_run[1:] != in_run[:-1]) + 1  # where runs start and end, alternately
    if in_run.size and in_run[0]:
        edges = np.concatenate([np.zeros(1, dtype=edges.dtype), edges])
    if in_run.size and in_run[-1]:
        edges = np.concatenate([edges, np.full(1, in_run.size, dtype=edges.dtype)])
    run_starts = edges[0::2]
    run_lengths = edges[1::2] - run_starts
    if single is None:
        starts, lengths, kept = run_starts, run_lengths, in_run
    else:  # merge the one-byte words into the runs (both sorted, never at the same byte)
        is_single = single[data]
        one = np.flatnonzero(is_single)
        at = np.searchsorted(run_starts, one)
        starts = np.insert(run_starts, at, one)
        lengths = np.insert(run_lengths, at, 1)
        kept = in_run | is_single
    offsets = np.zeros(starts.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    body = np.ascontiguousarray(data[kept])
    words = pa.Array.from_buffers(
        pa.large_string(), int(starts.size), [None, pa.py_buffer(offsets), pa.py_buffer(body)]
    )
    sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1
    first_word = np.searchsorted(starts, np.cumsum(sizes) - sizes)  # of each text (words never span two)
    per_text = np.diff(first_word, append=starts.size)
    return words, np.repeat(np.arange(len(texts), dtype=np.int64), per_text)


def word_codes(texts: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The ``\\w+`` words of many texts (rule 1), as distinct words and one code per occurrence.

    ASCII texts are split by :func:`ascii_words` (ASCII ``\\w`` is ``[0-9A-Za-z_]``), the others by the
    Unicode ``\\w+`` of :meth:`CodeTokenizer.tokenize`; the distinct words are hashed by Arrow's
    ``dictionary_encode``. On astropy's 26,877 chunks (24.5 MB) this takes 0.45-0.6 s where one ``findall`` and
    dictionary lookup per word take 1.2 s.

    :param texts: the texts.
    :return: ``(distinct, rows, codes)``: the distinct words (in first-seen order of the ASCII texts, then the
        others'), and int64 arrays with one entry per word occurrence: the text's position in ``texts`` and the
        word's position in ``distinct``. Occurrences are grouped by text, not in text order.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    plain = [i for i, t in enumerate(texts) if t.isascii()]
    other = [i for i, t in enumerate(texts) if not t.isascii()] if len(plain) < len(texts) else []
    pieces: list[Any] = []
    rows: list[np.ndarray] = []
    start = 0
    while start < len(plain):  # batches of about _SCAN_CHARS characters bound the scan's arrays
        end, size = start, 0
        while end < len(plain) and (end == start or size < _SCAN_CHARS):
            size += len(texts[plain[end]])
            end += 1
        words, batch_rows = ascii_words([texts[i] for i in plain[start:end]], ASCII_WORD_BYTES)
        pieces.append(words)
        rows.append(np.asarray(plain[start:end], dtype=np.int64)[batch_rows])
        start = end
    if other:
        found = [_WORD_RE.findall(texts[i]) for i in other]
        pieces.append(pa.array([w for words in found for w in words], type=pa.large_string()))
        rows.append(np.repeat(np.asarray(other, dtype=np.int64), [len(words) for words in found]))
    if not pieces:
        return [], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    encoded = pc.dictionary_encode(pa.chunked_array(pieces, type=pa.large_string())).combine_chunks()
    distinct: list[str] = encoded.dictionary.to_pylist()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return distinct, np.concatenate(rows), codes
