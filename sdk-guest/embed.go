// Package sdkguest holds the guest SDKs' sources for `wasmcp new`, which
// copies them into each new tool folder so that the folder builds on its
// own, with no dependency to fetch.
package sdkguest

import "embed"

// Files holds the SDK sources, under their paths in this directory.
//
//go:embed go/*.go c/wasmcp.h c/wasmcp.c assemblyscript/assembly/wasmcp.ts rust/Cargo.toml rust/debian-cargo rust/src/*.rs python/wasmcp.py python/wasmcp_bundle.py
//go:embed js/build-runtime js/wasmcp.js js/wasmcp.d.ts js/runtime/*.c
var Files embed.FS
