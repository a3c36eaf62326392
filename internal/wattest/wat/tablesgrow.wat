;; Two tables without a maximum, which share one budget of table elements:
;; each may grow to about half of it. The exit status says which grows
;; succeeded: 1 for the first table by 400,000 elements, 2 for the second
;; by 400,000 too, 4 for the first by a further 400,000 (which the shared
;; budget must refuse).
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (table $a 1 funcref)
  (table $b 1 funcref)
  (func (export "_start")
    (local $status i32)
    (if (i32.ne (table.grow $a (ref.null func) (i32.const 400000)) (i32.const -1))
      (then (local.set $status (i32.or (local.get $status) (i32.const 1)))))
    (if (i32.ne (table.grow $b (ref.null func) (i32.const 400000)) (i32.const -1))
      (then (local.set $status (i32.or (local.get $status) (i32.const 2)))))
    (if (i32.ne (table.grow $a (ref.null func) (i32.const 400000)) (i32.const -1))
      (then (local.set $status (i32.or (local.get $status) (i32.const 4)))))
    (call $exit (local.get $status))))
