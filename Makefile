# Two commands on a fresh machine: `make serve` and `make test`. Both (re)build .venv themselves:
# `make serve` installs only what serving needs, `make test` adds the dev extra (SDKs, pytest, ruff, mypy).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SERVE_STAMP := $(VENV)/.installed-serve
DEV_STAMP := $(VENV)/.installed-dev
PIP := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: serve test lint typecheck bench demo clean system-deps native

# A .venv whose Python cannot run (made by another Python, or one since removed) stays broken until
# deleted: check it on every run and start it again, saying so.
VENV_OK := $(shell [ ! -e $(VENV) ] || $(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
                   >/dev/null 2>&1 && echo yes)
ifneq ($(VENV_OK),yes)
$(info .venv was made by a Python that cannot run synthgpt (3.11+ needed): rebuilding it)
$(shell rm -rf $(VENV))
endif

$(BIN)/python:
	@$(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || \
		{ echo "synthgpt needs Python 3.11 or newer; $(PY) is $$($(PY) --version 2>&1). Try: make PY=python3.12 …"; exit 1; }
	@echo "==> creating .venv with $$($(PY) --version)"
	$(PY) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(SERVE_STAMP): pyproject.toml | $(BIN)/python
	@echo "==> installing synthgpt and what serving needs into .venv (the first time takes a minute)"
	$(PIP) install --progress-bar on -e '.[native]'
	touch $(SERVE_STAMP)

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	@echo "==> installing synthgpt with the dev extra (SDKs, pytest, ruff, mypy) into .venv"
	$(PIP) install --progress-bar on -e '.[dev]'
	touch $(SERVE_STAMP) $(DEV_STAMP)

# The hot path's modules compiled by mypyc (synthgpt/native.py): built again when any synthgpt source has
# changed since, else a no-op. An edit runs as pure Python until then, whole; answers are the same bytes.
# Serving works without them (pure Python, ~10 % slower): `serve` goes on when no C compiler can build them.
NATIVE := $(BIN)/synthgpt compile --if-stale

native: $(DEV_STAMP)
	$(NATIVE)

serve: $(SERVE_STAMP)
	@$(NATIVE) || echo "==> synthgpt compile failed (is a C compiler installed?): serving pure Python"
	$(BIN)/synthgpt serve $(ARGS)

demo: $(SERVE_STAMP)
	$(BIN)/python examples/quickstart.py

lint: $(DEV_STAMP)
	$(BIN)/ruff check .

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

# Programs the tests start on loopback ports (Debian packages, installed when missing and possible):
# Chromium for the playground's browser tests, redis-server and nginx for the scale-out tests, node and
# npm for the Vercel AI SDK test. Where they cannot be installed, those tests skip and say why.
TEST_PROGRAMS := chromium:chromium redis-server:redis-server nginx:nginx node:nodejs npm:npm

system-deps:
	@sh scripts/system-deps $(TEST_PROGRAMS)

# The tests that bound how long other connections wait (`timing`) run after the rest, alone: two pytest
# workers and their servers on two cores starve any one process for a hundred ms at times, whatever it
# does. Exit code 5 is "no test selected" (PYTEST_ARGS may select none of them).
# The suite runs the compiled modules (`native`); the tests of what they hold run again in pure Python,
# which wheels and the image run (~35 s).
PURE_TESTS := tests/engine tests/generators tests/codec tests/journal

test: system-deps lint typecheck native
	$(BIN)/python -m pytest -q -n 2 -m "not timing" $(PYTEST_ARGS)
	SYNTHGPT_PURE_PYTHON=1 $(BIN)/python -m pytest -q -n 2 -m "not timing" $(PURE_TESTS) $(PYTEST_ARGS) || [ $$? -eq 5 ]
	$(BIN)/python -m pytest -q -m timing $(PYTEST_ARGS) || [ $$? -eq 5 ]

bench: native
	@sh scripts/system-deps wrk:wrk  # the load generator (the bench falls back to a Python one without it)
	$(BIN)/python bench/run.py $(ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info
	find synthgpt -name '*.so' -delete
