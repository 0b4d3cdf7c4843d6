# The two commands of the README:  make ask   (run the agent)   and   make test   (all checks).
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-stamp
Q ?= 下書きの投稿を一覧で見せて
# CDK synth (jsii) runs on Node >= 20; Node 20 works but is past its end of life, and jsii then prints
# a banner per node process. Silenced for synth and the tests (override by setting it yourself).
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION ?= 20
# mypy keeps its cache beside the user's other caches, not in the checkout, one per checkout path: a
# fresh clone where an earlier one was (CI's checkout) checks only the files that differ from the last
# check (mypy compares each file's hash and its options), instead of ~70 s of one core for all of them
# and their dependencies. Per path, because mypy's cache records the virtualenv's absolute paths: two
# checkouts sharing one cache would each find it stale. Caches unused for two weeks are removed.
MYPY_CACHE_ROOT := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/wp-agent/mypy
CHECKOUT_KEY := $(shell printf '%s' '$(subst ','\'',$(CURDIR))' | sha256sum | cut -c1-16)
export MYPY_CACHE_DIR ?= $(MYPY_CACHE_ROOT)/$(or $(CHECKOUT_KEY),shared)
# Python keeps compiled modules (__pycache__, ignored by git) even where the environment says not to
# (PYTHONDONTWRITEBYTECODE=1 on CI's machine): otherwise every process of the run — each xdist worker,
# each `wp-agent` and nested pytest — compiles the package, the tests and the third-party modules
# (installed without bytecode) from source again, minutes of CPU in all.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup ask test tests lint unit synth bench

$(STAMP): pyproject.toml constraints.txt scripts/setup.sh scripts/install-wordpress.sh layers/core/wp_agent/sandbox/wp-cli.sha512 layers/core/wp_agent/sandbox/release.py tests/contract_client/package-lock.json
	./scripts/setup.sh
	touch $(STAMP)

setup: $(STAMP)

## Run the agent once (sandbox WordPress by default; set WP_CLI_MODE=local|ssh for a real site).
## Q is passed single-quoted and unexpanded: a $ or ` in an instruction reaches the agent as typed.
ask: setup
	WP_CLI_MODE=$${WP_CLI_MODE:-sandbox} $(BIN)/wp-agent ask '$(subst ','\'',$(value Q))'

## Everything CI runs: lint, types, all tests. The lint (mostly mypy, one core) runs beside the tests.
## The tests mostly wait on sshd, PHP and MariaDB, so they run in TEST_WORKERS processes (pytest-xdist);
## TEST_WORKERS=0 runs them in one process. Tests of one xdist_group share a worker (loadgroup). The ten
## slowest are listed at the end: where the time budget goes.
TEST_WORKERS ?= 3
test: setup
	@$(MAKE) --no-print-directory -j2 lint tests

tests: setup
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=10

lint: setup
	@-mkdir -p '$(MYPY_CACHE_DIR)' 2>/dev/null && touch '$(MYPY_CACHE_DIR)' 2>/dev/null; \
	  find '$(MYPY_CACHE_ROOT)' -mindepth 1 -maxdepth 1 -type d -mtime +14 ! -name shared -exec rm -rf {} + 2>/dev/null; true
	$(BIN)/lint-imports
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy $(wildcard layers/core functions infra tests bench)

## Synthesise the CDK app to cdk.out (no AWS account needed):
##   make synth BACKEND_PRINCIPALS=arn:aws:iam::123456789012:role/ArgoNoteBackend
synth: setup
	CDK_CONTEXT_JSON='{"backendPrincipals": "$(BACKEND_PRINCIPALS)"}' $(BIN)/python -m infra.app

bench: setup
	for script in bench/*.py; do $(BIN)/python "$$script" || exit 1; done
