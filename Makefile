# Two commands do all the set-up: `make book` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
OFFLINE := _offline
OFFLINE_STAMP := $(OFFLINE)/.stamp
CHAPTERS := $(sort $(wildcard chapters/*.ipynb))
LINTED := conftest.py code tests benchmarks chapters extensions
# Pinned MathJax, so that the maths renders with no CDN.
NPM_ASSETS := mathjax@3.2.2
# The book's icon (_config.yml: html.favicon), so that browsers ask no static server for
# a missing /favicon.ico.
FAVICON := $(OFFLINE)/favicon.svg
# Headless Chromium for the browser tests: Debian's package, driven by Playwright (pip);
# Playwright never downloads a browser here. CHROMIUM=/path selects another build.
CHROMIUM ?= /usr/bin/chromium

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

.PHONY: help install book test browser-test lint format lab execute bench fuzz clean

help:
	@echo "make book     build the HTML book into _build/html"
	@echo "make test     run the whole suite (lint, unit/property tests, doctests, nbval, portability, build)"
	@echo "make browser-test  the built book and the chapters in JupyterLab, in headless Chromium"
	@echo "make lab      open the notebooks in JupyterLab with working widgets"
	@echo "make execute  re-execute every chapter notebook in place"
	@echo "make bench    run the benchmarks under benchmarks/"
	@echo "make fuzz     the unit and property tests with fresh random examples, many more of them"

install: $(STAMP)

# The kernel gets the display name the chapters store ("Python 3"): with another one,
# JupyterLab marks a chapter changed on opening it, and autosave would rewrite it.
$(STAMP): requirements.txt code/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP_ENV) $(BIN)/python -m pip install --quiet --upgrade pip
	$(PIP_ENV) $(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3" >/dev/null
	touch $@

$(OFFLINE_STAMP): Makefile
	rm -rf $(OFFLINE) .npm-offline && mkdir -p .npm-offline $(OFFLINE)
	cd .npm-offline && npm install --silent --no-audit --no-fund --no-package-lock $(NPM_ASSETS)
	cp -r .npm-offline/node_modules/mathjax/es5 $(OFFLINE)/mathjax
	rm -rf .npm-offline
	touch $@

$(FAVICON): $(OFFLINE_STAMP)
	printf '%s\n' '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><g fill="none" stroke-linecap="round"><path d="M5 27L28 22M5 27L21 6" stroke="#1f5fa8" stroke-width="3"/><path d="M15 24.8A10 10 0 0 0 11 18.5" stroke="#d97706" stroke-width="2.5"/></g></svg>' > $@

# Debian's chromium, installed when missing: as root, or through password-less sudo;
# elsewhere the step stops and says how to install it.
$(CHROMIUM):
	@if [ "$$(id -u)" -eq 0 ]; then sudo=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else sudo="none"; fi; \
	if [ "$$sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "error: the browser tests need Chromium at $(CHROMIUM), and make cannot install it here." >&2; \
		echo "Install Debian's package as root:  apt-get update && apt-get install -y chromium" >&2; \
		echo "or name another Chromium build:    make test CHROMIUM=/path/to/chromium" >&2; \
		exit 1; \
	fi; \
	echo "== installing Debian's chromium (browser tests)"; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
	@test -x $(CHROMIUM) || { echo "error: chromium is installed but $(CHROMIUM) is missing; set CHROMIUM=" >&2; exit 1; }

book: $(STAMP) $(OFFLINE_STAMP) $(FAVICON)
	$(BIN)/jupyter-book build . --warningiserror --nitpick --keep-going
	@echo "Open the book: file://$(CURDIR)/_build/html/index.html"

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

format: $(STAMP)
	$(BIN)/ruff check --fix $(LINTED)
	$(BIN)/ruff format $(LINTED)

test: $(STAMP) $(OFFLINE_STAMP) $(CHROMIUM)
	@echo "== lint"
	$(MAKE) --no-print-directory lint
	@echo "== pytest: unit, property and doctests, nbval on every chapter"
	$(BIN)/python -m pytest
	@echo "== portability: nbval and doctests again as on an older CPU with another BLAS core"
	$(BIN)/python tests/portability.py
	@echo "== book build (warnings are errors)"
	$(MAKE) --no-print-directory book
	@echo "== browser: every page of the book, and the chapters in JupyterLab, in headless Chromium"
	$(MAKE) --no-print-directory browser-test

# The real-browser tests (tests/browser), on the last build (built here if there is none).
# Screenshots of failures, widget pictures and timings go to _build/browser/.
browser-test: $(STAMP) $(OFFLINE_STAMP) $(CHROMIUM)
	@test -f _build/html/index.html || $(MAKE) --no-print-directory book
	CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest tests/browser -o addopts="" -q -p no:cacheprovider

# JupyterLab refuses to run as root unless told to (containers often run as root).
lab: $(STAMP)
	$(BIN)/jupyter lab chapters/ $(if $(filter 0,$(shell id -u)),--allow-root)

execute: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.record_timing=False --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.startup_timeout=120 $(CHAPTERS)

bench: $(STAMP)
	@for script in benchmarks/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest tests

clean:
	rm -rf _build $(OFFLINE) .pytest_cache .hypothesis .cache
