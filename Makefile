# The two commands a new user needs:
#   make run    installs the guest toolchains (scripts/setup), builds the
#               server and the example tools and serves them over
#               Streamable HTTP at http://127.0.0.1:8080/mcp
#   make test   installs what the tests need, then runs every check
GO      ?= go
BIN     := build/wasmcp
TOOLS   := build/tools
ADDR    ?= 127.0.0.1:8080

# Each fuzz target, with its package; `make fuzz FUZZTIME=5m` for a longer run.
FUZZTIME ?= 10s
FUZZ := abi:FuzzParseManifest internal/wasmbin:FuzzParse mcpserver/internal/guard:FuzzInspect mcpserver/internal/guard:FuzzScan \
        host/schema:FuzzCompile host/sandbox:FuzzHostFunctions

.PHONY: run serve-stdio build tools setup test test-wasmtime lint fuzz conformance

run: tools
	$(BIN) serve --tools $(TOOLS) --http $(ADDR)

serve-stdio: tools
	$(BIN) serve --tools $(TOOLS)

build:
	$(GO) build -trimpath -o $(BIN) ./cmd/wasmcp

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
	$(GO) test -race -count=1 ./...
	$(MAKE) test-wasmtime
	$(MAKE) fuzz
	conformance/run

# The packages that run guests, again on the optional wasmtime engine (cgo):
# the same tests, with WASMCP_ENGINE choosing the engine for each of them.
test-wasmtime:
	WASMCP_ENGINE=wasmtime $(GO) test -tags wasmtime -race -count=1 ./host/... ./mcpserver/... ./e2e/

fuzz:
	@for t in $(FUZZ); do \
		echo "fuzz $${t#*:} ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) ./$${t%%:*}/ || exit 1; \
	done

conformance: setup
	conformance/run
