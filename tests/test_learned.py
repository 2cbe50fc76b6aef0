"""The learned-ranker pipeline: candidate features, labels, training, the shipped model, the fusion explorer."""

from __future__ import annotations

import json
import runpy
import shutil
from pathlib import Path

import numpy as np
import pytest

from swe_explore.chunking.types import Chunk
from swe_explore.evaluation.bench import load_bench
from swe_explore.explore.features import (
    FEATURE_GROUPS,
    FROM_GRAPH,
    FROM_MENTIONS,
    FROM_RETRIEVERS,
    CandidateConfig,
    candidate_features,
    feature_names,
)
from swe_explore.explore.fusion import FusionExplorer
from swe_explore.explore.packing import files_first, gate_files
from swe_explore.explore.ranker import (
    DEFAULT_RANKER_MODEL,
    ModelError,
    candidate_overlap,
    load_ensemble,
    load_ranker,
    relevance,
)
from swe_explore.explore.training import ALL_FEATURES, check_training_repos, extract_group, resolved_core

ROOT = Path(__file__).resolve().parent.parent
MINI_BENCH = ROOT / "swe_explore" / "data" / "mini" / "mini.jsonl"
MINI_REPOS = ROOT / "swe_explore" / "data" / "mini" / "repos"


def _c(path: str, start: int, end: int) -> Chunk:
    return Chunk(path, start, end, "function", "f", "python")


def test_labels_from_overlap_by_scheme() -> None:
    """``lines``: 2 for a chunk half core (or holding half its file's core), 1 for a touch, 0 else; ``file``: one
    more for overlapping chunks and 1 for the other chunks of a core file."""
    chunks = [_c("a.py", 1, 10), _c("a.py", 11, 30), _c("a.py", 40, 41), _c("b.py", 1, 5)]
    core = {"a.py": [(9, 12)]}  # 4 core lines: 2 in the first chunk, 2 in the second
    overlap, lines, file_core = candidate_overlap(chunks, core)
    assert overlap.tolist() == [2, 2, 0, 0] and lines.tolist() == [10, 20, 2, 5]
    assert file_core.tolist() == [4, 4, 4, 0]
    assert relevance(overlap, lines, file_core, "lines").tolist() == [2, 2, 0, 0]  # 2 of 4 core lines each
    assert relevance(overlap, lines, file_core, "file").tolist() == [3, 3, 1, 0]
    big = candidate_overlap([_c("a.py", 1, 100)], {"a.py": [(1, 10), (50, 70)]})
    assert relevance(*big, "lines").tolist() == [2]  # 31 of 31 core lines of the file
    with pytest.raises(ValueError, match="unknown label scheme"):
        relevance(overlap, lines, file_core, "nope")


def test_resolved_core_uses_the_metric_sentinels() -> None:
    """``end: -1`` is the end of the file, overlapping regions merge, unresolvable ones drop."""
    record = load_bench(MINI_BENCH)[0]
    raw = dict(record.raw)
    raw["ground_truth"] = dict(
        raw["ground_truth"],
        read_core_regions=[
            {"path": "x.py", "start": 3, "end": -1},
            {"path": "x.py", "start": 1, "end": 4},
            {"path": "gone.py", "start": 1, "end": -1},
        ],
    )
    from swe_explore.evaluation.bench import parse_record

    assert resolved_core(parse_record(raw), {"x.py": 9}) == {"x.py": [(1, 9)]}


def test_files_first_and_gate_files() -> None:
    """files_first moves each file's best chunk to the front (first N files); gate_files keeps strong files."""
    ranked = [_c("a.py", 1, 2), _c("a.py", 5, 6), _c("b.py", 1, 2), _c("c.py", 1, 2), _c("b.py", 9, 9)]
    assert [(c.path, c.start) for c in files_first(ranked, 2)] == [
        ("a.py", 1),
        ("b.py", 1),
        ("a.py", 5),
        ("c.py", 1),
        ("b.py", 9),
    ]
    assert files_first(ranked, 0) == ranked
    assert [c.path for c in files_first(ranked, 5, window=2)][:2] == ["a.py", "a.py"]
    scores = [5.0, 4.0, 3.5, 1.0, 0.5]
    assert [c.path for c in gate_files(ranked, scores, margin=2.0)] == ["a.py", "a.py", "b.py", "b.py"]
    assert [c.path for c in gate_files(ranked, scores, margin=0.0, min_files=2)] == ["a.py", "a.py", "b.py", "b.py"]
    assert gate_files([], [], 1.0) == []


