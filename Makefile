# Every target bootstraps .venv by itself on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CONFIG ?= configs/potm94.yaml
BROKER_FILE ?=
RUN ?=
MATCH ?=
ARGS ?=

.PHONY: venv tournament serve worker rerun report test test-fast bench bench-scale bench-fairtime bench-report lint clean

# EDITABLE_MODE=compat: the editable install is one path in a .pth file. setuptools' default for
# this flat layout (lenient) installs an import finder instead, which every Python process of the
# venv imports at start: 30 ms a start against 13 ms, paid by each `tourney`, worker and Python
# entry (make test-fast: 134 -> 127 s of CPU). setuptools calls compat transitional (its warning
# goes to .venv/install.log), so pyproject.toml holds it below the next major;
# EDITABLE_MODE=lenient is the way back.
EDITABLE_MODE ?= compat

# pip compiles what it installs on one core (13 of a 30 s install); compileall does the same
# files on every core after it (8 s of wall on 2 cores; a file it cannot compile, such as a
# package's Python 2 example, is compiled by nobody, as under pip, and fails nothing)
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q --no-compile -e '.[dev]' --config-settings editable_mode=$(EDITABLE_MODE) \
		2>$(VENV)/install.log || { cat $(VENV)/install.log; exit 1; }
	$(BIN)/python -m compileall -q -j 0 "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null || true
	@touch $(STAMP)

# tourney itself is in $(BIN): the hint says how to put it on PATH (README.md, "Set up")
PATH_HINT = @echo "tourney is $(BIN)/tourney; '. $(BIN)/activate' puts it on PATH for the commands in README.md"

venv: $(STAMP)
	$(PATH_HINT)

# an interrupted run says how to resume it: with the make command that started it (tourney
# itself may not be on PATH for someone who used make)
tournament: $(STAMP)
	TOURNEY_RESUME_HINT="make tournament CONFIG='$(CONFIG)'$(if $(ARGS), ARGS='$(ARGS)')" $(BIN)/tourney run $(CONFIG) $(ARGS)
	$(PATH_HINT)

# the contest's submission server (docs/submissions.md): loopback, embedded Redis and a local worker
serve: $(STAMP)
	$(BIN)/tourney serve $(CONFIG) $(ARGS)

# The broker URL holds the password: it must appear in no process's argv (every local user reads
# those with ps), neither make's nor the shell's nor the worker's. So it comes from the
# environment (export BROKER_URL=...; the recipe's shell expands "$$BROKER_URL" itself, its argv
# holds the variable's name) or from a 0600 file (BROKER_FILE=path), never from make's command line.
worker: $(STAMP)
ifeq ($(origin BROKER_URL),command line)
	@echo "make worker: BROKER_URL on make's command line is visible to every local user (ps); export BROKER_URL=... first, or give BROKER_FILE=FILE (mode 0600)"; exit 2
endif
	@test -n "$$BROKER_URL$(BROKER_FILE)" || { echo "usage: BROKER_URL=redis://:PASSWORD@HOST:PORT/0 make worker KEY_FILE=worker.key   (exported, not on make's command line), or make worker BROKER_FILE=broker.url KEY_FILE=worker.key"; exit 2; }
	@TOURNEY_BROKER_URL="$$BROKER_URL" exec $(BIN)/tourney worker $(if $(BROKER_FILE),--broker-file '$(BROKER_FILE)') $(if $(KEY_FILE),--key-file '$(KEY_FILE)') $(ARGS)

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
# after each install, the project compiled and the test modules rewritten once, one process a
# core, before `make test`'s xdist workers start (tests/warm_caches.py). Cold, each of its 6
# workers did all of it for itself: 57 s of CPU to collect against 19 s warm, where this costs
# 15 s (8 s of wall). test-fast's 3 workers lose what it gains (74.6 s against 74.7 s, both
# from cold caches). Best effort: a failure here leaves it to the run, which reports it.
WARM := $(VENV)/.caches-warm
$(WARM): $(STAMP)
	-$(TEST_ENV) $(BIN)/python -m tests.warm_caches && touch $@

# everything, on TEST_JOBS pytest-xdist workers: more workers than cores keeps both cores busy
# while tests wait (on Redis, workers, clocks); at 6 they stay 97-100% busy from start to end
# (README.md), so more workers would only add load. --units
# (tests/scheduling.py): a module with a module-scoped fixture (a whole tournament run, a server)
# goes to one worker, every other test on its own, the longest first (tests/durations.json).
# ARGS="--cpu-durations 30" lists the tests that cost the most CPU (load does not change it).
TEST_JOBS ?= 6
test: $(STAMP) $(WARM)
	$(TEST_ENV) $(BIN)/python -m pytest -q -n $(TEST_JOBS) --units $(ARGS)

# everything but the tests marked `integration` (all of tests/integration, by its conftest: real
# Redis, workers, netns; and elsewhere hostile or multi-second real processes, big plans), on JOBS
# pytest-xdist workers (JOBS=0: in this process), handed out as `make test` does; one worker more
# than cores fills the time some tests wait (a browser, a timeout): on 2 cores 3 workers took
# 77 s where 2 took 92 s and 4 took 81 s, each worker paying ~4 s of CPU to collect the suite.
# The project is compiled first, on every core (tests/warm_caches.py --compile-only; 0.3 s when
# nothing changed): on a fresh clone each worker would compile it all for itself, at the same
# time (63.6 s against 60.6 s).
JOBS ?= $(shell echo $$(( $$(nproc) + 1 )))
test-fast: $(STAMP)
	$(TEST_ENV) $(BIN)/python -m tests.warm_caches --compile-only
	$(TEST_ENV) $(BIN)/python -m pytest -q -m "not integration" -n $(JOBS) $(if $(filter 0,$(JOBS)),,--units) $(ARGS)

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
