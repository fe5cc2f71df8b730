# kbsim: every target installs what it needs into .venv from PyPI first (kbsim with every extra, and dev).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.kbsim-installed

.PHONY: reproduce test test-fast lint bench figures docs clean install conformance

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# setuptools' build backend warns of every editable install (folders named like the package); nothing to act on
	PYTHONWARNINGS='ignore:Editable installation' $(PY) -m pip install --quiet -e '.[all,dev]'
	@touch $(STAMP)

install: $(STAMP)

## make reproduce: install, run the reference study, write results, figures and pages, run the notebooks
reproduce: $(STAMP)
	$(PY) -m kbsim run reference --out results
	$(PY) -m kbsim figures
	$(PY) scripts/execute_notebooks.py

## make figures: run missing results (cached) and write figures/, figures/README.md, docs/results.md
figures: $(STAMP)
	$(PY) -m kbsim figures $(if $(QUICK),--quick)

## make test: install (with dev extras) and run the whole suite
test: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadgroup -q

## make test-fast: the suite without the tests marked slow (notebooks, coverage, whole pipelines), for a quick loop
test-fast: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadgroup -q -m "not slow"

## make conformance: the official MCP conformance suite (pinned) against kbsim serve --http; the suite and a
## Node 22 come from the npm registry into .conformance/ (needs npm; not part of make test: it needs Node)
CONFORMANCE := .conformance
$(CONFORMANCE)/.installed:
	mkdir -p $(CONFORMANCE)
	cd $(CONFORMANCE) && printf '{"private": true}\n' > package.json && \
		npm install --no-audit --no-fund --loglevel=error node@22.23.3 @modelcontextprotocol/conformance@0.1.16
	$(CONFORMANCE)/node_modules/.bin/node --version
	@touch $@

conformance: $(STAMP) $(CONFORMANCE)/.installed
	$(PY) scripts/mcp_conformance.py --suite $(CONFORMANCE)/node_modules/.bin/conformance

## make docs: the API reference from the docstrings (pdoc), into build/api/ (not committed)
docs: $(STAMP)
	$(PY) scripts/api_docs.py build/api

## make lint: ruff, and mypy over kbsim/ held to the errors still known (scripts/check_types.py)
lint: $(STAMP)
	$(VENV)/bin/ruff check kbsim tests benchmarks validation scripts setup.py
	$(PY) scripts/check_types.py

## make bench: benchmarks, results written to benchmarks/RESULTS.md
bench: $(STAMP)
	$(PY) benchmarks/bench_store.py
	$(PY) benchmarks/bench_day.py
	$(PY) benchmarks/bench_sqlite.py
	$(PY) benchmarks/bench_study.py
	$(PY) benchmarks/bench_sweep.py
	$(PY) benchmarks/bench_own_kb.py
	$(PY) benchmarks/bench_index_memory.py
	$(PY) benchmarks/bench_template_memory.py
	$(PY) benchmarks/bench_day_memory.py
	$(PY) benchmarks/bench_day.py --sections million
	$(PY) benchmarks/bench_day_memory.py --scale 2500
	$(PY) benchmarks/bench_figures.py
	$(PY) benchmarks/bench_fit.py
	$(PY) benchmarks/bench_commands.py --only install,reproduce

clean:
	rm -rf $(VENV) .conformance .pytest_cache .hypothesis .ruff_cache .mypy_cache build *.egg-info
