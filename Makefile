# The two commands of the README (run, test) set up everything on a fresh machine;
# `make docs` serves the documentation site at http://127.0.0.1:8000/.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint docs screenshots

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,docs]"
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/hitboard serve --demo

test: $(STAMP)
	bash scripts/ensure-browser.sh
	bash scripts/ensure-wire.sh
	$(VENV)/bin/ruff check .
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir $(VENV)/site
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

# Every picture of README.md and docs/, made again from the demo (headless Chromium).
screenshots: $(STAMP)
	bash scripts/ensure-browser.sh
	$(PY) scripts/screenshots.py
