;; Calls log and progress 5000 times each, then writes the result code of
;; the last call of each as two digits: the host must have cut both off.
(module
  (import "wasmcp" "log" (func $log (param i32 i32 i32) (result i32)))
  (import "wasmcp" "progress" (func $progress (param f64 f64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "flood")
  (func (export "_start")
    (local $i i32) (local $log i32) (local $progress i32)
    (loop $more
      (local.set $log (call $log (i32.const 0) (i32.const 100) (i32.const 5)))
      (local.set $progress
        (call $progress (f64.convert_i32_u (local.get $i)) (f64.const -1) (i32.const 0) (i32.const 0)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $more (i32.lt_u (local.get $i) (i32.const 5000))))
    (i32.store8 (i32.const 1000) (i32.add (i32.const 48) (local.get $log)))
    (i32.store8 (i32.const 1001) (i32.add (i32.const 48) (local.get $progress)))
    (i32.store (i32.const 0) (i32.const 1000))
    (i32.store (i32.const 4) (i32.const 2))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
