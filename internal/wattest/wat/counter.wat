;; Increments a global and exits with its value: 1 in a fresh instance.
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (global $count (mut i32) (i32.const 0))
  (func (export "_start")
    (global.set $count (i32.add (global.get $count) (i32.const 1)))
    (call $exit (global.get $count))))
