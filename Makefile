# Two commands on a fresh machine (Python 3.11, make and the package registries):
#   make demo   runs the main job
#   make test   installs everything it needs, then runs every check CI runs
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed

.PHONY: install demo test generate lint typecheck pytest nodetest bench bench-sqlite clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall whenever the pinned dependencies change.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "pip==26.0"
	$(BIN)/python -m pip install --quiet --group dev -e .
	touch $(STAMP)

# npm ci installs exactly package-lock.json (the TypeScript generator, ajv, tsc); rerun it whenever
# the lock changes. It deletes node_modules/ first, so the stamp goes with it.
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

install: $(STAMP) $(NODE_STAMP)

demo: $(STAMP)
	$(BIN)/python -m lionmem demo

generate: install
	$(BIN)/python tools/generate.py

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

pytest: install
	$(BIN)/pytest

# The InMemoryStore benchmark (lionmem, lionagi, LangGraph, the pure-Python floor; a few minutes on
# two cores): writes bench-results/results.json, results.md and chart.png. docs/perf/ holds the
# published run (python -m tools.bench --out docs/perf).
bench: $(STAMP)
	$(BIN)/python -m tools.bench --out bench-results

# SQLiteMemoryStore against LangGraph's SqliteStore at 10k and 100k items, and its search
# latencies (a few minutes): prints the Markdown tables of docs/performance.md.
bench-sqlite: $(STAMP)
	$(BIN)/python tools/bench_sqlite.py --sizes 10000 100000

# The Node tests (ajv, tsc, documents crossing between Python and JavaScript) run the venv's Python.
nodetest: install
	LIONMEM_PYTHON=$(BIN)/python npm test

test: install
	$(BIN)/python tools/generate.py --check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest
	LIONMEM_PYTHON=$(BIN)/python npm test

clean:
	rm -rf $(VENV) node_modules .mypy_cache .ruff_cache .pytest_cache .hypothesis dist build
