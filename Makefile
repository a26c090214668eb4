# Gatehouse developer commands. Run "make help" for the list.

GO        ?= go
BIN       ?= bin/gatehouse
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/gatehouse/gatehouse/bootstrap.Version=$(VERSION)
# Set GATEHOUSE_TEST_POSTGRES_URL to run the PostgreSQL suites too, e.g.
# postgres://postgres@127.0.0.1:5432/test?sslmode=disable
export GATEHOUSE_TEST_POSTGRES_URL
# Set GATEHOUSE_TEST_REDIS_URL to run the Redis suites too, e.g.
# redis://127.0.0.1:6379/15 (a database of the tests' own)
export GATEHOUSE_TEST_REDIS_URL

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# exec: the shell becomes the service, so Ctrl-C and a SIGTERM to make
# (which make passes on to its child) reach it, and it stops cleanly.
.PHONY: run
run: build ## build, then run the service on embedded SQLite in ./data (no server to install)
	exec $(BIN) serve

.PHONY: build
build: ## build bin/gatehouse
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/gatehouse

# make test keeps every test's events (go test -json) here, for make test-report.
TEST_JSON ?= bin/test.json

.PHONY: test
test: build ## run every test, with the race detector; the PostgreSQL and Redis suites when GATEHOUSE_TEST_POSTGRES_URL and GATEHOUSE_TEST_REDIS_URL are set
	@mkdir -p $(dir $(TEST_JSON))
	@# The process tests of every package run the binary make build just made.
	GATEHOUSE_TEST_BINARY=$(abspath $(BIN)) $(GO) tool gotestsum --format standard-quiet --jsonfile $(TEST_JSON) -- -race -count=1 -timeout 60m ./...

.PHONY: test-report
test-report: ## the slowest packages and tests of the last make test (from bin/test.json)
	$(GO) run ./cmd/testreport $(TEST_JSON)

.PHONY: test-short
test-short: ## the fast loop: no race detector; skips the PostgreSQL, Node client, browser, timing and scale suites
	$(GO) test -short -count=1 ./...

.PHONY: bench
bench: ## Go benchmarks for the hot paths and the console pages, then a load run on loopback (rps, p50, p99)
	$(GO) test -run '^$$' -bench 'GetSession|SignIn|Lookup|ListMembers|ListUsers|OrganizationList|ConsolePages' -benchmem ./test/... ./adapters/gormstore/
	$(GO) run ./cmd/loadtest

.PHONY: bench-replicas
bench-replicas: ## get-session and ok through HAProxy in front of 1, then 3, replicas on PostgreSQL (wrk; scripts/bench-replicas.sh)
	scripts/bench-replicas.sh

.PHONY: clients
clients: ## install the pinned better-auth client for the Node suite (npm ci in test/clients)
	cd test/clients && npm ci --no-audit --no-fund

.PHONY: lint
lint: archcheck ## gofmt, go vet, go mod tidy -diff, wire diff, the architecture rules, staticcheck, gosec, govulncheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(GO) tool wire diff ./bootstrap/ || (echo "bootstrap/wire_gen.go is stale: run make generate" && exit 1)
	$(GO) tool staticcheck ./...
	@# No rule is excluded. Test code is not scanned (no -tests, and not the
	@# black-box tests' harness, test/harness): it holds fixture passwords,
	@# starts the built binary and writes golden files on purpose, and never
	@# ships. Every #nosec must name its rule and say why.
	$(GO) tool gosec -quiet -nosec-require-rules -nosec-require-justification -exclude-dir=test/harness ./...
	@$(MAKE) --no-print-directory vulncheck

# The Go vulnerability database govulncheck reads: vuln.go.dev, or an offline
# copy as file:///abs/dir (vuln.go.dev/vulndb.zip, unzipped).
VULNDB := $(or $(GATEHOUSE_VULNDB),https://vuln.go.dev)

.PHONY: vulncheck
vulncheck: ## govulncheck against GATEHOUSE_VULNDB; skipped, not failed, when the database is unreachable
	@case '$(VULNDB)' in file://*) ;; *) \
	  curl -fsS --head --max-time 5 -o /dev/null '$(VULNDB)/index/db.json.gz' 2>/dev/null || { \
	    echo "govulncheck skipped: vulnerability database unreachable (set GATEHOUSE_VULNDB=file:///… for an offline copy)"; exit 0; }; \
	esac; echo "$(GO) tool govulncheck -db $(VULNDB) ./..."; $(GO) tool govulncheck -db '$(VULNDB)' ./...

# The rules are listed in cmd/archcheck's doc comment (go run ./cmd/archcheck -list).
# ARCHCHECK_RULES picks some of them, e.g. make archcheck ARCHCHECK_RULES=1,2,3.
ARCHCHECK_RULES ?= all

.PHONY: archcheck
archcheck: ## the architecture rules: layer imports, contract packages, path tests, wire codes, driven adapters, HTML surfaces apart from the contracts
	$(GO) run ./cmd/archcheck -rule $(ARCHCHECK_RULES)

.PHONY: generate
generate: ## regenerate bootstrap/wire_gen.go
	$(GO) tool wire ./bootstrap/

.PHONY: openapi
openapi: ## regenerate the golden contracts in test/contracts/testdata/openapi
	$(GO) test -count=1 ./test/contracts/ -run TestContracts_golden -update

.PHONY: migrate
migrate: ## apply pending migrations to GATEHOUSE_DATABASE_URL (default: SQLite in ./data)
	$(GO) run ./cmd/gatehouse migrate

.PHONY: docker
docker: ## build the container image gatehouse:$(VERSION)
	docker build --build-arg VERSION=$(VERSION) -t gatehouse:$(VERSION) .

.PHONY: clean
clean: ## remove build output (keeps ./data)
	rm -rf bin
