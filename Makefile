# Two commands on a fresh machine:  make figures   and   make test   (make help: every target, one line each)
# Both create .venv when it is absent (python3.11 -m venv .venv && .venv/bin/pip install
# -r requirements.lock -e .[all,test]: every package at the exact version of the lock) and
# reinstall when pyproject.toml or the lock changes. `make lock` regenerates the lock.

# this file, whose `## target:` lines `make help` prints (MAKEFILE_LIST's last word while it is read)
MAKEFILE := $(lastword $(MAKEFILE_LIST))
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.vhct-installed
# the exact version of every package of .[all,test] (pip-compile from pyproject.toml's ranges;
# CPython 3.11 on Linux x86_64, the machine of the pipeline and of CI)
LOCK := requirements.lock
# throwaway venv of `make lock` that holds pip-tools (kept out of the project's own venv)
LOCK_VENV ?= /tmp/vhct-lock-venv
PIP_TOOLS ?= pip-tools==7.6.2
# make lock UPGRADE=1: every package at its newest version within pyproject.toml's ranges
# (by default pip-compile keeps the locked versions and pins only what is new)
UPGRADE ?=
# throwaway venv of `make core-example` (outside the checkout, so `import vhct` is the installed one)
CORE_VENV ?= /tmp/vhct-core-venv
CORES ?= all
CONFIG ?= config/config.yaml
TARGETS ?=
# options of `make findings` (python -m vhct.reporting.ship), e.g. --reduced
SHIP_ARGS ?=
# options of `make article` (python -m vhct.article), e.g. --results results/paper-local to build it
# from a finished run's results instead of the shipped docs/findings
ARTICLE_ARGS ?=
# the article's PDF
ARTICLE ?= docs/article.pdf
# where `make findings-figures` draws the shipped run's figures
FINDINGS_FIGURES ?= figures/findings
# a command the Snakemake call of `make figures` runs under (make paper-local: the provenance recorder)
RUNNER ?=
# --logger vhct: the project's console (src/snakemake_logger_plugin_vhct): a line per job started and
# per job done with the jobs done and the time left, every line cut to the terminal's width; the full
# detail (each job's input, output and reason) stays in .snakemake/log/<date>.snakemake.log.
# CONSOLE= (empty) gives Snakemake's own console back. (--logger, like --configfile, takes every word
# up to the next option: neither may come last, where the targets follow.)
CONSOLE ?= --logger vhct
# Offline data mirror for the real-data experiments (files at <mirror>/<path>, see data/README.md):
# an already set VHCT_DATA_MIRROR wins; else ../shared/data is used when that directory exists.
SHARED_DATA ?= ../shared/data
# The values above, as given on the command line or in the environment, are text: make expands no
# `$` in them (`make dry-run CONFIG='x$(shell cmd).yaml'` names a file and runs nothing, in this make
# or a sub-make; a value make expanded would run it, also when exported to a recipe's environment).
USER_VARIABLES := PYTHON PIP_TOOLS LOCK_VENV UPGRADE CORE_VENV CORES CONFIG TARGETS SHIP_ARGS RUNNER SHARED_DATA \
	CONSOLE ARTICLE_ARGS ARTICLE FINDINGS_FIGURES
$(foreach v,$(USER_VARIABLES),$(eval override $(v) := $$(value $(v))))
# They reach the shell quoted, so the shell expands nothing in them either:
# $(call arg,NAME): the value as one shell word in single quotes (a path with spaces or quotes stays one)
arg = '$(subst ','\'',$($(1)))'
# $(call args,NAME): each word of the value (split at spaces) as one quoted shell word
args = $(foreach w,$($(1)),'$(subst ','\'',$(w))')
CONFIG_ARG := $(call arg,CONFIG)
# --keep-going: a failed job (e.g. a data file no source could provide) does not stop the
# independent ones; make still fails at the end. --rerun-incomplete: after an interrupted run
# (Ctrl-C, a killed Snakemake) the jobs it had under way run again; finished ones are kept.
# --scheduler greedy: Snakemake's default ILP scheduler solved a knapsack after every finished job
# and took a third of a core through paper-local (32 of its first 71 minutes); the greedy one picks
# by the rules' priorities (data first, then the long runs) at a fraction of that.
SNAKEMAKE := $(BIN)/snakemake --cores $(call arg,CORES) $(call args,CONSOLE) --configfile $(CONFIG_ARG) --keep-going \
	--rerun-incomplete --scheduler greedy
# Before Snakemake starts: the config file is checked (errors name file, line and key; Snakemake
# itself reports a YAML syntax error or an empty file without its name), and a lock left by a
# killed Snakemake is cleared, only if no Snakemake process of this machine works in this
# directory any more (vhct.pipeline.workdir_lock; exit 0 = stale).
PREPARE := $(BIN)/python -m vhct.pipeline.config $(CONFIG_ARG) && \
	if $(BIN)/python -m vhct.pipeline.workdir_lock; then $(SNAKEMAKE) --unlock; fi
