;; A passive data segment that the code copies in (memory.init) and then
;; drops (data.drop), beside an active one: a module whose active segments
;; the host lays out ahead keeps its passive ones as they were. Writes
;; "active|passive" to stdout.
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "active|")
  (data $passive "passive")
  (func (export "_start")
    (memory.init $passive (i32.const 107) (i32.const 0) (i32.const 7))
    (data.drop $passive)
    (i32.store (i32.const 0) (i32.const 100))
    (i32.store (i32.const 4) (i32.const 14))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
