;; A reactor whose call logs "called" before it reads stdin, then echoes
;; stdin: what it does before the read is the call's too.
(module
  (import "wasmcp" "log" (func $log (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "called")
  (func (export "_initialize"))
  (func (export "wasmcp_init"))
  (func (export "wasmcp_run")
    (drop (call $log (i32.const 1) (i32.const 64) (i32.const 6)))
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 1024))
    (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
    (i32.store (i32.const 4) (i32.load (i32.const 8)))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
