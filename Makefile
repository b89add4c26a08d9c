# `make run` and `make test` create .venv on first use. torch is pinned and installed first, by pip, from the
# machine's wheel: an unpinned torch pulls a multi-GB CUDA build. uv then installs the pinned rest (the same
# versions pip would, 34 s against about 100) and keeps that torch. It compiles the bytecode as pip does: where
# PYTHONDONTWRITEBYTECODE is set, every process would otherwise compile each module it imports (9.5 s against
# 15.6 s to import the core stack).
VENV ?= .venv
PY := $(VENV)/bin/python
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False
export TOKENIZERS_PARALLELISM := false
# LoCoMo is read from the data path, never copied into the repo.
export OPENCLAW_LAB_DATA ?= $(abspath ../shared/datasets)
export OPENCLAW_LAB_CACHE ?= $(abspath .cache)
# llama-cpp-python has no binary wheel on the registry: a prebuilt one saves building llama.cpp from source (about
# 12 min on 2 cores). It is looked for in ../shared/wheels and beside the data path (<shared>/datasets ->
# <shared>/wheels, for a checkout that is not next to shared/); a machine with neither builds it once, and uv's
# cache keeps that build for the next install.
WHEEL_DIRS := $(sort $(foreach dir,../shared/wheels $(OPENCLAW_LAB_DATA)/../wheels,$(if $(wildcard $(dir)/*.whl),$(abspath $(dir)))))
WHEELS := $(foreach dir,$(WHEEL_DIRS),--find-links $(dir))

.PHONY: run test test-slow gate lab docs docs-build bench llm clean

$(VENV)/.installed: requirements.txt constraints.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q uv==0.13.9
	@echo "llama-cpp-python: $(if $(WHEELS),a prebuilt wheel from $(WHEEL_DIRS),no prebuilt wheel found: built from source (about 12 min) unless uv's cache holds a build)"
	$(VENV)/bin/uv pip install -q --compile-bytecode --python $(PY) $(WHEELS) -r requirements.txt -c constraints.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $@

run: $(VENV)/.installed
	$(VENV)/bin/openclaw-lab run experiments/default.toml

# The Ray engine's tests run on their own after the others: started beside the other test worker's
# processes, a local Ray's GCS server has failed to come up within Ray's 120 s (CI, 2 cores).
# One thread per test worker, so two workers never run four torch threads on two cores (with it and uv, pytest on
# a fresh clone went from 632 to 533 s).
test: $(VENV)/.installed
	OMP_NUM_THREADS=1 OPENCLAW_LAB_NOTEBOOK_SCALE=small $(PY) -m pytest -q -n 2 --dist worksteal tests notebooks --nbval-lax \
		--ignore=tests/test_engines.py -m "not slow"
	$(PY) -m pytest -q tests/test_engines.py
	$(MAKE) gate

# The benchmark-scale tests: each has a smaller version of its check in the default run.
test-slow: $(VENV)/.installed
	$(PY) -m pytest -q tests -m slow

# The regression gate: LoCoMo conv-26 + conv-30 against the committed baseline, question by question: a
# metric fails when it drops by more than its tolerance and the paired test says so (experiments/ci-gate.toml).
# Its embeddings come from a cache of its own, filled by its own batches and threads (the vectors' last bits).
gate: $(VENV)/.installed
	OPENCLAW_LAB_CACHE=$(abspath .cache/gate) $(VENV)/bin/openclaw-lab run experiments/ci-gate.toml --results results/ci
	$(VENV)/bin/openclaw-lab check results/ci/ci-gate --baseline results/baselines/locomo-ci.json

# A local LLM server for the QA stage on 127.0.0.1:8080 (llama.cpp's, SmolLM2-135M-Instruct; MODEL= another
# packaged model, see `openclaw-lab llm serve --help`); Ctrl-C stops it.
MODEL ?= smollm2-135m
llm: $(VENV)/.installed
	$(VENV)/bin/openclaw-lab llm serve --model $(MODEL) --port 8080

lab: $(VENV)/.installed
	$(VENV)/bin/jupyter lab notebooks/

# The documentation site: `make docs` serves it with live reload; `make docs-build` builds it as CI does (a broken
# link, a missing file of the repository or an unknown API reference fails the build).
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

docs-build: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

bench: $(VENV)/.installed
	for script in benchmarks/bench_*.py; do $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) .cache site
