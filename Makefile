# Every target bootstraps .venv by itself on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CONFIG ?= configs/potm94.yaml
BROKER_URL ?=
RUN ?=
MATCH ?=
ARGS ?=

.PHONY: venv tournament worker rerun report test test-fast bench bench-scale bench-fairtime bench-report lint clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

# tourney itself is in $(BIN): the hint says how to put it on PATH (README.md, "Set up")
PATH_HINT = @echo "tourney is $(BIN)/tourney; '. $(BIN)/activate' puts it on PATH for the commands in README.md"

venv: $(STAMP)
	$(PATH_HINT)

tournament: $(STAMP)
	$(BIN)/tourney run $(CONFIG) $(ARGS)
	$(PATH_HINT)

worker: $(STAMP)
	@test -n "$(BROKER_URL)" || { echo "usage: make worker BROKER_URL=redis://:PASSWORD@HOST:PORT/0 [KEY_FILE=run.key]"; exit 2; }
	@# through the environment: a password on the worker's command line is visible to every local user
	@TOURNEY_BROKER_URL='$(BROKER_URL)' $(BIN)/tourney worker $(if $(KEY_FILE),--key-file '$(KEY_FILE)') $(ARGS)

rerun: $(STAMP)
	@test -n "$(RUN)" -a -n "$(MATCH)" || { echo "usage: make rerun RUN=runs/NAME MATCH=ID [ARGS=--allow-changed-code]; then tourney accept RUN MATCH N --reason ..."; exit 2; }
	$(BIN)/tourney rerun $(RUN) $(MATCH) $(ARGS)

report: $(STAMP)
	@test -n "$(RUN)" || { echo "usage: make report RUN=runs/NAME"; exit 2; }
	$(BIN)/tourney report $(RUN) --html $(RUN)/report.html

# Where PYTHONDONTWRITEBYTECODE is set, the tests and benchmarks keep compiled modules (and pytest's rewritten test
# modules) in PYCACHE, outside the working tree: without them every run, every xdist worker and
# every `tourney` subprocess a test starts compiles the whole project again (the first run fills it).
PYCACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/tourney/pycache
TEST_ENV = $(if $(PYTHONDONTWRITEBYTECODE),env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX='$(PYCACHE)')

test: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest -q $(ARGS)

# everything but the tests marked `integration` (all of tests/integration, by its conftest: real
# Redis, workers, netns; and elsewhere hostile or multi-second real processes, big plans), on JOBS
# pytest-xdist workers (JOBS=0: in this process), a module to a worker (its module-scoped fixtures,
# a whole tournament run for some, are made once); `make test` runs them all, one at a time
JOBS ?= auto
DIST ?= loadscope
test-fast: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest -q -m "not integration" -n $(JOBS) --dist $(DIST) $(ARGS)

bench: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m bench $(ARGS)

# planners and ratings at 10,000 entries: wall and peak RSS (not part of `make test`)
bench-scale: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m bench.scale_bench $(ARGS)

bench-fairtime: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m bench fairtime $(ARGS)

# the HTML report of a 50,000-match run: write time, size, open time in headless Chromium
# (not part of `make test`; ARGS="--run-dir DIR" keeps the generated run for another time)
bench-report: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m bench.report_bench $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check runner workers tests bench
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
