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
from collections.abc import Mapping
from typing import Any

__all__ = ["CODE_STOP_WORDS", "ENGLISH_STOP_WORDS", "STOP_WORD_LISTS", "CodeTokenizer"]

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
            if toks is None:
                if len(cache) >= self._cache_size:
                    cache.clear()
                toks = cache[word] = self._word_tokens(word)
            extend(toks)
        return out
