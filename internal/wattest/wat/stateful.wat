;; State for the reactor rewrite (wasmbin.ExportState) to move: data
;; segments near one another and far apart, globals mutable and not, a start
;; function.
(module
  (memory 2)
  (global $g (mut i32) (i32.const 7))
  (global $k i64 (i64.const 9))
  (global $h (mut f64) (f64.const 1.5))
  (data (i32.const 16) "ab")
  (data (i32.const 20) "cd")
  (data (i32.const 70000) "far")
  (func $start (global.set $g (i32.const 8)))
  (start $start)
  (func (export "_start")))
