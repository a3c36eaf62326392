;; Asks the client through wasmcp.elicit rightly and wrongly, and writes
;; each result code as a digit to stdout, then a newline and the answer
;; to the first ask: a valid ask named "confirm", ask_response taking its
;; answer, an ask that names "confirm" again (whose answer says why), an
;; ask over 64 KiB, one that is not a JSON object (whose answer says
;; why), one with its length pointer outside memory, and ask_response
;; with nothing waiting.
(module
  (import "wasmcp" "elicit" (func $elicit (param i32 i32 i32) (result i32)))
  (import "wasmcp" "ask_response" (func $ask_response (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 100) "{\"id\":\"confirm\",\"params\":{\"message\":\"ok?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}")
  (data (i32.const 200) "x")
  (global $n (mut i32) (i32.const 0))
  ;; out appends one result code, as an ASCII digit, at 1000+n.
  (func $out (param $code i32)
    (i32.store8 (i32.add (i32.const 1000) (global.get $n)) (i32.add (i32.const 48) (local.get $code)))
    (global.set $n (i32.add (global.get $n) (i32.const 1))))
  (func (export "_start")
    (local $len i32)
    (call $out (call $elicit (i32.const 100) (i32.const 95) (i32.const 16)))     ;; 0 ok
    (local.set $len (i32.load (i32.const 16)))
    (call $out (call $ask_response (i32.const 2000) (i32.const 1)))              ;; 4 buffer too short
    (call $out (call $ask_response (i32.const 2000) (local.get $len)))           ;; 0 answer taken
    (call $out (call $elicit (i32.const 100) (i32.const 95) (i32.const 16)))     ;; 2 the same id again
    (call $out (call $ask_response (i32.const 10000) (i32.const 1000)))          ;; 0 why, taken
    (call $out (call $elicit (i32.const 0) (i32.const 70000) (i32.const 16)))    ;; 4 over 64 KiB
    (call $out (call $elicit (i32.const 200) (i32.const 1) (i32.const 16)))      ;; 2 not a JSON object
    (call $out (call $ask_response (i32.const 10000) (i32.const 1000)))          ;; 0 why, taken
    (call $out (call $elicit (i32.const 100) (i32.const 95) (i32.const 131070))) ;; 1 length pointer outside memory
    (call $out (call $ask_response (i32.const 2000) (i32.const 100)))            ;; 2 nothing waiting
    (i32.store8 (i32.add (i32.const 1000) (global.get $n)) (i32.const 10))
    (global.set $n (i32.add (global.get $n) (i32.const 1)))
    (i32.store (i32.const 0) (i32.const 1000))
    (i32.store (i32.const 4) (global.get $n))
    (i32.store (i32.const 8) (i32.const 2000))
    (i32.store (i32.const 12) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 2) (i32.const 20)))))
