"""Snapshot walking and chunk strategies: snapshot -> files -> chunks (see ``docs/chunking.md``)."""

from swe_explore.chunking.registry import CHUNKERS, ChunkStats, chunk_snapshot, make_chunker
from swe_explore.chunking.types import Chunk, SourceFile
from swe_explore.chunking.walk import WalkConfig, WalkStats, walk_snapshot

__all__ = [
    "CHUNKERS",
    "Chunk",
    "ChunkStats",
    "SourceFile",
    "WalkConfig",
    "WalkStats",
    "chunk_snapshot",
    "make_chunker",
    "walk_snapshot",
]
