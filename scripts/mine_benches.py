"""Mine the labelled benches of every repository listed in ``docs/mined-repos.tsv``, one command for all.

Usage::

    python scripts/mine_benches.py --mirrors MIRRORS_DIR --out DIR [--list docs/mined-repos.tsv]
        [--role eval|train] [--seed 0] [--jobs 2] [--tests reject|read] [--pull-requests]

For each listed ``repo`` (mirror ``MIRRORS_DIR/<owner>+<name>/repo``) it runs ``scripts/mine_history.py
--max <max> --seed <seed>`` into ``DIR/<role>/<owner>__<name>.jsonl`` (skipped when that file exists, so a
rerun resumes; ``--tests`` and ``--pull-requests`` are passed on), then writes ``DIR/<role>.jsonl``: every
record of that role, in list order. Missing mirrors are listed and the exit status is 1. Mined records are
third-party text: keep ``DIR`` out of git.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from swe_explore.commands._errors import interrupt_quietly, run_main

with interrupt_quietly():  # Ctrl-C while the modules import: exit 130 quietly
    from swe_explore.benchprep.mine_rules import TEST_MODES
    from swe_explore.commands import mine as mine_command

ROOT = Path(__file__).resolve().parent.parent


def read_list(path: Path) -> list[tuple[str, str, str, int]]:
    """The ``(repo, language, role, max)`` rows of a repository list (``#`` comments and blank lines skipped).

    :param path: the TSV file.
    :return: the rows in file order.
    :raises ValueError: naming the line of a malformed row.
    """
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 4 or parts[2] not in ("eval", "train") or not parts[3].isdigit():
            raise ValueError(f"{path}:{number}: expected 'owner/name<TAB>language<TAB>eval|train<TAB>max'")
        rows.append((parts[0], parts[1], parts[2], int(parts[3])))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 some repository failed, 2 bad input)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of <owner>+<name>/repo bare mirrors")
    parser.add_argument("--out", type=Path, required=True, help="output folder (keep it out of git)")
    parser.add_argument("--list", type=Path, default=ROOT / "docs" / "mined-repos.tsv")
    parser.add_argument("--role", choices=["eval", "train"], default=None, help="only this role (default: both)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every repository's sample (default: 0)")
    parser.add_argument("--jobs", type=int, default=2, help="repositories mined at once (default: 2)")
    parser.add_argument("--tests", choices=TEST_MODES, default="reject", help="passed to mine_history.py")
    parser.add_argument("--pull-requests", action="store_true", help="passed to mine_history.py")
    args = parser.parse_args(argv)
    try:
        rows = [r for r in read_list(args.list) if args.role in (None, r[2])]
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    failed: list[str] = []

    def one(row: tuple[str, str, str, int]) -> None:
        repo, _, role, limit = row
        mirror = args.mirrors / repo.replace("/", "+") / "repo"
        out = args.out / role / f"{repo.replace('/', '__')}.jsonl"
        if out.exists():
            return
        if not mirror.is_dir():
            failed.append(f"{repo}: no mirror at {mirror}")
            return
        out.parent.mkdir(parents=True, exist_ok=True)
        argv = [
            "--mirror",
            str(mirror),
            "--out",
            str(out),
            "--repo",
            repo,
            "--max",
            str(limit),
            "--seed",
            str(args.seed),
            "--tests",
            args.tests,
            *(["--pull-requests"] if args.pull_requests else []),
            "--quiet",
        ]
        try:
            mine_command.main(argv)
        except SystemExit as exc:
            failed.append(f"{repo}: mine_history exited with {exc.code}")

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, rows))
    for role in sorted({r[2] for r in rows}):
        parts = [args.out / role / f"{r[0].replace('/', '__')}.jsonl" for r in rows if r[2] == role]
        text = "".join(p.read_text(encoding="utf-8") for p in parts if p.exists())
        (args.out / f"{role}.jsonl").write_text(text, encoding="utf-8")
        print(
            f"{role}: {text.count(chr(10))} records from {sum(p.exists() for p in parts)} repositories -> "
            f"{args.out / f'{role}.jsonl'}"
        )
    for message in failed:
        print(f"error: {message}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run_main(main))
