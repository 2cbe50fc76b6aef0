"""Exploration: snapshot + issue text -> at most K ranked regions within a line budget of B lines.

:mod:`~swe_explore.explore.explorer` (``IndexedExplorer``, ``ReferenceAdapter`` and :func:`make_explorer`) runs
chunker -> persisted index -> retriever ranking -> ranking priors (:mod:`~swe_explore.explore.priors`) -> the
line-budget packer (:mod:`~swe_explore.explore.packing`); :mod:`~swe_explore.explore.fusion` is the default
explorer (the learned ranker); :mod:`~swe_explore.explore.reference` holds the public reference baselines behind
the same call; :mod:`~swe_explore.explore.config` which options each explorer takes (the command-line flags are
:mod:`swe_explore.commands.explorer_args`).
"""
