# Developer commands (see CONTRIBUTING.md). PYTHON is the environment the project is installed in:
# `make test PYTHON=.venv/bin/python` uses a virtualenv without activating it.
PYTHON ?= python
PYDOCLINT ?= pydoclint
# pydoclint reads its settings from pyproject.toml ([tool.pydoclint]).
DOC_PATHS = chunking retrievers indexes explore evaluation benchprep swe_explore scripts tests

.PHONY: install test lint typecheck bench ci

install:  ## the package (editable) and the test tools
	$(PYTHON) -m pip install -e ".[test]"

test:  ## the README's test command
	$(PYTHON) -m pytest -q

lint:  ## ruff (lint and format check) and pydoclint
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .
	$(PYDOCLINT) --quiet $(DOC_PATHS)

# As CI: mypy reads a non-editable install in a temporary folder (the package-dir mapping is invisible to it in
# the source layout); first the package, then scripts/ and tests/ against the same tree.
typecheck:  ## mypy on the installed package, then on scripts/ and tests/
	@t="$$(mktemp -d)"; trap 'rm -rf "$$t"' EXIT; \
	$(PYTHON) -m pip install --quiet --no-deps --target "$$t" . && \
	echo "mypy (package)" && MYPYPATH="$$t" $(PYTHON) -m mypy && \
	echo "mypy scripts tests" && MYPYPATH="$$t" $(PYTHON) -m mypy scripts tests

bench:  ## retriever build/query benchmark; options via ARGS="..." (e.g. ARGS=--help)
	$(PYTHON) scripts/benchmark.py $(ARGS)

ci:  ## the whole CI job (fresh .venv-ci, a few minutes)
	bash .ci/run
