;; Passes stdin to wasmcp.http_request as the request, then writes the
;; result code as a digit, then the answer from wasmcp.http_response.
(module
  (import "wasmcp" "http_request" (func $request (param i32 i32 i32) (result i32)))
  (import "wasmcp" "http_response" (func $response (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "_start")
    (local $n i32) (local $code i32) (local $len i32)
    ;; Request at 1024, up to 16 KiB, in one read (tests send small ones).
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 16384))
    (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
    (local.set $n (i32.load (i32.const 8)))
    (local.set $code (call $request (i32.const 1024) (local.get $n) (i32.const 16)))
    (local.set $len (i32.load (i32.const 16)))
    ;; The code digit at 65535, the answer right after it.
    (i32.store8 (i32.const 65535) (i32.add (i32.const 48) (local.get $code)))
    (if (i32.gt_u (local.get $len) (i32.const 0))
      (then (drop (call $response (i32.const 65536) (local.get $len)))))
    (i32.store (i32.const 32) (i32.const 65535))
    (i32.store (i32.const 36) (i32.add (local.get $len) (i32.const 1)))
    (drop (call $fd_write (i32.const 1) (i32.const 32) (i32.const 1) (i32.const 40)))))
