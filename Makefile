# hubctl — see README.md. Every target works on a fresh clone with only Go,
# make and PostgreSQL's binaries installed; make lint also needs Node.js (npx).

GO            ?= go
PKG           := github.com/hubctl/hubctl
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT        ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
# The commit date, not the wall clock, so two builds of one commit are identical.
BUILD_DATE    ?= $(shell git log -1 --format=%cI 2>/dev/null || echo unknown)
LDFLAGS       := -s -w \
                 -X $(PKG)/internal/buildinfo.Version=$(VERSION) \
                 -X $(PKG)/internal/buildinfo.Commit=$(COMMIT) \
                 -X $(PKG)/internal/buildinfo.Date=$(BUILD_DATE)
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# deploy/deploy_test.go builds this same helm to render the chart.
HELM          := helm.sh/helm/v3/cmd/helm@v3.22.0
# Not in make lint: its first build takes minutes (about 5 CPU-minutes);
# after that, checking takes well under a second.
GORELEASER    := github.com/goreleaser/goreleaser/v2@v2.17.0
# The OpenAPI linter, run through npx (Node.js); see internal/openapi/redocly.yaml.
REDOCLY       := @redocly/cli@2.77.0
CHART         := deploy/helm/hubctl
TEST_TIMEOUT  ?= 20m
BENCH_TIME    ?= 2s

.PHONY: all build test test-short chaos lint release-check fmt docs bench fuzz dev clean

all: build

build: ## the hubctl binary in ./bin
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/hubctl ./cmd/hubctl

test: ## every package, race detector on, against real PostgreSQL and kfake
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

test-short: ## quick loop without the race detector
	$(GO) test -count=1 -short ./...

# make test runs the chaos suite's short version (3 SIGKILL rounds, the
# scenarios side by side); this is the long one, scenarios one at a time.
CHAOS_ROUNDS ?= 20
chaos: ## the chaos suite against the real binary: SIGKILLs, database crash, broker restart, hung receiver, ordered delivery
	CHAOS_ROUNDS=$(CHAOS_ROUNDS) $(GO) test -count=1 -v -timeout 30m -run '^(TestChaos|TestRestart|TestDuplicate)' ./internal/chaos/

lint: ## gofmt, go vet, staticcheck, helm lint/template and the OpenAPI linter (pinned)
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@set -e; for values in $(CHART)/ci/*.yaml; do \
	  echo "helm lint and template with $$values"; \
	  $(GO) run $(HELM) lint --strict --quiet $(CHART) -f $$values; \
	  $(GO) run $(HELM) template hubctl $(CHART) -f $$values >/dev/null; \
	done
	npx --yes $(REDOCLY) lint --config internal/openapi/redocly.yaml internal/openapi/openapi.yaml

release-check: ## goreleaser check of goreleaser.yaml (pinned; slow to build the first time)
	$(GO) run $(GORELEASER) check

fmt:
	gofmt -w $$(git ls-files '*.go')

docs: build ## man pages, shell completions and docs/configuration.md (committed)
	bin/hubctl man --dir man --date "$$(git log -1 --format=%cI -- cmd internal/cli 2>/dev/null)"
	bin/hubctl config docs > docs/configuration.md
	mkdir -p completions
	bin/hubctl completion bash > completions/hubctl.bash
	bin/hubctl completion zsh  > completions/_hubctl
	bin/hubctl completion fish > completions/hubctl.fish

bench: ## micro-benchmarks of every package (see docs/benchmarks.md)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCH_TIME) ./...

# go test -fuzz takes one target per run, hence the loop. Crashers land in
# the package's testdata/fuzz/<Target>/ and become regression seeds: commit them.
fuzz: ## a short run of every fuzz target (FUZZTIME=1m make fuzz for longer)
	@set -e; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for target in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do \
	    echo "== $$pkg $$target ($${FUZZTIME:-20s})"; \
	    $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $${FUZZTIME:-20s} $$pkg; \
	  done; \
	done

# `go run` would sit between make and hubctl and turn Ctrl-C into exit
# status 1 ("make: *** Error 1"); exec leaves hubctl's own status, 0 after
# a clean stop. DEV_HUBCTL lets a test stand in for the binary.
DEV_HUBCTL    ?= bin/hubctl

dev: build ## the whole hub on embedded Kafka and a throwaway PostgreSQL
	exec $(DEV_HUBCTL) dev $(DEV_FLAGS)

clean:
	rm -rf bin dist
