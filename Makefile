# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install run test test-slow bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The main job: SUMFIRST, 4 meta-learners x 4 seeds x 3,000 steps on the CPU
# (the full config trains 10 seeds x 6,000 steps; see README).
RUN_WORKDIR ?= workdirs/sumfirst
run: $(STAMP)
	$(PY) -m experiments.describe
	$(PY) -m experiments.synthesize --config=experiments/configs/sumfirst.py \
	  --config.seeds=4 --config.steps=3000 --workdir=$(RUN_WORKDIR)

# The tests run on one pytest-xdist worker per core (compilation, which
# dominates small tests, is single-threaded); TEST_WORKERS=0 runs them serially.
# The 20 slowest tests are listed at the end of each run, so a test that pushes
# `make test` past its 15-minute budget on CI's 2 cores shows where it is.
TEST_WORKERS ?= auto
test: $(STAMP)
	$(PY) -m pytest -q -m "not slow" -n $(TEST_WORKERS) --dist loadfile --durations=20 tests

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow -n $(TEST_WORKERS) --dist loadfile --durations=20 tests

bench: $(STAMP)
	$(PY) benchmarks/bench_execute.py
	$(PY) benchmarks/bench_tasks.py
	$(PY) benchmarks/bench_pnag.py
	$(PY) benchmarks/bench_pnag_train.py
	$(PY) benchmarks/bench_nb201_load.py

clean:
	rm -rf $(VENV) build *.egg-info
