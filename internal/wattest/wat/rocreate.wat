;; In a mount at fd 3 holding "f", opens "new" with O_CREAT and "f" with
;; O_TRUNC, each with only the right to read (which WASI allows), and
;; writes the two errnos, each followed by a space.
(module
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $out (mut i32) (i32.const 4096))
  (data (i32.const 0) "new")
  (data (i32.const 16) "f")

  ;; put appends errno (below 100) in decimal and a space to the output.
  (func $put (param $v i32)
    (if (i32.ge_u (local.get $v) (i32.const 10))
      (then
        (i32.store8 (global.get $out) (i32.add (i32.const 48) (i32.div_u (local.get $v) (i32.const 10))))
        (global.set $out (i32.add (global.get $out) (i32.const 1)))))
    (i32.store8 (global.get $out) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
    (i32.store8 offset=1 (global.get $out) (i32.const 32))
    (global.set $out (i32.add (global.get $out) (i32.const 2))))

  (func (export "_start")
    ;; oflags 1 is O_CREAT, 8 O_TRUNC; rights 2 is fd_read.
    (call $put (call $path_open (i32.const 3) (i32.const 1) (i32.const 0) (i32.const 3)
                 (i32.const 1) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 64)))
    (call $put (call $path_open (i32.const 3) (i32.const 1) (i32.const 16) (i32.const 1)
                 (i32.const 8) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 64)))
    (i32.store (i32.const 512) (i32.const 4096))
    (i32.store (i32.const 516) (i32.sub (global.get $out) (i32.const 4096)))
    (drop (call $fd_write (i32.const 1) (i32.const 512) (i32.const 1) (i32.const 600)))))
