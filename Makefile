# skewer: `make test` is what CI runs (see .ci/run).
GO          ?= go
GOBIN       := $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN)/staticcheck
STATICCHECK_VERSION := v0.8.2
FUZZTIME    ?= 10s
COUNT       ?= 10
BENCH       ?= .

.PHONY: test tools download vet lint unit allocs benchonce peers bench fuzz accuracy chaos kafka-chaos run

## The repository's modules: the root, the sketches (a module of their own, so
## that a program importing only them gets xxhash and the helpers), and the two
## dependency-free helpers both share. Each target runs in every one of them.
MODULES := . internal/hashx internal/u64map sketch
each = @set -e; for m in $(MODULES); do echo "== $$m: $(1)"; (cd $$m && $(1)); done

## test: vet, staticcheck, race-enabled shuffled unit tests (-short), the allocation
## tests without the race detector, every benchmark once.
test: vet lint unit allocs benchonce peers

## tools: install the pinned staticcheck unless it is already there.
tools:
	@$(STATICCHECK) -version 2>/dev/null | grep -qF '$(patsubst v%,(%),$(STATICCHECK_VERSION))' || \
		$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## download: every module's dependencies (bench/peers' too) into the module cache.
download:
	$(call each,$(GO) mod download)
	cd bench/peers && $(GO) mod download

vet:
	$(call each,$(GO) vet ./...)

lint: tools
	$(call each,$(STATICCHECK) ./...)

unit:
	$(call each,$(GO) test -short -race -shuffle=on -timeout 14m ./...)

## allocs: the allocation tests again without the race detector, which allocates on
## its own (some of them skip under -race); the build is the one benchonce uses.
allocs:
	$(call each,$(GO) test -short -count=1 -run 'Alloc' -timeout 5m ./...)

## benchonce: run every benchmark for one iteration so they keep compiling and running.
benchonce:
	$(call each,$(GO) test -short -run '^$$' -bench . -benchtime 1x -timeout 10m ./...)

## peers: the comparison module bench/peers (kept out of the main go.mod).
peers:
	@if [ -f bench/peers/go.mod ]; then \
		cd bench/peers && $(GO) vet ./... && $(GO) test -short -bench . -benchtime 1x ./...; \
	fi

## bench: all benchmarks, COUNT runs each, for benchstat.
bench:
	$(call each,$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(COUNT) -timeout 60m ./...)

## fuzz: a short run (FUZZTIME) of every native fuzz target.
fuzz:
	@set -e; for m in $(MODULES); do (cd $$m; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done); done

## accuracy: the long statistical sweeps that -short skips.
accuracy:
	$(call each,$(GO) test -timeout 90m ./...)

## chaos: the runtime's chaos test at length (make test runs a few plans of it).
CHAOS_TRIALS ?= 200
chaos:
	$(GO) test -race -run '^TestChaos$$' -count=1 -timeout 60m ./runtime/ -args -chaos.trials=$(CHAOS_TRIALS)

## kafka-chaos: Kafka -> runtime -> Kafka exactly once under 50 kill plans per edge
## (make test runs 4 of them).
KAFKA_KILLS ?= 50
kafka-chaos:
	$(GO) test -race -run '^TestRuntimeExactlyOnceChaos$$' -count=1 -timeout 60m ./kafka/ -args -kafka.rtkills=$(KAFKA_KILLS)

## run: the project's main job on its embedded default.
run:
	$(GO) run ./cmd/streambench
