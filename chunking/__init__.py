"""Snapshot walking and chunk strategies: snapshot -> files -> chunks (see ``docs/chunking.md``)."""

from chunking.registry import CHUNKERS, ChunkStats, chunk_snapshot, make_chunker
from chunking.types import Chunk, SourceFile
from chunking.walk import WalkConfig, WalkStats, walk_snapshot

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
