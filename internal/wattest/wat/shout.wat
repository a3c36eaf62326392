;; Logs "sentinel" at level error through the wasmcp host module, then
;; writes "done".
(module
  (import "wasmcp" "log" (func $log (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "sentinel")
  (data (i32.const 200) "done")
  (func (export "_start")
    (drop (call $log (i32.const 4) (i32.const 100) (i32.const 8)))
    (i32.store (i32.const 0) (i32.const 200))
    (i32.store (i32.const 4) (i32.const 4))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
