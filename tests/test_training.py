"""explore/training.py's command-facing parts: the held-out share, the forbidden repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_explore import MINI_BENCH
from swe_explore.explore.training import ABLATION_VARIANTS, HISTORY_VARIANTS, VARIANTS, forbidden_repos, is_valid_repo


def test_is_valid_repo_holds_out_by_the_hash_of_the_lower_case_name() -> None:
    """sha256("a/c")[:8] = 24586ae9 -> 0.142 < 0.15: held out; "a/g" 3f7cf53e -> 0.248 and "a/b" c14cddc0 ->
    0.755 are trained on; the name's case does not matter."""
    assert is_valid_repo("a/c") and is_valid_repo("A/C")
    assert not is_valid_repo("a/g") and not is_valid_repo("a/b")


def test_forbidden_repos_names_why(tmp_path: Path) -> None:
    """A listed repository says which list; a repository of an evaluation bench says which bench (it wins)."""
    listed = tmp_path / "release.txt"
    listed.write_text("# the release\nOwner/Repo\t3\nexample/pyshop\n")
    repos = {json.loads(line)["repo"] for line in MINI_BENCH.read_text().splitlines()}
    forbidden = forbidden_repos([listed], [MINI_BENCH])
    assert forbidden == {"owner/repo": "listed in release.txt"} | dict.fromkeys(repos, "in eval bench mini.jsonl")
    with pytest.raises(FileNotFoundError):
        forbidden_repos([], [tmp_path / "missing.jsonl"])


def test_variants_name_feature_groups() -> None:
    """Seven main variants; the lexical one learns the lexical and structure features from retriever candidates
    only; the two history ones (the shipped default) are the mentions ones plus the history group; their ablations
    add the history ranking's five top files as candidates (``-candidates``) and leave one kind out of that
    (``-no-KIND``)."""
    assert VARIANTS["ranker-lexical"] == {"groups": ["lexical", "structure"], "mentions": False, "graph": False}
    main = [v for v in VARIANTS if v not in ABLATION_VARIANTS]
    assert sorted(main) == [
        "ranker-full",
        "ranker-graph",
        "ranker-lexical",
        "ranker-mentions",
        "ranker-mentions-graph",
        "ranker-mentions-graph-history",
        "ranker-mentions-history",
    ]
    for name in ("ranker-mentions", "ranker-mentions-graph"):
        history = VARIANTS[f"{name}-history"]
        assert history == {**VARIANTS[name], "groups": [*VARIANTS[name]["groups"], "history"]}
        assert VARIANTS[f"{name}-history-candidates"] == {**history, "history": 5}
        assert VARIANTS[f"{name}-history-no-fix"] == {
            **history,
            "history": 5,
            "drop": ["history_fix_count", "history_fix_recency"],
        }
    assert len(VARIANTS) == 7 + 2 * 5 and len(ABLATION_VARIANTS) == 10
    assert tuple(v for v in VARIANTS if "history" in v) == HISTORY_VARIANTS


def test_test_candidates_train_only_where_a_test_file_is_gold() -> None:
    """Rows 0-1 are code, 2-3 tests; row 1 was found by the graph only. A record mined by default labels no test
    (its tests are unlabelled, left out); one mined with ``--tests read`` whose test file is core keeps them."""
    import numpy as np

    from swe_explore.explore.features import FROM_GRAPH, FROM_RETRIEVERS, CandidateConfig
    from swe_explore.explore.training import ALL_FEATURES, Group

    features = np.zeros((4, len(ALL_FEATURES)), dtype=np.float32)
    features[2:, ALL_FEATURES.index("is_test")] = 1

    def group(file_core: list[int]) -> Group:
        n = np.zeros(4, dtype=np.int32)
        return Group(
            "r-1", "o/r", "abc", features, np.arange(4), n, n + 5, np.array(file_core, dtype=np.int32),
            np.array([FROM_RETRIEVERS, FROM_GRAPH, FROM_RETRIEVERS, FROM_RETRIEVERS], dtype=np.uint8), 1,
        )  # fmt: skip

    with_graph, without_graph = CandidateConfig(graph=True), CandidateConfig(graph=False)
    assert group([3, 3, 0, 0]).training_rows(with_graph).tolist() == [True, True, False, False]
    assert group([3, 3, 0, 0]).training_rows(without_graph).tolist() == [True, False, False, False]
    assert group([3, 3, 2, 0]).training_rows(with_graph).tolist() == [True, True, True, True]
