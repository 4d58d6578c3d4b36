# Ballast for Python — developer entry points. `make test` is what CI runs (through .ci/run).
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin

.PHONY: help venv envtest e2e-tools admission-load real-node-tools test-real-node helm karpenter-oracle generate lint typecheck unit packaging integration test-e2e test-karpenter test test-load audit dev demo dev-cluster bench kind-deploy clean

HACK_SCRIPTS := hack/gen-manifests hack/audit hack/record-builtin-schemas hack/gen-builtin-models hack/simulate-docs
KIND_CLUSTER ?= ballast-dev
KIND_IMAGE ?= ballast:dev
# Worker processes for the integration and e2e suites (pytest-xdist, whole modules per worker, each worker with its
# own control plane); the tests marked `alone` run afterwards, one at a time. 0: one process, everything in order.
INTEGRATION_WORKERS ?= 2
E2E_WORKERS ?= 2
# Worker processes for the unit suite (pytest-xdist); 0: one process.
UNIT_WORKERS ?= 2
# Suites a caller has just run and need not run again (.ci/run runs lint, typecheck, unit and packaging while the
# tools build): `make test ALREADY_PASSED="lint typecheck unit packaging"`.
ALREADY_PASSED ?=
TEST_SUITES := lint typecheck unit packaging integration test-e2e

# Which half of a parallel suite to run: all, shared (the workers' part) or alone (the serial part). .ci/run runs
# integration's shared half while the e2e tools still build, and its alone half once nothing else runs.
TEST_PART ?= all

# $(call in_test_network,WORKERS,PYTEST ARGUMENTS): pytest inside the private test network — in WORKERS processes
# for the tests that can share the machine, then the `alone` tests serially (TEST_PART picks one half); exit code 5
# (nothing selected) is no failure for either half. WORKERS 0: one process, everything in order.
define in_test_network
	if [[ "$(1)" -gt 0 ]]; then \
	  if [[ "$(TEST_PART)" != alone ]]; then \
	    rc=0; $(BIN)/ballast-envtest netns -- $(PY) -m pytest -n $(1) --dist loadfile -m "not alone" $(2) || rc=$$?; \
	    [[ $$rc -eq 0 || $$rc -eq 5 ]] || exit $$rc; \
	  fi; \
	  if [[ "$(TEST_PART)" != shared ]]; then \
	    rc=0; $(BIN)/ballast-envtest netns -- $(PY) -m pytest -m alone $(2) || rc=$$?; \
	    [[ $$rc -eq 0 || $$rc -eq 5 ]] || exit $$rc; \
	  fi; \
	else \
	  $(BIN)/ballast-envtest netns -- $(PY) -m pytest $(2); \
	fi
endef

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,simulate]'
	touch $@

venv: $(VENV)/.installed ## create .venv with the project and its dev tools

envtest: venv ## build (or find) the control-plane binaries; prints their directory
	hack/setup-envtest

e2e-tools: venv admission-load ## build (or find) kwok and metrics-server v0.8.0, and Karpenter v1.15.0's kwok provider (GOTOOLCHAIN=go1.27.3), for the e2e mini-cluster; and hack/admission-load
	$(BIN)/ballast-envtest tool kwok
	$(BIN)/ballast-envtest tool metrics-server
	$(BIN)/ballast-envtest tool karpenter

admission-load: ## build (or find) hack/admission-load, the admission load generator (the machine's Go, standard library only)
	hack/setup-admission-load

real-node-tools: venv ## the e2e real node: Debian's runc, CNI plugins, busybox-static and gcc when missing; kubelet and containerd v2.4.2 built from their Go modules; the pause, busybox and loadgen images
	hack/setup-real-node

helm: venv ## build (or find) helm v3.22.0 for the chart tests; prints its path
	hack/setup-helm

karpenter-oracle: ## build (or find) hack/karpenter-oracle (Karpenter v1.15.0's own scoring) for the consolidation tests
	hack/setup-karpenter-oracle

generate: venv ## regenerate config/ from the code (CRDs, RBAC, webhook configurations, the chart's copies) and the built-in models from the recorded OpenAPI
	hack/gen-manifests
	hack/gen-builtin-models

lint: venv ## ruff: lint and formatting
	$(BIN)/ruff check . $(HACK_SCRIPTS)
	$(BIN)/ruff format --check . $(HACK_SCRIPTS)

typecheck: venv ## mypy --strict over the package and the tests
	$(BIN)/mypy
	$(BIN)/mypy docs/examples/cronjob/tutorial  # a project of its own: its modules are tutorial.*
	for script in $(HACK_SCRIPTS); do $(BIN)/mypy $$script || exit 1; done  # each is its own __main__

