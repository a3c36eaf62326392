;; Grows its memory a page at a time to 129 pages (8.06 MiB), or until
;; refused, touching each page, writes 100 bytes of "x" to stdout, then
;; copies stdin to stdout: a guest whose start-up holds its memory, all of
;; its limit if that is lower, while it waits for its arguments.
(module
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (local $p i32)
    (loop $grow
      (if (i32.lt_u (memory.size) (i32.const 129))
        (then (br_if $grow (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))))
    (local.set $p (i32.const 65536))
    (loop $touch
      (if (i32.lt_u (local.get $p) (i32.mul (memory.size) (i32.const 65536)))
        (then
          (i32.store8 (local.get $p) (i32.const 1))
          (local.set $p (i32.add (local.get $p) (i32.const 4096)))
          (br $touch))))
    (memory.fill (i32.const 1024) (i32.const 120) (i32.const 100))
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 100))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    (loop $more
      (i32.store (i32.const 0) (i32.const 1024))
      (i32.store (i32.const 4) (i32.const 60000))
      (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
      (if (i32.gt_u (i32.load (i32.const 8)) (i32.const 0))
        (then
          (i32.store (i32.const 4) (i32.load (i32.const 8)))
          (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
          (br $more))))))
