;; Asks wasmcp.http_request 100 times for a URL of 64 KiB, each time for
;; another host, and is refused each time (it has no grant, or none for
;; such hosts). It then writes the answer to the last request to stderr
;; and exits 1, so that the call fails and lists its denials.
(module
  (import "wasmcp" "http_request" (func $request (param i32 i32 i32) (result i32)))
  (import "wasmcp" "http_response" (func $response (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 3)
  (data (i32.const 0) "{\"url\":\"https://")
  (func (export "_start")
    (local $i i32) (local $len i32)
    ;; The request: 16 bytes of prefix, 64 KiB of host name, then "}
    ;; (65,554 bytes); the answer's length goes to 65560.
    (memory.fill (i32.const 16) (i32.const 97) (i32.const 65536))
    (i32.store16 (i32.const 65552) (i32.const 0x7d22))
    (loop $l
      ;; The host name's first two letters make each request's host its own.
      (i32.store8 (i32.const 16) (i32.add (i32.const 97) (i32.rem_u (local.get $i) (i32.const 26))))
      (i32.store8 (i32.const 17) (i32.add (i32.const 97) (i32.div_u (local.get $i) (i32.const 26))))
      (drop (call $request (i32.const 0) (i32.const 65554) (i32.const 65560)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 100))))
    ;; The last answer, at 65600, to stderr.
    (local.set $len (i32.load (i32.const 65560)))
    (drop (call $response (i32.const 65600) (local.get $len)))
    (i32.store (i32.const 65564) (i32.const 65600))
    (i32.store (i32.const 65568) (local.get $len))
    (drop (call $fd_write (i32.const 2) (i32.const 65564) (i32.const 1) (i32.const 65572)))
    (call $exit (i32.const 1))))
