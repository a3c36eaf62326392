;; Calls itself twice a level, 2^62 calls in all, with no loop and a
;; stack no deeper than 62 frames: the time limit must stop it.
(module
  (memory (export "memory") 1)
  (func $fan (param $n i64)
    (if (i64.ne (local.get $n) (i64.const 0))
      (then
        (call $fan (i64.sub (local.get $n) (i64.const 1)))
        (call $fan (i64.sub (local.get $n) (i64.const 1))))))
  (func (export "_start") (call $fan (i64.const 62))))