ifeq ($(origin VHCT_DATA_MIRROR),undefined)
ifneq ($(wildcard $(SHARED_DATA)),)
export VHCT_DATA_MIRROR := $(abspath $(SHARED_DATA))
endif
endif
# the real-data figures, in the config's figures folder (figures/ for config/config.yaml, figures/<name>/
# for config/<name>.yaml: `python -m vhct.pipeline.config --folder figures CONFIG` prints it)
REAL_FIGURES := fig3b_landmine.pdf fig3c_mnist.pdf
# the config of `make paper-local`, whose run `make findings` ships
PAPER_LOCAL := config/paper-local.yaml
# a config's folder of results, figures or logs (e.g. $(call folder,results,config/paper-local.yaml))
folder = $$($(BIN)/python -m vhct.pipeline.config --folder $(1) $(2))

.PHONY: all help venv lock figures real-data data paper plan paper-local findings article findings-figures test test-quick core-example lint dry-run slurm-dry-run unlock prune clean

## all: the same as `make figures` (make's default target)
all: figures

## help: list every target with one line each (from the Makefile's `## target:` lines)
help:
	@awk '/^## [a-z-]+: / { name = $$2; sub(/:$$/, "", name); sub(/^## [a-z-]+: /, ""); printf "  %-17s %s\n", name, $$0 }' \
		$(MAKEFILE)

$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(call arg,PYTHON) -m venv $(VENV)
	$(BIN)/pip install -r $(LOCK) -e ".[all,test]"
	touch $(STAMP)

## venv: create or update .venv: the project and its test extra at the lock's versions
venv: $(STAMP)

## lock: regenerate requirements.lock from pyproject.toml (UPGRADE=1: newest versions)
# pip-compile runs in a throwaway venv; UPGRADE=1 moves every package to its newest version within
# pyproject.toml's ranges; then `make venv` installs the lock
lock:
	rm -rf $(call arg,LOCK_VENV) && $(call arg,PYTHON) -m venv $(call arg,LOCK_VENV)
	$(call arg,LOCK_VENV)/bin/pip install --quiet $(call arg,PIP_TOOLS)
	CUSTOM_COMPILE_COMMAND="make lock" $(call arg,LOCK_VENV)/bin/pip-compile --quiet $(if $(UPGRADE),--upgrade) --extra all --extra test \
		--allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links \
		--output-file $(LOCK) pyproject.toml
	# the project itself (pulled in by its own `all` extra) is installed from the checkout, not pinned
	awk '/^vhct @ /{skip=1; next} skip && /^ +#/{next} {skip=0; print}' $(LOCK) > $(LOCK).tmp
	mv $(LOCK).tmp $(LOCK)
	rm -rf $(call arg,LOCK_VENV)

## figures: the whole pipeline with the default config (the quick start) on all cores
# (or only TARGETS and what they need: make figures TARGETS=figures/fig3a_garland.pdf; another
# config's outputs are in its own folders: make figures CONFIG=config/mine.yaml TARGETS=figures/mine/fig3a_garland.pdf)
figures: $(STAMP)
	$(PREPARE)
	$(call args,RUNNER) $(SNAKEMAKE) $(call args,TARGETS)

## real-data: only the real-data figures (Landmine, MNIST) and the jobs they need
real-data: $(STAMP)
	$(PREPARE)
	figures=$(call folder,figures,$(CONFIG_ARG)) && $(SNAKEMAKE) $(addprefix $$figures/,$(REAL_FIGURES))

## data: only download and verify the data files the config's experiments use
data: $(STAMP)
	$(PREPARE)
	$(SNAKEMAKE) --until verify_data

## paper: the paper's full scale, config/paper.yaml (BO and MNIST take days: a cluster)
paper: $(STAMP)
	$(MAKE) figures CONFIG=config/paper.yaml

## plan: the analysis plan of `make paper-local`, from the pilot (after `make figures`)
# config/plans/paper-local.yaml: the seeds per arm each comparison needs (the quick start is the pilot)
plan: $(STAMP)
	$(BIN)/python -m vhct.reporting.audit.plan $(PAPER_LOCAL)

