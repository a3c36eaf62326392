# The two commands a new user needs:
#   make run    installs the guest toolchains (scripts/setup), builds the
#               server and the example tools and serves them over
#               Streamable HTTP at http://127.0.0.1:8080/mcp
#   make test   installs what the tests need, then runs every check
# and two more:
#   make install   puts wasmcp in $(PREFIX)/bin if PREFIX is given, else in
#                  GOBIN, else in $(go env GOPATH)/bin, where `go install` would
#   make release   the archives for every platform, with SHA256SUMS (scripts/release)
GO      ?= go
BIN     := build/wasmcp
TOOLS   := build/tools
ADDR    ?= 127.0.0.1:8080
BINDIR  ?= $(if $(PREFIX),$(PREFIX)/bin,$(or $(GOBIN),$(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin))

# Each fuzz target, with its package and how many inputs `make fuzz` tries
# (about 5 to 10 s each here). Counts, not durations: with a duration, Go
# 1.26's fuzz coordinator can fail a clean run with "context deadline
# exceeded" as time runs out (go.dev/issue/75804, fixed in Go 1.27).
# `make fuzz FUZZTIME=5m` runs each for a set time instead.
FUZZTIME ?=
FUZZ := abi:FuzzParseManifest:400000 internal/wasmbin:FuzzParse:300000 internal/wasmbin:FuzzParseBodies:60000 internal/wasmbin:FuzzRewrites:30000 \
        internal/mcpserver/internal/guard:FuzzInspect:250000 internal/mcpserver/internal/guard:FuzzScan:500000 \
        internal/schema:FuzzCompile:120000 internal/sandbox:FuzzHostFunctions:200000 internal/jsonsize:FuzzString:150000 \
        internal/mcpserver:FuzzListAnswers:3000 internal/mcpserver:FuzzHTTPListAnswers:2000 internal/mcpserver:FuzzLeanCalls:600 internal/mcpserver:FuzzHTTPLeanCalls:300

.PHONY: run serve-stdio build install release tools setup test test-wasmtime lint fuzz conformance

run: tools
	$(BIN) serve --tools $(TOOLS) --http $(ADDR)

serve-stdio: tools
	$(BIN) serve --tools $(TOOLS)

build:
	$(GO) build -trimpath -o $(BIN) ./cmd/wasmcp

install:
	mkdir -p "$(DESTDIR)$(BINDIR)"
	$(GO) build -trimpath -o "$(DESTDIR)$(BINDIR)/wasmcp" ./cmd/wasmcp
	@echo "installed $(DESTDIR)$(BINDIR)/wasmcp"

release:
	scripts/release

tools: setup build
	scripts/build-tools $(TOOLS) $(BIN)

setup:
	scripts/setup

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags wasmtime ./...

test: setup lint
	$(GO) test -race -count=1 -timeout 30m ./...
	$(MAKE) test-wasmtime
	$(MAKE) fuzz
	conformance/run

# The packages that run guests, again on the optional wasmtime engine (cgo):
# the same tests, with WASMCP_ENGINE choosing the engine for each of them.
test-wasmtime:
	WASMCP_ENGINE=wasmtime $(GO) test -tags wasmtime -race -count=1 -timeout 40m ./host/... ./internal/... ./e2e/

fuzz:
	@for t in $(FUZZ); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$(or $(FUZZTIME),$${rest#*:}x); \
		echo "fuzz $$name ($$budget)"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $$budget ./$$pkg/ || exit 1; \
	done

conformance: setup
	conformance/run
