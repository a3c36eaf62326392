;; In a mount at fd 3, opens "x/link/secret" over and over and reads it;
;; writes what it read and exits as soon as that is not the decoy
;; ("decoy" is what the guest's own x/link/secret holds).
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "x/link/secret")
  (func (export "_start")
    (local $fd i32)
    (loop $l
      (if (i32.eqz (call $open (i32.const 3) (i32.const 1) (i32.const 0) (i32.const 13) (i32.const 0)
                             (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 64)))
        (then
          (local.set $fd (i32.load (i32.const 64)))
          (i32.store (i32.const 80) (i32.const 1024))
          (i32.store (i32.const 84) (i32.const 256))
          (drop (call $fd_read (local.get $fd) (i32.const 80) (i32.const 1) (i32.const 88)))
          (drop (call $close (local.get $fd)))
          ;; not "decoy" (first byte 'd')? print it and stop
          (if (i32.and (i32.gt_u (i32.load (i32.const 88)) (i32.const 0))
                       (i32.ne (i32.load8_u (i32.const 1024)) (i32.const 100)))
            (then
              (i32.store (i32.const 84) (i32.load (i32.const 88)))
              (drop (call $fd_write (i32.const 1) (i32.const 80) (i32.const 1) (i32.const 88)))
              (return)))))
      (br $l))))
