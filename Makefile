# Two commands on a fresh machine (Python 3.11, make and the package registries):
#   make demo   runs the main job
#   make test   installs everything it needs, then runs every check CI runs
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test generate lint typecheck pytest clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall whenever the pinned dependencies change.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "pip==26.0"
	$(BIN)/python -m pip install --quiet --group dev -e .
	touch $(STAMP)

install: $(STAMP)

demo: install
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

test: install
	$(BIN)/python tools/generate.py --check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis dist build
