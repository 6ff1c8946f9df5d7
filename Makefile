# Poolscope: the way in. `make demo` to see it, `make test` to check it.
# Every target works from a fresh clone: it installs what it needs first (quick when done).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# The Python .venv is built with: Debian's python3 when it fits, else python3 (scripts/python.sh).
PYTHON ?= $(shell bash scripts/python.sh)
VENV := .venv
PY := $(CURDIR)/$(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
PYTEST_ARGS ?= -q
# Every test run prints its ten slowest tests.
DURATIONS ?= --durations=10
BENCH_ARGS ?=
FLEET_ARGS ?=

HAS_FRONTEND := $(wildcard frontend/package.json)
HAS_E2E := $(wildcard e2e/package.json)

# Stamp files make `install` a no-op until a lock file changes.
PY_STAMP := $(VENV)/.poolscope-installed
FE_STAMP := frontend/node_modules/.poolscope-installed
E2E_STAMP := e2e/node_modules/.poolscope-installed
INSTALL_STAMPS := $(PY_STAMP) \
	$(if $(wildcard frontend/package-lock.json),$(FE_STAMP)) \
	$(if $(wildcard e2e/package-lock.json),$(E2E_STAMP))

.PHONY: screenshots
.PHONY: help install install-backend install-frontend install-system demo test test-backend test-frontend test-e2e lint lint-backend \
	check lint-light test-lanes test-unit test-live test-dialects test-deploy \
	lint-frontend bench bench-fleet build size dist clean distclean contract lint-contract reference lint-reference lint-docs \
	prometheus-rules lint-prometheus-rules

help:
	@echo "make install       Python venv + pinned deps, npm ci for frontend/ and e2e/ (idempotent)"
	@echo "make install-system  Debian packages: mariadb-server, sysbench, chromium, ... (root)"
	@echo "make demo          sandbox MariaDB + load + dashboard at http://127.0.0.1:8000 (Ctrl-C stops all)"
	@echo "make check         day to day, a few minutes: ruff and the unit lane (no server, no deploy, no e2e)"
	@echo "make test          every lane at once: unit, live (MariaDB), dialects (PostgreSQL), deploy, frontend, e2e"
	@echo "make test-LANE     one lane: test-unit, test-live, test-dialects, test-deploy, test-frontend, test-e2e"
	@echo "make lint          generated contract, reference and rules up to date; docs links; ruff, ruff format --check, mypy; frontend lint + typecheck"
	@echo "make contract      regenerate the API contract: OpenAPI document + the UI's types (commit the result)"
	@echo "make reference     regenerate docs/reference/ from the code (commit the result)"
	@echo "make prometheus-rules  regenerate deploy/prometheus/poolscope.rules.yml from the alert rules (commit it)"
	@echo "make build         frontend production build (frontend/dist)"
	@echo "make screenshots   docs/images/*.png from a running make demo (POOLSCOPE_DEMO_PORT if not 8000)"
	@echo "make dist          sdist + wheel carrying the built UI, in dist/ (pip install dist/poolscope-*.whl)"
	@echo "make bench         poller overhead benchmark (python -m poolscope_bench), then the fleet part"
	@echo "make bench-fleet   only the fleet part: FLEET_ARGS='--sizes 10,100 --seconds 30'"
	@echo "make clean         remove build output, caches and .demo/ (distclean: also .venv, node_modules)"

install: $(INSTALL_STAMPS)

install-backend: $(PY_STAMP)

install-frontend: $(PY_STAMP) $(if $(wildcard frontend/package-lock.json),$(FE_STAMP))

# Quick no-op when everything is present; set POOLSCOPE_SKIP_SYSTEM_INSTALL=1 to skip.
install-system:
	@bash scripts/install-system.sh

# The product, then the development harness (backend/dev: sandboxes, load, replay, bench), which
# is never shipped.
$(PY_STAMP): backend/requirements.lock backend/pyproject.toml backend/dev/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet -r backend/requirements.lock
	$(PIP) install --quiet --no-deps -e 'backend[dev]'
	$(PIP) install --quiet --no-deps -e backend/dev
	@touch $@

$(FE_STAMP): frontend/package-lock.json frontend/package.json
	cd frontend && npm ci --no-audit --no-fund
	@touch $@

$(E2E_STAMP): e2e/package-lock.json e2e/package.json
	cd e2e && npm ci --no-audit --no-fund
	@touch $@

demo:
	bash scripts/demo.sh

# The lanes: the backend suite's four (backend/tests/conftest.py marks each test with one), the
# frontend's unit tests and the e2e suite. `make test` builds the UI once, then runs TEST_JOBS
# lanes at a time, longest first: most tests wait for a server, a load or a window rather than for
# a core, so their waits overlap; more at once starved two cores (0300 in docs/decisions/). Each
# lane prints its ten slowest tests and its time, its output whole once it ends.
TEST_JOBS ?= 3
LANES := test-e2e test-live test-deploy test-dialects test-unit test-frontend
# A lane's own time: wall, and the CPU of everything it ran (servers and browsers included).
TIMED = TIMEFORMAT='$@: %R s wall, %U s user + %S s system CPU'; time
# Workers within a backend lane (pytest-xdist); a module's tests stay on one worker, with the
# sandboxes and servers it starts. 1: none.
UNIT_WORKERS ?= 2
LANE_WORKERS ?= 2
workers = $(if $(filter-out 0 1,$(1)),-n $(1) --dist loadfile)

# `make test` installs and builds first, so its lanes need nothing more (LANES_READY) and start in
# the order above; a lane run alone (`make test-live`) sees to what it needs itself. A failed lane
# does not stop the others (--keep-going): one run says every lane's result.
test: install-system install build
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --keep-going --output-sync=target test-lanes LANES_READY=1
needs = $(if $(LANES_READY),,$(1))

test-lanes: $(LANES)

test-backend: test-unit test-live test-dialects test-deploy

test-unit: $(call needs,$(PY_STAMP))
	@$(TIMED) (cd backend && $(PY) -m pytest $(PYTEST_ARGS) $(DURATIONS) $(call workers,$(UNIT_WORKERS)) -m unit)

test-live test-dialects: test-%: $(call needs,install-system $(PY_STAMP))
	@$(TIMED) (cd backend && $(PY) -m pytest $(PYTEST_ARGS) $(DURATIONS) $(call workers,$(LANE_WORKERS)) -m $*)

# One worker: its image builds and Prometheus servers want the cores, and its tests share one `make dist`.
test-deploy: $(call needs,install-system $(PY_STAMP))
	@$(TIMED) (cd backend && $(PY) -m pytest $(PYTEST_ARGS) $(DURATIONS) -m deploy)

# Day to day, in a few minutes: lint that needs no generation step, and the unit lane. Alone, the
# unit lane takes more workers than beside the other lanes: its tests wait for in-process servers
# more than they compute (0300 in docs/decisions/).
CHECK_WORKERS ?= 4
check: lint-light
	@$(MAKE) --no-print-directory test-unit UNIT_WORKERS=$(CHECK_WORKERS)

lint-light: $(PY_STAMP)
	$(VENV)/bin/ruff check backend
	$(VENV)/bin/ruff format --check backend

test-frontend: $(call needs,install)
ifneq ($(HAS_FRONTEND),)
	@$(TIMED) (cd frontend && npm test)
else
	@echo "test-frontend: no frontend/package.json, skipped"
endif

test-e2e: $(call needs,install-system install build)
ifneq ($(HAS_E2E),)
	@$(TIMED) (cd e2e && POOLSCOPE_E2E_SKIP_BUILD=1 npm test)
else
	@echo "test-e2e: no e2e/package.json, skipped"
endif

lint: lint-contract lint-reference lint-prometheus-rules lint-docs lint-backend lint-frontend

# The generated contract: the app's OpenAPI document, the UI's types made
# from it by openapi-typescript, and every other frontend/src/api/*.gen.ts (gen-metrics, when
# this Makefile has it; gen-variables). Committed, so the UI and e2e build without a backend.
GENERATED := frontend/src/api/openapi.json 'frontend/src/api/*.gen.ts'

contract: install-frontend
	$(PY) scripts/gen-openapi.py
	cd frontend && npm run --silent gen:api
	@if $(MAKE) -n gen-metrics >/dev/null 2>&1; then $(MAKE) --no-print-directory gen-metrics; fi
	$(PY) scripts/gen-variables.py

# Regenerate, then fail when that changed a committed file or made a new one.
lint-contract: contract
	@if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		echo "lint-contract: not a git checkout, drift not checked"; exit 0; fi; \
	new="$$(git ls-files --others --exclude-standard -- $(GENERATED))"; \
	if ! git diff --quiet -- $(GENERATED) || [ -n "$$new" ]; then \
		git --no-pager diff --stat -- $(GENERATED); [ -z "$$new" ] || echo "new: $$new"; \
		echo "lint-contract: the generated contract is out of date: run 'make contract' and commit the result" >&2; \
		exit 1; fi

# docs/reference/ from the code (scripts/gen-reference.py): settings, metrics, rules, API shapes.
reference: $(PY_STAMP)
	$(PY) scripts/gen-reference.py

# The reference is what the code says, and every setting, rule and metric has a description.
lint-reference: $(PY_STAMP)
	@$(PY) scripts/gen-reference.py --check

# deploy/prometheus/poolscope.rules.yml from the alert rules' declarations (scripts/gen-prometheus-rules.py).
prometheus-rules: $(PY_STAMP)
	$(PY) scripts/gen-prometheus-rules.py

lint-prometheus-rules: $(PY_STAMP)
	@$(PY) scripts/gen-prometheus-rules.py --check

# Links between documents, `docs/` paths named in the code, page sizes (scripts/check-docs.py).
lint-docs:
	@python3 scripts/check-docs.py

lint-backend: $(PY_STAMP)
	$(VENV)/bin/ruff check backend
	$(VENV)/bin/ruff format --check backend
	cd backend && $(CURDIR)/$(VENV)/bin/mypy poolscope dev/poolscope_dev dev/poolscope_bench

lint-frontend: install
ifneq ($(HAS_FRONTEND),)
	cd frontend && npm run lint
	cd frontend && npm run typecheck
else
	@echo "lint-frontend: no frontend/package.json, skipped"
endif
ifneq ($(HAS_E2E),)
	cd e2e && npm run typecheck
endif

bench: $(PY_STAMP)
	$(PY) -m poolscope_bench $(BENCH_ARGS)
	$(PY) -m poolscope_bench fleet $(FLEET_ARGS)

# One `poolscope serve` polling 10 / 100 / 300 / 1000 targets over 4 sandboxes.
bench-fleet: $(PY_STAMP)
	$(PY) -m poolscope_bench fleet $(FLEET_ARGS)

# The UI's metric names from the backend's catalog (scripts/gen-metrics.py; --check: drift only).
.PHONY: gen-metrics
gen-metrics: $(PY_STAMP)
	$(PY) scripts/gen-metrics.py

# The UI is built when a source changed since the last build, so `make test`, `make dist` and the
# e2e suite share one build.
UI_SOURCES := $(shell find frontend/src frontend/public -type f 2>/dev/null) \
	$(wildcard frontend/index.html frontend/vite.config.ts frontend/tsconfig*.json frontend/package.json)
UI_BUILT := frontend/dist/index.html

build: install-frontend $(if $(HAS_FRONTEND),$(UI_BUILT))

$(UI_BUILT): $(UI_SOURCES) $(FE_STAMP)
	cd frontend && npm run build
	@touch $@

# Wheel + sdist with the UI inside (scripts/dist.sh); DIST=dir to put them elsewhere.
DIST ?= dist
dist: build
	PYTHON=$(PY) bash scripts/dist.sh $(DIST)

# The documentation's screenshots (docs/images/), taken in Debian's chromium from a running `make demo`:
# the overview, the target page during a stall, the alerts page and the offline report, both themes.
screenshots: install
	cd e2e && POOLSCOPE_SCREENSHOTS_URL=http://127.0.0.1:$${POOLSCOPE_DEMO_PORT:-8000} npx playwright test -c screenshots.config.ts

# Bundle size budget, when the frontend defines one (npm run size).
size: install-frontend
ifneq ($(HAS_FRONTEND),)
	@$(MAKE) --no-print-directory build
	@if (cd frontend && node -e "process.exit(require('./package.json').scripts?.size ? 0 : 1)"); \
	then cd frontend && npm run size; else echo "size: frontend has no 'size' script, skipped"; fi
endif

clean:
	@if [ -x $(PY) ] && [ -d .demo/mariadb ]; then $(PY) -m poolscope_dev.sandbox --dir .demo/mariadb --stop; fi
	rm -rf .demo frontend/dist dist bench-results test-results playwright-report e2e/test-results \
		e2e/playwright-report e2e/.run .pytest_cache backend/.pytest_cache .mypy_cache backend/.mypy_cache \
		.ruff_cache backend/.ruff_cache
	find backend -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) frontend/node_modules e2e/node_modules
