;; Reports progress once, then calls itself twice a level, 2^62 calls in
;; all, with no loop and a stack no deeper than 62 frames: the time limit
;; must stop it, and the Go runtime must be able to stop the thread that
;; runs it meanwhile.
(module
  (import "wasmcp" "progress" (func $progress (param f64 f64 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func $fan (param $n i64)
    (if (i64.ne (local.get $n) (i64.const 0))
      (then
        (call $fan (i64.sub (local.get $n) (i64.const 1)))
        (call $fan (i64.sub (local.get $n) (i64.const 1))))))
  (func (export "_start")
    (drop (call $progress (f64.const 1) (f64.const 2) (i32.const 0) (i32.const 0)))
    (call $fan (i64.const 62))))
