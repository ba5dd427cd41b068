# Two commands for a fresh clone:  `make lab` opens the course, `make test` runs the tests.
# Both create .venv at the repository root with Python 3.13 (the offline engine needs it).

VENV   := .venv
PY     := $(VENV)/bin/python
# First Python 3.13 found: the pyenv shim (selected by .python-version), pyenv's install, the system one.
PYTHON ?= $(shell for p in python3.13 $$HOME/.pyenv/versions/3.13*/bin/python3.13 /usr/local/bin/python3.13 /usr/bin/python3.13; do \
            $$p -c 'import sys; assert sys.version_info[:2] == (3, 13)' >/dev/null 2>&1 && echo $$p && break; done)
PORT   ?= 8888

.PHONY: lab test check clean

$(PY):
	@test -n "$(PYTHON)" || { echo "Python 3.13 not found. Install it (e.g. 'pyenv install 3.13') or run: make PYTHON=/path/to/python3.13 ..."; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.lab: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[lab]'
	@touch $@

$(VENV)/.test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $@ $(VENV)/.lab

lab: $(VENV)/.lab
	$(PY) -m workbook check
	$(PY) -m workbook prepare
	$(PY) -m jupyter lab --port=$(PORT) $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/00_start_here.ipynb

CHP_VERSION := 5.3.0

test: $(VENV)/.test
	@command -v configurable-http-proxy >/dev/null 2>&1 || npm install -g --silent configurable-http-proxy@$(CHP_VERSION)
	$(PY) -m workbook check
	$(PY) -m ruff check workbook tests benchmarks
	$(PY) -m ruff format --check workbook tests benchmarks
	$(PY) -m mypy
	$(PY) -m pytest

check: $(VENV)/.lab
	$(PY) -m workbook check

clean:
	rm -rf $(VENV) .pytest_cache
