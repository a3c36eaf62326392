#!/usr/bin/env bash
# A module importing wasmcp.log and fd_write with the wrong signatures
# loads and is listed (`list` exits 0), then fails every call with "the
# engine failed". Usage: attack/badsig.sh
set -euo pipefail
cd "$(dirname "$0")"
python3 -c 'from lib import *; make_tools("badsig", ["badsig"])'
for e in wazero wasmtime; do
  b=../build/wasmcp; [ "$e" = wasmtime ] && b=../build/wasmcp-wt
  echo "== $e"; $b list --engine $e --tools tools/badsig --cache-dir "" && echo "list exit 0"
  $b call --engine $e --tools tools/badsig --cache-dir "" badsig '{}' | grep '"text"' || true
done
