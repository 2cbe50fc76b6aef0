"""Exploration: snapshot + issue text -> at most K ranked regions within a line budget of B lines.

:mod:`~swe_explore.explore.explorer` (``IndexedExplorer`` and :func:`make_explorer`) runs chunker -> persisted
index -> retriever ranking -> ranking priors (:mod:`~swe_explore.explore.priors`) -> the line-budget packer
(:mod:`~swe_explore.explore.packing`); :mod:`~swe_explore.explore.reference` holds the public reference
baselines behind the same call; :mod:`~swe_explore.explore.options` the command-line options that build them.
"""
