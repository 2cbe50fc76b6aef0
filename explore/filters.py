"""Region filters: which files an explorer may return regions from (``explore --include/--exclude/--language``).

A :class:`RegionFilter` is applied to the ranked candidates **before** packing or shaping, so K and B are filled
with regions of matching files, not cut afterwards. Patterns are git's wildmatch (``.gitignore`` syntax, through
the ``pathspec`` library) over repo-relative POSIX paths: ``*.py`` matches at any depth, ``src/`` a directory and
everything below it, ``/setup.py`` only at the top, ``**/tests/*`` at any depth; ``!`` negates within one list.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pathspec import GitIgnoreSpec

from swe_explore.chunking.languages import LANGUAGES
from swe_explore.chunking.types import ScoredChunk, ScoredRegion


@dataclass(frozen=True)
class RegionFilter:
    """The files regions may come from: matching some ``include`` pattern (any file when there is none), no
    ``exclude`` pattern, and written in one of ``languages`` (any language when empty).

    :param include: wildmatch patterns (module docstring); a path must match one of them.
    :param exclude: wildmatch patterns; a path matching one is dropped (exclude wins over include).
    :param languages: language names of :data:`swe_explore.chunking.languages.LANGUAGES` (``python``, ``go``,
        ..., ``text`` for docs/config); a chunk's language is the walker's (``.h`` files: ``c`` or ``cpp``).
    :raises ValueError: for an unknown language (listing the valid ones) or an empty pattern.
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    _include: GitIgnoreSpec | None = field(init=False, repr=False, compare=False, default=None)
    _exclude: GitIgnoreSpec | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        unknown = [name for name in self.languages if name not in LANGUAGES]
        if unknown:
            raise ValueError(f"unknown language(s) {', '.join(unknown)}; valid: {', '.join(LANGUAGES)}")
        for pattern in (*self.include, *self.exclude):
            if not pattern.strip():
                raise ValueError("an --include/--exclude pattern is empty")
        object.__setattr__(self, "_include", GitIgnoreSpec.from_lines(self.include) if self.include else None)
        object.__setattr__(self, "_exclude", GitIgnoreSpec.from_lines(self.exclude) if self.exclude else None)

    @property
    def active(self) -> bool:
        """Whether the filter drops anything at all (some pattern or language given)."""
        return bool(self.include or self.exclude or self.languages)

    def describe(self) -> str:
        """The filter as the command line gives it, e.g. ``--include '*.py' --exclude tests/ --language python``."""
        flags = [("--include", p) for p in self.include] + [("--exclude", p) for p in self.exclude]
        flags += [("--language", name) for name in self.languages]
        return " ".join(f"{flag} {shlex.quote(value)}" for flag, value in flags)

    def keeps(self, path: str, language: str | None = None) -> bool:
        """Whether regions of this file may be returned.

        :param path: repo-relative POSIX path.
        :param language: the file's language (``None``: not checked against ``languages``).
        :return: whether the file passes.
        """
        if self.languages and language is not None and language not in self.languages:
            return False
        if self._include is not None and not self._include.match_file(path):
            return False
        return not (self._exclude is not None and self._exclude.match_file(path))

    def chunks(self, ranked: Sequence[ScoredChunk]) -> list[ScoredChunk]:
        """The ranked chunks of the files the filter keeps, in their order.

        :param ranked: scored chunks, best first.
        :return: the kept ones.
        """
        return [s for s in ranked if self.keeps(s.chunk.path, s.chunk.language)]

    def regions(self, regions: Iterable[ScoredRegion], languages: dict[str, str]) -> list[ScoredRegion]:
        """The regions of the files the filter keeps (for regions added outside the ranking: shaped tests).

        :param regions: scored regions.
        :param languages: path -> language of the snapshot's indexed files.
        :return: the kept ones, in their order.
        """
        return [r for r in regions if self.keeps(r.path, languages.get(r.path))]


def region_filter(
    include: Sequence[str] = (), exclude: Sequence[str] = (), languages: Sequence[str] = ()
) -> RegionFilter | None:
    """A filter from the command line's lists, or ``None`` when none is given.

    :param include: ``--include`` patterns.
    :param exclude: ``--exclude`` patterns.
    :param languages: ``--language`` names.
    :return: the filter, or ``None``.
    :raises ValueError: for an unknown language or an empty pattern.
    """
    found = RegionFilter(tuple(include), tuple(exclude), tuple(languages))
    return found if found.active else None