unit: venv ## unit tests (no binaries, no namespace), in UNIT_WORKERS processes
	$(PY) -m pytest $(if $(filter 0,$(UNIT_WORKERS)),,-n $(UNIT_WORKERS)) tests/unit

packaging: venv envtest ## the built wheel in a clean venv: console scripts and the pytest plugin
	$(PY) -m pytest tests/packaging

integration: venv envtest helm admission-load ## integration tests on the real kube-apiserver (and docs/examples/cronjob), inside the private test network
	$(call in_test_network,$(INTEGRATION_WORKERS),tests/integration docs/examples/cronjob)

test-e2e: venv envtest e2e-tools real-node-tools ## the e2e suite on the mini-cluster (kube-scheduler, kwok, metrics-server; one real kubelet + containerd node), in the test network
	$(call in_test_network,$(E2E_WORKERS),tests/e2e)

test-real-node: venv envtest e2e-tools real-node-tools ## only the e2e scenarios on the real node (part of test-e2e; ~5 min)
	$(BIN)/ballast-envtest netns -- $(PY) -m pytest tests/e2e -m real_node

test-karpenter: venv envtest e2e-tools ## only the e2e scenario side by side with Karpenter v1.15.0 (part of test-e2e; ~1.5 min)
	$(BIN)/ballast-envtest netns -- $(PY) -m pytest tests/e2e -m karpenter

test: $(filter-out $(ALREADY_PASSED),$(TEST_SUITES)) ## everything CI runs (less the suites in ALREADY_PASSED)
	@echo "make test: passed $(filter-out $(ALREADY_PASSED),$(TEST_SUITES))$(if $(filter $(TEST_SUITES),$(ALREADY_PASSED)), (already passed: $(filter $(TEST_SUITES),$(ALREADY_PASSED))))"

test-load: venv envtest e2e-tools ## the operator at scale (1,000 enrolled among 20,000 kwok pods; the store primary killed under 1,000; ~20 min): figures in RELIABILITY.md
	$(BIN)/ballast-envtest netns -- $(PY) -m pytest tests/load --timeout=1800

audit: venv ## pip-audit over `pip freeze`; fails on a vulnerability fixed inside pyproject's range (AUDIT_FLAGS=--unreachable-ok)
	$(PY) hack/audit $(AUDIT_FLAGS)

dev: venv envtest ## the operator for real on a local control plane: profiles, a cold start, a resize (Ctrl-C stops)
	$(PY) -m ballast.internal.cmd.dev

demo: venv ## the fleet simulator: 3 days of 40 apps × 5 namespaces under Ballast, a VPA baseline and as written → demo/
	$(BIN)/ballast simulate --out demo

dev-cluster: venv envtest ## start a local etcd + kube-apiserver and print its KUBECONFIG (Ctrl-C stops it)
	$(BIN)/ballast-envtest run

bench: venv envtest ## benchmarks (not part of `make test`); figures go to benchmarks/RESULTS.md
	$(PY) benchmarks/envtest_start.py
	$(PY) benchmarks/cli_start.py
	$(PY) benchmarks/workqueue.py
	$(PY) benchmarks/store_cycle.py
	$(PY) benchmarks/informer.py
	$(PY) benchmarks/leader_renew.py
	$(PY) benchmarks/leader_stepdown.py
	$(PY) benchmarks/collection.py
	$(PY) benchmarks/balancer.py
	$(PY) benchmarks/consolidation.py
	$(PY) benchmarks/webhook.py
	$(PY) benchmarks/dev_start.py
	$(PY) benchmarks/typed_decode.py

kind-deploy: helm ## build the image, `kind load` it into $(KIND_CLUSTER), install the chart (local-testing preset)
	docker build -t $(KIND_IMAGE) .
	kind load docker-image $(KIND_IMAGE) --name $(KIND_CLUSTER)
	"$$(hack/setup-helm | tail -n 1)" upgrade --install ballast config/helm/ballast \
	  --namespace ballast-system --create-namespace \
	  -f config/helm/ballast/presets/local-testing.yaml \
	  --set image.repository=$(firstword $(subst :, ,$(KIND_IMAGE))) \
	  --set image.tag=$(lastword $(subst :, ,$(KIND_IMAGE))) \
	  --set image.pullPolicy=Never --wait --timeout 5m

clean: ## remove build outputs and caches (not the control-plane cache under ~/.cache/ballast)
	rm -rf build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache .hypothesis
