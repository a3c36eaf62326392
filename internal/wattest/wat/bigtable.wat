;; Starts with a table of 1,048,576 elements (8 MiB of references outside
;; linear memory), then grows its memory by the number of pages on stdin's
;; first byte, and exits 0 if the grow succeeded.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (table 1048576 funcref)
  (func (export "_start")
    ;; iovec at 0: buffer 16, length 1; count of bytes read at 8
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 1))
    (drop (call $read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
    (if (i32.eq (memory.grow (i32.load8_u (i32.const 16))) (i32.const -1))
      (then (call $exit (i32.const 1))))
    (call $exit (i32.const 0))))
