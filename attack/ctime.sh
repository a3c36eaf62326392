#!/usr/bin/env bash
# Times `wasmcp call` (worker compile, then the run) of a generated module
# on both engines: attack/ctime.sh SHAPE [N] (environment as gen takes it).
set -euo pipefail
cd "$(dirname "$0")/.."
d=$(mktemp -d)
go run ./attack/gen "$1" "$d/m.wasm" ${2:-}
echo '{"abi":1,"tools":[{"name":"m","description":"d","inputSchema":{"type":"object"}}]}' > "$d/m.manifest.json"
echo "size $(stat -c %s "$d/m.wasm")"
for e in ${ENGINES:-wazero wasmtime}; do
  b=build/wasmcp; [ "$e" = wasmtime ] && b=build/wasmcp-wt
  echo "$e: $(/usr/bin/time -f "wall %e s maxrss %M KB" timeout 300 $b call --engine "$e" --tools "$d" --cache-dir "" ${CTARGS:-} m '{}' 2>&1 | egrep 'wall|"text"|limits' | tr -s ' \n' ' ')"
done
rm -rf "$d"