def test_feature_groups_and_candidates_on_a_mini_snapshot(tmp_path: Path) -> None:
    """Every requested feature is a column; mentions and the graph add candidates and say so in ``sources``."""
    record = load_bench(MINI_BENCH)[0]
    explorer = FusionExplorer(
        ranker="priors", candidates=CandidateConfig(), retrievers=("bm25", "tfidf"), graph=True, store=tmp_path
    )
    index = explorer.load(MINI_REPOS / record.instance_id, record.instance_id)
    names = [n for n in ALL_FEATURES if not n.startswith("potion_")]
    cands = candidate_features(record.query, index, CandidateConfig(), names)
    assert cands.features.shape == (cands.ids.size, len(names)) and cands.ids.size > 0
    assert len(set(cands.ids.tolist())) == cands.ids.size
    assert np.all(cands.sources & (FROM_RETRIEVERS | FROM_MENTIONS | FROM_GRAPH))
    col = {n: j for j, n in enumerate(names)}
    assert np.nanmax(cands.features[:, col["bm25_rel"]]) == pytest.approx(1.0)
    assert set(np.unique(cands.features[:, col["kind_function"]])) <= {0.0, 1.0}
    assert feature_names(["lexical", "structure"]) == FEATURE_GROUPS["lexical"] + FEATURE_GROUPS["structure"]
    with pytest.raises(ValueError, match="potion"):
        candidate_features(record.query, index, CandidateConfig(), ["potion_score"])
    empty = candidate_features("   ", index, CandidateConfig(), names)
    assert empty.ids.size == 0 and empty.features.shape == (0, len(names))
    group = extract_group(record, index, CandidateConfig())
    assert group.features.shape == (group.ids.size, len(ALL_FEATURES))
    assert group.labels("file").max() >= 2  # the buggy function of the mini instance is a candidate


def test_training_refuses_release_and_eval_repositories() -> None:
    """A training record of a forbidden repository stops training, naming it and why."""
    records = load_bench(MINI_BENCH)
    check_training_repos(records, {"psf/requests": "release"})
    forbidden = {records[0].repo.lower(): "listed in release-repos.txt"}
    with pytest.raises(ValueError, match=rf"{records[0].repo.lower()} \(listed in release-repos.txt\)"):
        check_training_repos(records, forbidden)


def test_shipped_model_loads_offline_and_ranks_deterministically(tmp_path: Path) -> None:
    """The default model and its card load without network; two explorers give the same regions."""
    ensemble = load_ensemble(DEFAULT_RANKER_MODEL)
    assert len(ensemble.models) == 2
    release = ROOT.parent / "shared" / "data" / "release-repos.txt"
    for model in ensemble.models:
        assert model.features and model.booster.num_feature() == len(model.features)
        assert set(model.features) <= set(ensemble.features)
        if release.is_file():
            listed = {line.split()[0] for line in release.read_text().splitlines() if line and line[0] != "#"}
            assert not {r.lower() for r in model.card["manifest"]["repositories"]} & listed
        roles = {
            line.split("\t")[0]: line.split("\t")[2]
            for line in (ROOT / "docs" / "mined-repos.tsv").read_text().splitlines()
            if line and not line.startswith("#")
        }
        trained = model.card["manifest"]["repositories"]
        assert trained and all(roles.get(repo) == "train" for repo in trained)  # never an eval bench's repository
        assert model.card["manifest"]["records"] == sum(len(commits) for commits in trained.values())
    matrix = np.random.default_rng(0).normal(size=(7, len(ensemble.features))).astype(np.float32)
    cols = {f: j for j, f in enumerate(ensemble.features)}
    expected = np.mean([m.score(matrix[:, [cols[f] for f in m.features]]) for m in ensemble.models], axis=0)
    assert np.allclose(ensemble.score(matrix), expected)
    record = load_bench(MINI_BENCH)[1]
    runs = []
    for i in range(2):
        explorer = FusionExplorer(store=tmp_path / f"s{i}")
        runs.append(explorer.explore(MINI_REPOS / record.instance_id, record.query, record.instance_id))
    assert runs[0] == runs[1] and runs[0]
    assert sum(r.n_lines for r in runs[0]) <= 500 and len(runs[0]) <= 5


def test_model_files_are_checked(tmp_path: Path) -> None:
    """A missing file, an edited model text or a card without features is an error naming the file."""
    from swe_explore.explore.ranker import model_paths

    txt, card = model_paths(DEFAULT_RANKER_MODEL.split(",")[0])
    shutil.copy(txt, tmp_path / "m.txt")
    shutil.copy(card, tmp_path / "m.json")
    assert load_ranker(tmp_path / "m").features == load_ranker(DEFAULT_RANKER_MODEL.split(",")[0]).features
    (tmp_path / "m.txt").write_text((tmp_path / "m.txt").read_text() + "\n")
    with pytest.raises(ModelError, match="m.txt: SHA-256 differs"):
        load_ranker(tmp_path / "m")
    (tmp_path / "m.txt").unlink()
    with pytest.raises(ModelError, match="m.txt: ranker model file is missing"):
        load_ranker(tmp_path / "m")


