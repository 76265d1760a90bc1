# Two commands on a fresh machine (Python 3.11, make and the package registries; make test also
# needs Node.js 20 or later with npm):
#   make demo   runs the main job
#   make test   installs everything it needs (PostgreSQL with apt-get when it is missing), then
#               runs every check CI runs
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
PIP := --quiet --disable-pip-version-check
# The suite runs on every core this process may use (pytest-xdist), each test file on one worker,
# so that a module's fixtures (servers, clusters, filled stores) are made once.
PARALLEL := -n $(shell nproc 2>/dev/null || echo auto) --dist loadfile

# The newer Pythons the suite also runs on (the dev Hypothesis profile, without the slow tests:
# packaging, durability, multi-process, which the 3.11 run has), each in its own venv
# .venv-<version>. Where one is missing the run is skipped with a message, except in CI. By
# default the newest installed here: with 3.11 under coverage, CI tests the oldest and the newest
# and stays within its time on a slow machine; `make pytest-newer NEWER="3.12 3.13"` adds the
# one between, `NEWER_MARKS=` keeps the slow tests.
NEWER := 3.13
NEWER_MARKS := -m 'not slow'
# pyenv's newest release of each (not a free-threaded "t" build), else the one on the PATH.
newest = $(shell ls -d $(HOME)/.pyenv/versions/$(1).*/bin/python 2>/dev/null | grep -v 't/bin/python$$' | sort -V | tail -n 1)
PYTHON_3.12 ?= $(or $(call newest,3.12),$(shell command -v python3.12),python3.12)
PYTHON_3.13 ?= $(or $(call newest,3.13),$(shell command -v python3.13),python3.13)

.PHONY: install postgres demo test generate lint typecheck pytest coverage pytest-newer nodetest bench bench-sqlite bench-lionagi bench-cli bench-mcp bench-postgres clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall whenever the pinned dependencies change. The main venv also has the benchmark
# stack, so that tools/bench is type-checked and smoke-tested against the real packages.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP) "pip==26.0"
	$(BIN)/python -m pip install $(PIP) --group dev --group bench -e .
	touch $(STAMP)

.venv-%/.installed: pyproject.toml
	$(PYTHON_$*) -m venv .venv-$*
	.venv-$*/bin/python -m pip install $(PIP) "pip==26.0"
	.venv-$*/bin/python -m pip install $(PIP) --group dev --group bench -e .
	touch $@

# npm ci installs exactly package-lock.json (the TypeScript generator, ajv, tsc); rerun it whenever
# the lock changes. It deletes node_modules/ first, so the stamp goes with it.
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

install: $(STAMP) $(NODE_STAMP)

# PostgreSQL's server binaries, which the tests' throwaway clusters need (tests/postgres_support.py
# finds them on the PATH or in /usr/lib/postgresql/*/bin): installed with apt-get when missing.
postgres:
	@if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		sudo=""; if [ "$$(id -u)" != 0 ]; then sudo="sudo"; fi; \
		if ! command -v apt-get >/dev/null 2>&1 || { [ -n "$$sudo" ] && ! command -v sudo >/dev/null 2>&1; }; then \
			echo "PostgreSQL's server binaries (initdb) are missing, and apt-get (as root, or with sudo) is not here to install them: install PostgreSQL 15 or later"; \
			exit 1; \
		fi; \
		$$sudo apt-get update -q && $$sudo apt-get install -y -q --no-install-recommends postgresql; \
	fi

demo: $(STAMP)
	$(BIN)/python tools/demo.py

generate: install
	$(BIN)/python tools/generate.py

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

# A quick local run: the dev Hypothesis profile (few examples), no coverage.
pytest: install
	$(BIN)/pytest $(PARALLEL)

# The full suite as CI runs it: every example count (ci profile, derandomised), branch coverage.
coverage: install
	rm -f .coverage .coverage.*
	HYPOTHESIS_PROFILE=ci $(BIN)/coverage run -m pytest $(PARALLEL)
	$(BIN)/coverage combine --quiet
	$(BIN)/coverage report

pytest-newer: $(NODE_STAMP)
	@for version in $(NEWER); do \
		case $$version in 3.12) python="$(PYTHON_3.12)";; 3.13) python="$(PYTHON_3.13)";; *) python="(no PYTHON_$$version in the Makefile)";; esac; \
		if [ ! -x "$$python" ]; then \
			echo "Python $$version not found at $$python: its test run is skipped."; \
			if [ -n "$$CI" ]; then echo "CI must run it: failing."; exit 1; fi; \
			continue; \
		fi; \
		echo "== pytest on Python $$version (dev profile)"; \
		$(MAKE) --no-print-directory .venv-$$version/.installed || exit 1; \
		HYPOTHESIS_PROFILE=dev .venv-$$version/bin/pytest -q $(NEWER_MARKS) $(PARALLEL) || exit 1; \
	done

# The InMemoryStore benchmark (lionmem, lionagi, LangGraph, the pure-Python floor; a few minutes on
# two cores): writes bench-results/results.json, results.md and chart.png. docs/perf/ holds the
# published run (python -m tools.bench --out docs/perf).
bench: $(STAMP)
	$(BIN)/python -m tools.bench --out bench-results

# SQLiteMemoryStore against LangGraph's SqliteStore and AsyncSqliteStore at 10k and 100k items,
# 1 against 8 concurrent writers, and its search latencies (a few minutes): prints Markdown tables.
bench-sqlite: $(STAMP)
	$(BIN)/python tools/bench_sqlite.py --sizes 10000 100000

# What LionagiMemoryStore adds per call over the InMemoryStore it wraps, with lionagi's own store
# for reference (under a minute): prints a Markdown table.
bench-lionagi: $(STAMP)
	$(BIN)/python tools/bench_lionagi.py

# `lionmem import` and `lionmem export` through the console script at 100,000 sample items into
# SQLite, beside the library's bulk calls, and the peak memory of an export of 1,000,000 items
# (a few minutes): prints Markdown tables.
bench-cli: $(STAMP)
	$(BIN)/python -m tools.bench_cli

# memory_search through `lionmem mcp` over stdio against store.search in process, at 100,000
# items in SQLite (about a minute): prints the Markdown table of docs/mcp.md's speed section.
bench-mcp: $(STAMP)
	$(BIN)/python tools/bench_mcp.py --items 100000 --rounds 200

# PostgresMemoryStore against LangGraph's AsyncPostgresStore at 100,000 items on a throwaway durable
# PostgreSQL cluster (a few minutes): prints the Markdown tables of docs/postgres.md's performance
# section. LARGE=1000000 also times lionmem's searches at a million items (about 3 more minutes).
LARGE ?= 0
bench-postgres: $(STAMP)
	$(BIN)/python tools/bench_postgres.py --size 100000 --large $(LARGE) --json bench-results/postgres.json

# The Node tests (ajv, tsc, documents crossing between Python and JavaScript) run the venv's Python.
nodetest: install
	LIONMEM_PYTHON=$(BIN)/python npm test

test: install postgres
	$(BIN)/python tools/generate.py --check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(MAKE) --no-print-directory coverage
	$(MAKE) --no-print-directory pytest-newer
	LIONMEM_PYTHON=$(BIN)/python npm test

clean:
	rm -rf $(VENV) .venv-3.* node_modules .mypy_cache .ruff_cache .pytest_cache .hypothesis .coverage dist build
