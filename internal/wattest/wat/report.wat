;; Calls the wasmcp host functions rightly and wrongly, and writes each
;; result code as a digit to stdout, in the order of the calls below.
(module
  (import "wasmcp" "log" (func $log (param i32 i32 i32) (result i32)))
  (import "wasmcp" "progress" (func $progress (param f64 f64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "hello")
  (data (i32.const 110) "\ff\fe")
  (data (i32.const 120) "half way")
  (global $n (mut i32) (i32.const 0))
  ;; out appends one result code, as an ASCII digit, at 1000+n.
  (func $out (param $code i32)
    (i32.store8 (i32.add (i32.const 1000) (global.get $n)) (i32.add (i32.const 48) (local.get $code)))
    (global.set $n (i32.add (global.get $n) (i32.const 1))))
  (func (export "_start")
    (call $out (call $log (i32.const 1) (i32.const 100) (i32.const 5)))         ;; 0 ok
    (call $out (call $log (i32.const 9) (i32.const 100) (i32.const 5)))         ;; 2 bad level
    (call $out (call $log (i32.const 1) (i32.const 65530) (i32.const 100)))     ;; 1 out of memory bounds
    (call $out (call $log (i32.const 1) (i32.const -16) (i32.const 100)))       ;; 1 pointer wraps
    (call $out (call $log (i32.const 1) (i32.const 100) (i32.const 9000)))      ;; 4 too long
    (call $out (call $log (i32.const 1) (i32.const 110) (i32.const 2)))         ;; 3 not UTF-8
    (call $out (call $progress (f64.const 1) (f64.const 10) (i32.const 120) (i32.const 8)))   ;; 0 ok
    (call $out (call $progress (f64.const 1) (f64.const 10) (i32.const 0) (i32.const 0)))     ;; 6 not increasing
    (call $out (call $progress (f64.const 0.5) (f64.const 10) (i32.const 0) (i32.const 0)))   ;; 6 decreasing
    (call $out (call $progress (f64.const 2) (f64.const -1) (i32.const 0) (i32.const 0)))     ;; 0 total unknown
    (call $out (call $progress (f64.const nan) (f64.const 10) (i32.const 0) (i32.const 0)))   ;; 2 NaN
    (call $out (call $progress (f64.const 3) (f64.const inf) (i32.const 0) (i32.const 0)))    ;; 2 infinite total
    (i32.store (i32.const 0) (i32.const 1000))
    (i32.store (i32.const 4) (global.get $n))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
