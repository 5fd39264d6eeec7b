# The two commands a newcomer needs:  `make demo`  and  `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
export DJANGO_SETTINGS_MODULE := rollouts_ui.settings

.PHONY: install demo test lint typecheck compile uncompile pytest services

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# Embedded mode: simulator, watcher and web server in one process, SQLite, no other services. Prometheus
# (live analysis charts) is installed the way `make test` installs its packages, when run as root.
# Choose scenarios with: make demo DEMO_ARGS="--scenario healthy-canary --scenario blue-green"
demo: install
	bash scripts/system-packages.sh demo
	LOG_FORMAT=$${LOG_FORMAT:-plain} $(PY) manage.py demo $(DEMO_ARGS)

# Everything CI runs: lint, types and the whole suite against the real PostgreSQL and Redis. Installs the
# missing Debian packages first (chromium, prometheus, kubectl, redis, postgresql: needs root). The suite
# runs against the compiled domain, as the image does, and the domain's own tests once more without it.
test: install
	bash scripts/system-packages.sh
	bash scripts/services.sh
	$(MAKE) lint
	$(MAKE) -j2 typecheck compile  # a minute of one core each
	DOMAIN_COMPILED=require $(MAKE) pytest
	DOMAIN_COMPILED=off $(MAKE) pytest PYTEST_ARGS="$(PYTEST_ARGS) $(INTERPRETED_TESTS)"

lint:
	$(VENV)/bin/ruff check .

typecheck:
	$(VENV)/bin/mypy rollouts_ui dashboard kubesim

# The domain and the watcher's cache compiled with mypyc into compiled/ (dashboard/compiled.py): the
# watcher's CPU per change about a tenth less. Every process loads it while it matches the sources (and
# `make compile` builds again for another mypy); `make uncompile` removes it.
compile: install
	$(PY) scripts/compile.py

uncompile:
	$(PY) scripts/compile.py clean

# What runs compiled (dashboard/compiled.py) is tested once more from its sources: the domain, the action
# plans, and the watcher's cache, fingerprints and kept text.
INTERPRETED_TESTS := tests/domain tests/actions tests/flagger tests/test_compiled.py tests/test_jsontext.py \
	tests/kube/test_cache.py tests/kube/test_projection.py tests/kube/test_fingerprint.py \
	tests/kube/test_handoff.py tests/kube/test_watcher_memory.py

# Two pytest-xdist workers, each given whole test files (a module's server, simulator and browser start
# once), the files with slow tests first (tests/conftest.py orders them), and its own test database and bus
# prefix: most of the suite waits on servers and browsers, so two workers nearly halve it on two cores.
# Serially, in one process: make pytest PYTEST_WORKERS=0
PYTEST_WORKERS ?= 2
pytest:
	DATABASE_URL=$${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/rollouts_ui} \
	REDIS_URL=$${TEST_REDIS_URL:-redis://127.0.0.1:6379/0} \
	$(VENV)/bin/pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)
