# fedlib & the Federated Unlearning Book.
#   make book   set up .venv, execute every chapter at SCALE (default "default"), build the HTML
#               (EDITION=student: the same executed chapters with every solution removed)
#   make test   set up .venv, run the whole test suite (chapters at scale "ci", strict book build, browser check)
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DELETE_ON_ERROR:

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.fedlib-installed
SCALE  ?= default
SEED   ?= 0

# Real data comes from a local mirror when one sits beside the repository.
MIRROR := $(abspath ../shared/data)
ifneq ($(wildcard $(MIRROR)),)
export FEDLIB_DATA_MIRROR ?= $(MIRROR)
endif
export PYTHONHASHSEED := 0

CHAPTERS := $(shell find notebooks -name '*.md' ! -name 'README.md' | sort)
LIBRARY  := $(shell find fedlib book/fedbook -name '*.py') pyproject.toml book/pyproject.toml
BOOKSRC  := _config.yml _toc.yml $(shell find book -type f ! -name '*.pyc')
SRC      := _build/$(SCALE)/src
EXECUTED := $(patsubst %.md,$(SRC)/%.ipynb,$(CHAPTERS))
# Each part's lab: its chapters' coding exercises in one notebook (tools/make_lab.py), run at scale "ci".
LAB_PARTS := primer foundations mufc secfc secagg_fu knot compared
LABS     := $(patsubst %,$(SRC)/labs/%.ipynb,$(LAB_PARTS))
# EDITION=instructor (solutions in dropdowns) or student (every solution removed, built from the same executed notebooks).
EDITION  ?= instructor
ifeq ($(EDITION),student)
HTML     := _build/$(SCALE)/student/_build/html/index.html
else ifeq ($(EDITION),instructor)
HTML     := _build/$(SCALE)/_build/html/index.html
else
$(error EDITION must be instructor or student, not $(EDITION))
endif

.PHONY: book test setup chapters labs lab chapter lint clean
.DEFAULT_GOAL := book

setup: $(STAMP)

$(STAMP): requirements.txt constraints.txt pyproject.toml book/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -c constraints.txt
	@# The library's distribution was called fedlib before it became fedlib-unlearning: drop an old install.
	@$(PY) -m pip uninstall --quiet --yes fedlib 2>/dev/null || true
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e . -e book
	@touch $@

# The sweeps run on a Dask cluster when DASK_SCHEDULER_ADDRESS names its scheduler (fedbook.sweeps.connect):
# then, and only then, the chapters need Dask's distributed scheduler in .venv.
ifneq ($(strip $(DASK_SCHEDULER_ADDRESS)),)
CLUSTER := $(VENV)/.fedlib-dask-installed
endif

# A chapter is executed again only when its source, the library or the environment changed (not where it ran).
$(SRC)/%.ipynb: %.md $(LIBRARY) $(STAMP) | $(CLUSTER)
	$(PY) tools/run_chapter.py $< $@ -p scale $(SCALE) -p seed $(SEED)

chapters: $(EXECUTED)

.SECONDEXPANSION:
$(SRC)/labs/%.ipynb: $$(wildcard notebooks/$$*/*.md) _toc.yml tools/make_lab.py tools/exercises.py $(LIBRARY) $(STAMP)
	$(PY) tools/make_lab.py notebooks/$* _build/$(SCALE)/labsrc/$*.md
	$(PY) tools/run_chapter.py _build/$(SCALE)/labsrc/$*.md $@ -p scale ci -p seed $(SEED)

labs: $(LABS)

$(HTML): $(EXECUTED) $(LABS) $(BOOKSRC) $(LIBRARY) tools/build_book.py tools/exercises.py
	$(PY) tools/build_book.py --scale $(SCALE) --edition $(EDITION)
	@touch $@

book: $(HTML)
	@echo "The book's front page: $(abspath $(HTML))"

# Work on the labs in a browser: JupyterLab (pinned in requirements-lab.txt) in .venv, opened on the labs without solutions.
LABSTAMP := $(VENV)/.fedlib-lab-installed
$(LABSTAMP): requirements-lab.txt constraints.txt $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-lab.txt -c constraints.txt
	@touch $@

# JupyterLab refuses to run as root (containers, CI, many lab machines) unless told --allow-root: given when root.
# LAB_ARGS passes more options, e.g. make lab LAB_ARGS="--no-browser --ip=127.0.0.1 --port=8899" on a headless machine.
LAB_ARGS ?=
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: $(LABSTAMP) $(LABS)
	$(PY) tools/exercises.py strip _build/$(SCALE)/student-labs $(LABS)
	@$(if $(LAB_ROOT),echo "make lab: running as root (JupyterLab refuses root without it): --allow-root")
	$(VENV)/bin/jupyter lab $(LAB_ROOT) $(LAB_ARGS) _build/$(SCALE)/student-labs

# Rerun one chapter, always: make chapter CHAPTER=notebooks/foundations/kmeans.md SCALE=paper SEED=1
chapter: $(STAMP) $(CLUSTER)
	@test -n "$(CHAPTER)" || { echo "usage: make chapter CHAPTER=notebooks/<part>/<name>.md [SCALE=..] [SEED=..]"; exit 2; }
	$(PY) tools/run_chapter.py $(CHAPTER) $(SRC)/$(CHAPTER:.md=.ipynb) -p scale $(SCALE) -p seed $(SEED)

# The tests also run sweeps on a two-worker Dask LocalCluster (tests/fedbook/test_sweeps.py): Dask's distributed
# scheduler, pinned in requirements-dask.txt, goes into .venv for them; `make book` does not need it.
DASKSTAMP := $(VENV)/.fedlib-dask-installed
$(DASKSTAMP): requirements-dask.txt constraints.txt $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dask.txt -c constraints.txt
	@touch $@

# fedlib.flower's tests run Flower's simulation engine against fedlib's simulator (tests/flower/), and
# benchmarks/bench_secagg.py times Flower's SecAgg+ beside fedlib's: Flower, pinned in requirements-flower.txt,
# goes into .venv for them; `make book` does not need it.
FLOWERSTAMP := $(VENV)/.fedlib-flower-installed
$(FLOWERSTAMP): requirements-flower.txt constraints.txt $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-flower.txt -c constraints.txt
	@touch $@

# Both cores: the book tests share build products (_build/ci) and form one xdist group, so one worker runs
# them all in order (tests/book/conftest.py keeps the groups working with pytest 9.2); the rest is spread over both.
test: $(STAMP) $(DASKSTAMP) $(FLOWERSTAMP)
	$(PY) -m ruff check fedlib book/fedbook book/flower_app tests tools book/_ext benchmarks
	$(PY) -m pytest -n 2 --dist loadgroup

lint: $(STAMP)
	$(PY) -m ruff check fedlib book/fedbook book/flower_app tests tools book/_ext benchmarks

clean:
	rm -rf _build
