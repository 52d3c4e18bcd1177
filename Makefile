# Two commands do all the set-up: `make book` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
OFFLINE := _offline
OFFLINE_STAMP := $(OFFLINE)/.stamp
CHAPTERS := $(sort $(wildcard chapters/*.ipynb))
LINTED := conftest.py code tests benchmarks chapters
# Pinned browser assets so that math and widget snapshots render with no CDN.
NPM_ASSETS := mathjax@3.2.2 @jupyter-widgets/html-manager@1.0.14 requirejs@2.3.7

# Nothing outside the checkout changes an output: every target, and every Jupyter kernel
# it starts, keeps its caches and per-user configuration in the git-ignored .cache/
# (conftest.py sets the same for a plain `pytest`). pip keeps the user's own cache.
CACHE := $(CURDIR)/.cache
PIP_ENV := $(if $(XDG_CACHE_HOME),XDG_CACHE_HOME=$(XDG_CACHE_HOME),env -u XDG_CACHE_HOME)
export MPLCONFIGDIR := $(CACHE)/matplotlib
export NUMBA_CACHE_DIR := $(CACHE)/numba
export XDG_CACHE_HOME := $(CACHE)
export IPYTHONDIR := $(CACHE)/ipython
export JUPYTER_CONFIG_DIR := $(CACHE)/jupyter/config
export JUPYTER_DATA_DIR := $(CACHE)/jupyter/data
export JUPYTER_RUNTIME_DIR := $(CACHE)/jupyter/runtime
export PYTHONHASHSEED := 0
# A user's MPLBACKEND would stop the kernels from using the inline backend.
unexport MPLBACKEND

.PHONY: help install book test lint format lab execute bench fuzz clean

help:
	@echo "make book     build the HTML book into _build/html"
	@echo "make test     run the whole suite (lint, unit/property tests, doctests, nbval, portability, build)"
	@echo "make lab      open the notebooks in JupyterLab with working widgets"
	@echo "make execute  re-execute every chapter notebook in place"
	@echo "make bench    run the benchmarks under benchmarks/"
	@echo "make fuzz     the unit and property tests with fresh random examples, many more of them"

install: $(STAMP)

$(STAMP): requirements.txt code/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP_ENV) $(BIN)/python -m pip install --quiet --upgrade pip
	$(PIP_ENV) $(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

$(OFFLINE_STAMP): Makefile
	rm -rf $(OFFLINE) .npm-offline && mkdir -p .npm-offline $(OFFLINE)
	cd .npm-offline && npm install --silent --no-audit --no-fund --no-package-lock $(NPM_ASSETS)
	cp -r .npm-offline/node_modules/mathjax/es5 $(OFFLINE)/mathjax
	mkdir -p $(OFFLINE)/html-manager
	cd .npm-offline/node_modules/@jupyter-widgets/html-manager/dist && cp embed-amd.js *.woff *.woff2 *.ttf *.eot *.svg $(CURDIR)/$(OFFLINE)/html-manager/
	cp .npm-offline/node_modules/requirejs/require.js $(OFFLINE)/require.min.js
	rm -rf .npm-offline
	touch $@

book: $(STAMP) $(OFFLINE_STAMP)
	$(BIN)/jupyter-book build . --warningiserror --nitpick --keep-going
	@echo "Open the book: file://$(CURDIR)/_build/html/index.html"

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

format: $(STAMP)
	$(BIN)/ruff check --fix $(LINTED)
	$(BIN)/ruff format $(LINTED)

test: $(STAMP) $(OFFLINE_STAMP)
	@echo "== lint"
	$(MAKE) --no-print-directory lint
	@echo "== pytest: unit, property and doctests, nbval on every chapter"
	$(BIN)/python -m pytest
	@echo "== portability: nbval and doctests again as on an older CPU with another BLAS core"
	$(BIN)/python tests/portability.py
	@echo "== book build (warnings are errors)"
	$(MAKE) --no-print-directory book

lab: $(STAMP)
	$(BIN)/jupyter lab chapters/

execute: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.record_timing=False --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.startup_timeout=120 $(CHAPTERS)

bench: $(STAMP)
	@for script in benchmarks/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest tests

clean:
	rm -rf _build $(OFFLINE) .pytest_cache .hypothesis .cache
