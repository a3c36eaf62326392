;; In a writable mount at fd 3, creates "x/link/pwned" over and over and
;; writes "pwned" into it, for its whole time limit.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $close (param i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "x/link/pwned")
  (data (i32.const 32) "pwned\n")
  (func (export "_start")
    (local $fd i32)
    (i32.store (i32.const 80) (i32.const 32))
    (i32.store (i32.const 84) (i32.const 6))
    (loop $l
      ;; oflags CREAT; rights fd_write (bit 6)
      (if (i32.eqz (call $open (i32.const 3) (i32.const 1) (i32.const 0) (i32.const 12) (i32.const 1)
                             (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 64)))
        (then
          (local.set $fd (i32.load (i32.const 64)))
          (drop (call $fd_write (local.get $fd) (i32.const 80) (i32.const 1) (i32.const 88)))
          (drop (call $close (local.get $fd)))))
      (br $l))))
