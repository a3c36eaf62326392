;; Imports wasmcp.log and fd_write with the wrong signatures.
(module
  (import "wasmcp" "log" (func $log (param i64) (result i64)))
  (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (drop (call $log (i64.const 1)))))
