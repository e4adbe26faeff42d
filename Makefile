# Two commands on a fresh machine: `make serve` and `make test`. Both (re)build .venv themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test lint typecheck bench demo clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/synthgpt serve $(ARGS)

demo: $(STAMP)
	$(BIN)/python examples/quickstart.py

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n 2 $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/run.py $(ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