## paper-local: a confirmatory run at the paper's scale on one machine (after `make plan`)
# config/paper-local.yaml on the plan's seeds; refused, before Snakemake plans anything, unless `make plan`
# wrote a plan that matches the config, the claims and the pilot. Measured 38 min 23 s with the venv
# installed (the fourth plan of 2026-11-29, 24,880 runs), on 2 cores of an AMD EPYC. Timed: the run's
# provenance (commit, command, wall time, machine) goes to results/paper-local/provenance.json (its
# results in results/paper-local/, its figures in figures/paper-local/: beside the default config's).
# It starts from empty results/paper-local/ and figures/paper-local/, so that the record holds every
# output `make findings` ships (a figure drawn from the config alone, current from an earlier run,
# would otherwise not be made again, and `make findings` refuses what the record did not see); the
# runs themselves stay in the run store, results/runs/, and are found there again. (The folders are
# emptied by a line of their own: `make -n` runs a line that calls $(MAKE), and so would empty them.)
paper-local: $(STAMP)
	$(BIN)/python -m vhct.reporting.audit.plan --check $(PAPER_LOCAL)
	results=$(call folder,results,$(PAPER_LOCAL)) && figures=$(call folder,figures,$(PAPER_LOCAL)) && \
		rm -rf "$$results" "$$figures"
	results=$(call folder,results,$(PAPER_LOCAL)) && $(MAKE) figures CONFIG=$(PAPER_LOCAL) \
		RUNNER="$(BIN)/python -m vhct.pipeline.provenance $$results/provenance.json --"

## findings: docs/findings.md and docs/figures/*.png from a finished `make paper-local`
# (copies its audit JSON, aggregates, provenance and linked figure PNGs into docs/, then renders;
# refuses, changing nothing, unless all of them have the content results/paper-local/provenance.json records
# and one set of package versions, and the run is at the paper's scale: a reduced run, one with an audited
# experiment below the claims' seeds, only with SHIP_ARGS=--reduced; a killed `make findings` is
# completed by the next one)
findings: $(STAMP)
	results=$(call folder,results,$(PAPER_LOCAL)) && figures=$(call folder,figures,$(PAPER_LOCAL)) && \
		$(BIN)/python -m vhct.reporting.ship --results "$$results" --figures "$$figures" $(call args,SHIP_ARGS)

## article: docs/article.pdf, the replication article, from docs/findings alone (no runs)
# ReScience C / ML Reproducibility Challenge structure; Typst from its wheel, no TeX; from a finished
# run's results instead: make article ARTICLE_ARGS="--results results/paper-local"
article: $(STAMP)
	$(BIN)/python -m vhct.article --out $(call arg,ARTICLE) $(call args,ARTICLE_ARGS)

## findings-figures: the shipped run's figures again from docs/findings alone (figures/findings)
# (the results cache: each setting's per-round curve and timing aggregates; no run)
findings-figures: $(STAMP)
	$(BIN)/python -m vhct.article.redraw --out $(call arg,FINDINGS_FIGURES)

## test: the test suite (unit and integration)
test: $(STAMP)
	$(BIN)/pytest

## test-quick: the unit tests only (no Snakemake runs, no installs; a minute or two)
test-quick: $(STAMP)
	$(BIN)/pytest -m "not integration"

## core-example: the library examples in a throwaway venv with the core install alone
# (numpy, SciPy); the Optuna example needs its extra and runs in `make test` (tests/unit/test_examples.py)
core-example:
	rm -rf $(call arg,CORE_VENV) build && $(call arg,PYTHON) -m venv $(call arg,CORE_VENV)
	$(call arg,CORE_VENV)/bin/pip install --quiet .
	cd $(call arg,CORE_VENV) && bin/python '$(CURDIR)'/examples/quickstart.py
	cd $(call arg,CORE_VENV) && bin/python '$(CURDIR)'/examples/one_call.py
	rm -rf $(call arg,CORE_VENV)

## lint: ruff and snakemake --lint
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check src tests benchmarks scripts workflow/scripts
	$(BIN)/snakemake --lint

## dry-run: show the jobs the pipeline would run
dry-run: $(STAMP)
	$(BIN)/python -m vhct.pipeline.config $(CONFIG_ARG)
	$(SNAKEMAKE) --dry-run

## slurm-dry-run: show the jobs the SLURM profile (workflow/profiles/slurm) would submit
slurm-dry-run: $(STAMP)
	$(BIN)/snakemake --profile workflow/profiles/slurm --configfile $(CONFIG_ARG) --dry-run

## unlock: clear Snakemake's lock after a killed run (make figures does it when safe)
unlock: $(STAMP)
	$(BIN)/python -m vhct.pipeline.workdir_lock; test $$? -ne 2
	$(SNAKEMAKE) --unlock

## prune: delete the stored runs other code or package versions made (none is served)
prune: $(STAMP)
	$(BIN)/python -m vhct.pipeline.store --prune

## clean: remove the results, figures and logs of every config (keeps data/ downloads)
clean:
	rm -rf results logs
	find figures -mindepth 1 ! -name .gitkeep -delete
