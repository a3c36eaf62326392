;; Looks for environment variables and preopened directories. It exits 10 if
;; it finds a variable, 11 if it finds a preopen, and writes "sealed" if it
;; finds neither.
(module
  (import "wasi_snapshot_preview1" "environ_sizes_get"
    (func $environ_sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get"
    (func $prestat (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "sealed")
  (func (export "_start")
    (drop (call $environ_sizes (i32.const 0) (i32.const 4)))
    (if (i32.ne (i32.load (i32.const 0)) (i32.const 0))
      (then (call $exit (i32.const 10))))
    (if (i32.eqz (call $prestat (i32.const 3) (i32.const 8)))
      (then (call $exit (i32.const 11))))
    (i32.store (i32.const 16) (i32.const 64))
    (i32.store (i32.const 20) (i32.const 6))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 24)))))
