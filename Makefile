# `make demo` and `make test` work on a machine with only python3: they create .venv first.
PYTHON ?= python3
# pyproject's optional dependencies to install; CI adds Open MPI's bindings: `make test EXTRAS=test,mpi`
EXTRAS ?= test
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(EXTRAS)

.PHONY: demo test bench venv clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/dist_fit_a_line/demo.py

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/executor_overhead.py

clean:
	rm -rf $(VENV) .pytest_cache
