# Two commands do all the set-up: `make book` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
OFFLINE := _offline
OFFLINE_STAMP := $(OFFLINE)/.stamp
CHAPTERS := $(sort $(wildcard chapters/*.ipynb))
LINTED := conftest.py code tests benchmarks chapters extensions experiments
# Pinned MathJax, so that the maths renders with no CDN.
NPM_ASSETS := mathjax@3.2.2
# The book's icon (_config.yml: html.favicon), so that browsers ask no static server for
# a missing /favicon.ico.
FAVICON := $(OFFLINE)/favicon.svg
# The PDF edition (`make pdf`): Jupyter Book's LaTeX builder, XeLaTeX, latexmk and xindy
# from Debian's TeX Live, the fonts the book is set in, and poppler's pdftotext and
# pdfimages for its tests (texlive-fonts-recommended: hyperref under XeTeX needs its
# ZapfDingbats metrics). Installed by make where missing, like Chromium below.
PDF := _build/pdf/book.pdf
TEX_PACKAGES := texlive-xetex texlive-latex-extra texlive-fonts-recommended latexmk xindy fonts-freefont-otf fonts-dejavu-core fonts-wqy-microhei poppler-utils
TEX_TOOLS := xelatex latexmk xindy pdftotext pdfimages pdfinfo fc-list
TEX_FONTS := FreeSerif:DejaVu Sans Mono:WenQuanYi Micro Hei
# One file from each TeX Live package, so that a partial installation is completed.
TEX_FILES := ucharclasses.sty fncychap.sty pgfplots.sty pzdr.tfm
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
# Models load from installed packages: the hubs' libraries must never reach for a network.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1
export HF_HUB_DISABLE_PROGRESS_BARS := 1
# The suite runs on every core: pytest-xdist, one notebook (or test file) per worker, so
# that a notebook's cells share one kernel. PYTEST_WORKERS= runs it in one process.
PYTEST_WORKERS ?= -n auto --dist loadfile
# A user's MPLBACKEND would stop the kernels from using the inline backend.
unexport MPLBACKEND

.PHONY: help install book pdf pdf-test tex test browser-test lint format lab execute experiments bench size fuzz clean

help:
	@echo "make book     build the HTML book into _build/html"
	@echo "make pdf      build the PDF edition into $(PDF) (installs TeX Live from Debian if missing)"
	@echo "make test     run the whole suite (lint, unit/property tests, doctests, nbval, portability, build, PDF)"
	@echo "make pdf-test the checks on the PDF edition (glyphs, references, figures, theorems)"
	@echo "make browser-test  the built book and the chapters in JupyterLab, in headless Chromium"
	@echo "make lab      open the notebooks in JupyterLab with working widgets"
	@echo "make execute  re-execute every chapter notebook in place"
	@echo "make experiments  chapter 1's optimizer sweep (results committed in experiments/)"
	@echo "make bench    run the benchmarks under benchmarks/"
	@echo "make size     the package's lines, docstring share and public names, against the lean targets"
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

# Debian's TeX Live and fonts for the PDF, installed when a tool or font is missing: as
# root, or through password-less sudo; elsewhere the step stops and says how to install.
tex:
	@missing=""; \
	for tool in $(TEX_TOOLS); do command -v $$tool >/dev/null 2>&1 || missing="$$missing $$tool"; done; \
	for file in $(TEX_FILES); do kpsewhich $$file >/dev/null 2>&1 || missing="$$missing $$file"; done; \
	fonts="$(TEX_FONTS)"; IFS=:; for font in $$fonts; do \
		fc-list -q ":family=$$font" 2>/dev/null || missing="$$missing '$$font'"; \
	done; unset IFS; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" -eq 0 ]; then sudo=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else sudo="none"; fi; \
	if [ "$$sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "error: the PDF needs$$missing, and make cannot install them here." >&2; \
		echo "Install Debian's packages as root:" >&2; \
		echo "  apt-get update && apt-get install -y --no-install-recommends $(TEX_PACKAGES)" >&2; \
		exit 1; \
	fi; \
	echo "== installing Debian's TeX Live and fonts (PDF edition; missing:$$missing)"; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(TEX_PACKAGES) >/dev/null

# The PDF also goes next to the HTML pages, where their sidebar links to it.
book: $(STAMP) $(OFFLINE_STAMP) $(FAVICON)
	$(BIN)/jupyter-book build . --warningiserror --nitpick --keep-going
	@if [ -f $(PDF) ]; then cp $(PDF) _build/html/book.pdf; fi
	@echo "Open the book: file://$(CURDIR)/_build/html/index.html"

# The PDF edition: the LaTeX files in _build/latex (Sphinx warnings are errors, as for
# the HTML), then XeLaTeX through latexmk; stored outputs, nothing is executed. Its
# log goes to _build/pdf/build.log (the end of it is shown if the build fails).
pdf: $(STAMP) tex
	rm -rf _build/latex && mkdir -p $(dir $(PDF))
	@echo "== LaTeX builder and XeLaTeX (log: _build/pdf/build.log)"
	@$(BIN)/jupyter-book build . --builder pdflatex --warningiserror --nitpick --keep-going \
		> _build/pdf/build.log 2>&1 || { tail -n 40 _build/pdf/build.log; exit 1; }
	cp _build/latex/book.pdf $(PDF)
	@if [ -d _build/html ]; then cp $(PDF) _build/html/book.pdf; fi
	@echo "The PDF: $(CURDIR)/$(PDF) ($$(pdfinfo $(PDF) | awk '/^Pages:/ {print $$2}') pages)"

# The checks on the PDF (tests/test_pdf.py), on the last build (built here if there is
# none). The main pytest run leaves this file out (pyproject.toml).
pdf-test: $(STAMP) tex
	@test -f $(PDF) || $(MAKE) --no-print-directory pdf
	$(BIN)/python -m pytest tests/test_pdf.py -o addopts="" -q -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

format: $(STAMP)
	$(BIN)/ruff check --fix $(LINTED)
	$(BIN)/ruff format $(LINTED)

test: $(STAMP) $(OFFLINE_STAMP) $(CHROMIUM) tex
	@echo "== lint"
	$(MAKE) --no-print-directory lint
	@echo "== pytest: unit, property and doctests, nbval on every chapter"
	$(BIN)/python -m pytest $(PYTEST_WORKERS)
	@echo "== portability: nbval and doctests again as on an older CPU with another BLAS core"
	$(BIN)/python tests/portability.py chapters code/cosine_book $(PYTEST_WORKERS)
	@echo "== book build (warnings are errors)"
	$(MAKE) --no-print-directory book
	@echo "== PDF edition: build, then its checks (glyphs, references, figures, theorems)"
	$(MAKE) --no-print-directory pdf
	$(MAKE) --no-print-directory pdf-test
	@echo "== browser: every page of the book, and the chapters in JupyterLab, in headless Chromium"
	$(MAKE) --no-print-directory browser-test

# The real-browser tests (tests/browser), on the last build (built here if there is none).
# Screenshots of failures, widget pictures and timings go to _build/browser/.
browser-test: $(STAMP) $(OFFLINE_STAMP) $(CHROMIUM)
	@test -f _build/html/index.html || $(MAKE) --no-print-directory book
	rm -rf _build/browser
	CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest tests/browser -o addopts="" -q -p no:cacheprovider $(PYTEST_WORKERS)

# JupyterLab refuses to run as root unless told to (containers often run as root).
lab: $(STAMP)
	$(BIN)/jupyter lab chapters/ $(if $(filter 0,$(shell id -u)),--allow-root)

execute: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.record_timing=False --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.startup_timeout=120 $(CHAPTERS)

# Chapter 1's sweep (about ten minutes on 2 cores): the runs missing from
# experiments/optimizer_sweep.csv (delete it to start over) and experiments/traces.npz,
# which the chapter reads; then `make execute`.
experiments: $(STAMP)
	cd experiments && ../$(BIN)/python netflix_sweep.py
	cd experiments && ../$(BIN)/python ch7_sweeps.py
	cd experiments && ../$(BIN)/python optimizer_sweep.py

bench: $(STAMP)
	@for script in benchmarks/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

size: $(STAMP)
	$(BIN)/python tests/package_size.py

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest tests

clean:
	rm -rf _build $(OFFLINE) .pytest_cache .hypothesis .cache
