;; Grows its table by 50 million elements, outside any memory limit; traps
;; if the grow was allowed.
(module
  (memory (export "memory") 1)
  (table 1 funcref)
  (func (export "_start")
    (if (i32.ne (table.grow 0 (ref.null func) (i32.const 50000000)) (i32.const -1))
      (then unreachable))))
