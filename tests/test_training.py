"""explore/training.py's command-facing parts: the held-out share, the forbidden repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_explore import MINI_BENCH
from swe_explore.explore.training import VARIANTS, forbidden_repos, is_valid_repo


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
    """Five variants; the lexical one learns the lexical and structure features from retriever candidates only."""
    assert VARIANTS["ranker-lexical"] == {"groups": ["lexical", "structure"], "mentions": False, "graph": False}
    assert sorted(VARIANTS) == [
        "ranker-full",
        "ranker-graph",
        "ranker-lexical",
        "ranker-mentions",
        "ranker-mentions-graph",
    ]
