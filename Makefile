# The README's commands. `make test` is what CI runs (after .ci/run installs
# the Wasm toolchains and staticcheck).
GO ?= go
# Core packages run under the race detector.
RACE_PKGS := ./abi/... ./runtime/... ./state/... ./watermark/... ./checkpoint/... ./connector/... ./cluster/...

.PHONY: test lint bench experiments demo udfs

test: lint
	$(GO) test -race -count=1 -timeout 30m $(RACE_PKGS)
	$(GO) test -count=1 -timeout 30m $$($(GO) list ./... | grep -v -e '/abi' -e '/runtime' -e '/state' -e '/watermark' -e '/checkpoint' -e '/connector' -e '/cluster')

lint:
	$(GO) mod tidy -diff
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	staticcheck ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./runtime/ ./runtime/exchange/ ./host/ | tee bench/latest.txt

# The backpressure and latency experiments (bench/): they rewrite their
# sections of docs/PERFORMANCE.md and docs/backpressure.svg.
experiments:
	$(GO) test -count=1 -timeout 20m -run Experiment -v ./bench/ -experiment

demo:
	$(GO) run ./cmd/platform demo

udfs:
	for d in udfs/*/; do $(MAKE) -C $$d; done
