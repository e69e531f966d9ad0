# Developer and CI entry points. `make test` is the one command that runs everything.

SHELL := /bin/bash
CARGO ?= cargo
NEXTEST_PROFILE ?= ci

.DEFAULT_GOAL := help

.PHONY: help run test test-quick lint fmt bench schemathesis sdk-check pg-stop clean-data

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

run: ## Build (release) and run the API server (configuration from CONSULAR_* variables)
	$(CARGO) run --release -p consular-app -- serve

test: ## Everything: fmt check, clippy, nextest (profile ci), README walk-through, schemathesis, sdk-check; stops the PG test cluster
	CARGO="$(CARGO)" NEXTEST_PROFILE="$(NEXTEST_PROFILE)" bash scripts/test.sh

test-quick: ## The nextest suite only (default profile; leaves the PG test cluster running)
	$(CARGO) nextest run --workspace

lint: ## Formatting check and clippy with warnings as errors
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt: ## Format the whole workspace
	$(CARGO) fmt --all

bench: ## Benchmarks: bearer check (micro), requests list/detail/submission and tokens vs pgbench, document uploads, appointments, the release morning rush, notification delivery, analytics views, read replicas (docs/benchmarks.md)
	$(CARGO) bench -p consular-application --bench bearer
	$(CARGO) bench -p consular-tests --bench requests_list
	$(CARGO) bench -p consular-tests --bench documents_upload
	$(CARGO) bench -p consular-tests --bench appointments
	$(CARGO) bench -p consular-tests --bench availability_stampede
	$(CARGO) bench -p consular-tests --bench appointments_rush
	$(CARGO) bench -p consular-tests --bench notifications
	$(CARGO) bench -p consular-tests --bench analytics
	$(CARGO) bench -p consular-tests --bench read_replicas

schemathesis: ## Property-based API tests against a throwaway server
	bash scripts/schemathesis.sh

sdk-check: ## Generated clients (Python, TypeScript) run a journey against a throwaway server; Spectral and Redocly lint the document
	bash scripts/sdk-check.sh

pg-stop: ## Stop the shared PostgreSQL cluster the tests start
	$(CARGO) run -q -p consular-testkit --bin pg-test-cluster -- stop

clean-data: ## Delete local run data (./data: default SQLite database and blobs)
	rm -rf -- ./data
