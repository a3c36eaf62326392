;; Passes its arguments (stdin) to wasmcp.http_request as the request, 16
;; times, never taking an answer, then spins until its time limit: the
;; host holds the last answer, JSON-encoded, for the whole run.
(module
  (import "wasmcp" "http_request" (func $request (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (local $n i32) (local $i i32)
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 16384))
    (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
    (local.set $n (i32.load (i32.const 8)))
    (loop $l
      (drop (call $request (i32.const 1024) (local.get $n) (i32.const 16)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 16))))
    (loop $spin (br $spin))))
