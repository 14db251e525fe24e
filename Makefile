# The two commands in the README: `make demo` (main job on bundled samples) and `make test`.
# Both do their own set-up on a fresh machine with only Python 3.11+, Node 20 and the registries.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch first and pinned: the open range in pyproject.toml would otherwise pull a multi-GB CUDA build.
TORCH_SPEC ?= torch==2.13.0

.PHONY: setup demo test check fmt test-python lint test-extension bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e ".[dev,integrations]"
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(BIN)/denpex demo

lint: setup
	$(BIN)/ruff check server tests bench
	$(BIN)/ruff format --check server tests bench
	$(BIN)/mypy

test-python: setup
	$(BIN)/pytest -q

node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund

# typecheck, lint, unit tests, .vsix, protocol tests against the real server, and the
# end-to-end run in code-server (whose set-up, cached under .cache/, the script installs).
test-extension: setup node_modules/.package-lock.json
	DENPEX_PYTHON=$(abspath $(BIN)/python) npm run ci

test: lint test-python test-extension

# The fast loop while editing: lint, types and the unit tests of both languages (no slow
# trainings, no language-server protocol runs, no code-server).
check: setup node_modules/.package-lock.json
	$(BIN)/ruff check server tests bench
	$(BIN)/ruff format --check server tests bench
	$(BIN)/mypy
	$(BIN)/pytest -q -m "not slow" --ignore=tests/lsp
	npm run typecheck
	npm run lint
	npm run test:unit

# Rewrite the sources in the house style (what `make lint` and `npm run lint` check).
fmt: setup node_modules/.package-lock.json
	$(BIN)/ruff format server tests bench
	npm run format

bench: setup
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) node_modules dist .cache
