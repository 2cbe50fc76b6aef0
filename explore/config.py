"""Which options each explorer takes: the one check behind :func:`~swe_explore.explore.explorer.make_explorer` and
the command line (:mod:`swe_explore.commands.explorer_args`), and each explorer's packer defaults.

Explorers come in three kinds (:func:`explorer_kind`): ``learned`` (the fusion explorer with the learned ranker),
``indexed`` (a retriever name: that retriever with the ranking priors) and ``reference`` (the reference
baselines, as specified: 80/20 windows, raw top-K, no line budget). An option an explorer would not use is an
error naming the option and the explorer, never silently ignored (:func:`check_explorer_options`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from swe_explore.explore.packing import LEARNED_PACK, PackConfig
from swe_explore.explore.reference import REFERENCE_EXPLORERS
from swe_explore.retrievers.registry import RETRIEVERS

#: The name of the fusion explorer with the learned ranker in :func:`make_explorer` and ``run --retriever``.
LEARNED = "learned"
#: Retrievers that take an embedding ``model`` option.
EMBEDDING_RETRIEVERS = ("potion", "faiss", "hybrid")
#: Ranked chunks a retriever explorer hands to the packer unless ``top_n`` says otherwise.
DEFAULT_TOP_N = 200
#: Every explorer name, in the order error messages list them.
EXPLORER_NAMES = (LEARNED, *RETRIEVERS, *REFERENCE_EXPLORERS)

_ALL = frozenset({"learned", "indexed", "reference"})
_OURS = frozenset({"learned", "indexed"})
_INDEXED = frozenset({"indexed"})
#: make_explorer's options -> the explorer kinds that take them (``model``: see :func:`takes_option`).
OPTION_KINDS: dict[str, frozenset[str]] = {
    "k": _ALL,
    "budget": _OURS,
    "pack": _OURS,
    "chunker": _INDEXED,
    "chunker_options": _INDEXED,
    "retriever_options": _INDEXED,
    "priors": _INDEXED,
    "top_n": _INDEXED,
    "store": _OURS,
    "rebuild": _OURS,
    "reuse": _OURS,
    "walk": _OURS,
    "model": _ALL,
    "ranker_model": frozenset({"learned"}),
    "files_first": frozenset({"learned"}),
    "shape": frozenset({"learned"}),
}


def explorer_kind(name: str) -> str:
    """The kind of an explorer: ``learned``, ``indexed`` (a retriever name) or ``reference``.

    :param name: explorer name.
    :return: its kind.
    :raises ValueError: for an unknown name, listing the valid ones.
    """
    if name == LEARNED:
        return "learned"
    if name in REFERENCE_EXPLORERS:
        return "reference"
    if name in RETRIEVERS:
        return "indexed"
    raise ValueError(f"unknown explorer {name!r}; valid: {', '.join(EXPLORER_NAMES)}")


def takes_option(name: str, option: str) -> bool:
    """Whether an explorer uses a :func:`make_explorer` option. ``model`` (the embedding model) is taken by
    ``learned`` (for models with dense features), the embedding retrievers and ``reference_potion``.

    :param name: explorer name.
    :param option: option name (a key of :data:`OPTION_KINDS`).
    :return: whether it applies.
    :raises ValueError: for an unknown explorer or option.
    """
    if option not in OPTION_KINDS:
        raise ValueError(f"unknown explorer option {option!r}; valid: {', '.join(OPTION_KINDS)}")
    kind = explorer_kind(name)
    if option == "model":
        return name in (LEARNED, *EMBEDDING_RETRIEVERS, "reference_potion")
    return kind in OPTION_KINDS[option]


def check_explorer_options(name: str, given: Iterable[str] | Mapping[str, str]) -> None:
    """Refuse the options an explorer would ignore.

    :param name: explorer name.
    :param given: the options given, as :func:`make_explorer` names them; or a mapping from those names to how
        they were spelled (the command line maps ``"pack"`` to ``"--merge-gap"``, say), used in the message.
    :raises ValueError: for an unknown explorer or option, or an option the explorer does not take; the message
        names the option(s) and the explorer.
    """
    labels = dict(given) if isinstance(given, Mapping) else {option: option for option in given}
    unknown = sorted(set(labels) - set(OPTION_KINDS))
    if unknown:
        raise ValueError(f"unknown explorer option(s) {unknown}; valid: {', '.join(OPTION_KINDS)}")
    refused = [labels[o] for o in OPTION_KINDS if o in labels and not takes_option(name, o)]
    if not refused:
        return
    text = ", ".join(refused)
    kind = explorer_kind(name)
    if kind == "reference":
        takes = "k and model" if takes_option(name, "model") else "k"
        raise ValueError(
            f"{name} is the reference baseline as specified (80/20 windows, raw top-K, no line budget); "
            f"it takes only {takes}, not {text}"
        )
    if kind == "learned":
        raise ValueError(
            f"{LEARNED} ranks with its trained model over function chunks (its features and candidates are fixed "
            f"by the model card); it does not take {text}: use the bm25 explorer for those"
        )
    learned_only = [labels[o] for o in ("ranker_model", "files_first", "shape") if o in labels]
    if learned_only:
        verb = "applies" if len(learned_only) == 1 else "apply"
        raise ValueError(f"{', '.join(learned_only)} {verb} to the {LEARNED} explorer only, not {name}")
    raise ValueError(f"{name} takes no embedding model ({text}); only {', '.join(EMBEDDING_RETRIEVERS)} do")


#: The region shape of the ``learned`` explorer unless ``shape`` says otherwise (``"plain"``: the packer).
DEFAULT_SHAPE = "evidence"


def default_shape(name: str) -> str:
    """An explorer's region shape by default (the one place it is chosen): :data:`DEFAULT_SHAPE` for ``learned``
    (chosen on dev by the paper's four main metrics and line recall, docs/benchmarks.md), ``"plain"`` (the
    line-budget packer) for every other explorer.

    :param name: explorer name.
    :return: ``"evidence"`` or ``"plain"``.
    """
    return DEFAULT_SHAPE if name == LEARNED else "plain"


def default_pack(name: str) -> PackConfig:
    """An explorer's packer defaults (the one place they are chosen): :data:`~swe_explore.explore.packing.LEARNED_PACK`
    for ``learned`` (the fusion explorer's ``ranker="learned"``), ``PackConfig()`` for every other explorer.

    :param name: explorer name (or a fusion explorer's ranker name).
    :return: the packer config.
    """
    return LEARNED_PACK if name == LEARNED else PackConfig()
