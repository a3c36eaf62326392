# wasmcp in a container: a static binary on a distroless base, running as a
# non-root user, serving Streamable HTTP on port 8080.
#
#   docker build -t wasmcp .
#   docker run --rm -p 8080:8080 -v "$PWD/build/tools:/tools:ro" wasmcp
#
# Then http://127.0.0.1:8080/mcp serves the tools in build/tools (`make
# tools`). Before exposing the port beyond the machine, add a token:
#   -v /path/to/token:/run/secrets/wasmcp-token:ro and append to the command
#   serve ... --auth-token-file /run/secrets/wasmcp-token
# See docs/operations.md. (This file was written without a container engine
# at hand: its paths and arguments are checked by deploy/kubernetes's tests,
# but the image itself has not been built here.)

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/wasmcp ./cmd/wasmcp
# The mount points: /tools read by the server, /cache written by it (mode
# 0700: it holds native code).
RUN mkdir -p /out/tools && install -d -m 0700 /out/cache

FROM gcr.io/distroless/static-debian13:nonroot
COPY --from=build /out/wasmcp /wasmcp
COPY --from=build /out/tools /tools
COPY --from=build --chown=65532:65532 /out/cache /cache
# distroless's "nonroot" user, by number, so that runAsNonRoot can check it.
USER 65532:65532
VOLUME ["/tools", "/cache"]
EXPOSE 8080
ENTRYPOINT ["/wasmcp"]
CMD ["serve", "--http", "0.0.0.0:8080", "--tools", "/tools", "--cache-dir", "/cache"]