def test_train_command_builds_a_model_from_labelled_records(tmp_path: Path) -> None:
    """The training command extracts features (cached), trains a LambdaRank model and writes model + card
    with the manifest of repositories and commits; a second run reuses the cache and gives the same model."""
    main = runpy.run_path(str(ROOT / "scripts" / "train_ranker.py"))["main"]
    bench = tmp_path / "train.jsonl"
    rows = [json.loads(line) for line in MINI_BENCH.read_text().splitlines()]
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows * 1))
    argv = [
        "--bench",
        str(bench),
        "--repos",
        str(MINI_REPOS),
        "--store",
        str(tmp_path / "store"),
        "--cache",
        str(tmp_path / "cache"),
        "--exclude-repos",
        str(tmp_path / "none.txt"),
        "--model-dir",
        str(tmp_path / "models"),
        "--variant",
        "ranker-lexical",
        "--rounds",
        "5",
        "--quiet",
        "--params",
        "min_data_in_leaf=1",
    ]
    (tmp_path / "none.txt").write_text("# nothing\n")
    assert main(argv) == 0
    card = json.loads((tmp_path / "models" / "ranker-lexical.json").read_text())
    assert card["manifest"]["records"] == 4
    assert set(card["manifest"]["repositories"]) == {r["repo"] for r in rows}
    first = (tmp_path / "models" / "ranker-lexical.txt").read_text()
    assert main(argv) == 0
    assert (tmp_path / "models" / "ranker-lexical.txt").read_text() == first
    (tmp_path / "release.txt").write_text(f"{rows[0]['repo']}\t1\n")
    with pytest.raises(SystemExit):
        main([*argv[:8], "--exclude-repos", str(tmp_path / "release.txt"), *argv[10:]])


def test_learned_refuses_options_it_does_not_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--top-n, priors and retriever options do not apply to the learned explorer: a clear error, not ignored."""
    main = runpy.run_path(str(ROOT / "scripts" / "run_baselines.py"))["main"]
    for extra in (["--top-n", "50"], ["--no-priors"], ["-O", "k1=1.2"]):
        with pytest.raises(SystemExit) as exc:
            main(["--store", str(tmp_path / "s"), "--out", str(tmp_path / "o.jsonl"), *extra])
        assert exc.value.code == 2
        assert "learned ranks with its trained model" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--retriever", "bm25", "--files-first", "2", "--store", str(tmp_path / "s")])
    assert "--files-first applies to the learned explorer only, not bm25" in capsys.readouterr().err


def test_packer_defaults_depend_on_the_ranker(tmp_path: Path) -> None:
    """The learned explorer packs with LEARNED_PACK (250-line regions, merge gap 10); BM25 with priors, the
    ``priors`` ranker and the reference keep PackConfig's (200, 20); a flag given on the command line wins."""
    import argparse

    from swe_explore.commands.explorer_args import add_explorer_arguments, explorer_from_args
    from swe_explore.explore.packing import LEARNED_PACK, PackConfig

    assert (LEARNED_PACK.max_region_lines, LEARNED_PACK.merge_gap, LEARNED_PACK.max_regions_per_file) == (250, 10, 2)
    assert (PackConfig().max_region_lines, PackConfig().merge_gap) == (200, 20)
    assert FusionExplorer(store=tmp_path)._pack == LEARNED_PACK
    assert FusionExplorer(ranker="priors", store=tmp_path)._pack == PackConfig()

    parser = argparse.ArgumentParser()
    add_explorer_arguments(parser)

    def built(*argv: str) -> PackConfig:
        explorer = explorer_from_args(parser.parse_args(["--store", str(tmp_path), *argv]))
        return explorer._pack if isinstance(explorer, FusionExplorer) else explorer.pack  # type: ignore[union-attr]

    assert built() == LEARNED_PACK
    assert built("--shape", "plain", "--merge-gap", "20") == PackConfig(max_region_lines=250, merge_gap=20)
    assert built("--shape", "plain", "--k", "3", "--max-region-lines", "100") == PackConfig(
        k=3, max_region_lines=100, merge_gap=10
    )
    with pytest.raises(ValueError, match="--merge-gap need --shape plain"):
        built("--merge-gap", "20")  # the default evidence shape would ignore it
    assert built("--retriever", "bm25") == PackConfig()
    assert built("--retriever", "bm25", "--merge-gap", "5") == PackConfig(merge_gap=5)
    with pytest.raises(ValueError, match="--merge-gap"):
        built("--retriever", "reference_bm25", "--merge-gap", "20")
