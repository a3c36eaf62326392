;; Grows its memory to the limit (touching every page), then waits on
;; stdin: a prepared instance that holds all its memory while it waits.
(module
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (local $p i32)
    (loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
    ;; touch every page so it is resident
    (local.set $p (i32.const 65536))
    (loop $t
      (i32.store8 (local.get $p) (i32.const 1))
      (local.set $p (i32.add (local.get $p) (i32.const 4096)))
      (br_if $t (i32.lt_u (local.get $p) (i32.mul (memory.size) (i32.const 65536)))))
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 100))
    (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))))
