;; Checks that its memory is exactly as a fresh instance's is, then writes
;; the marker 0xff over all of it: a call that saw another's marker, or
;; anything but its initial content, says so. The test gives it its data
;; segments (and the memory's minimum) by rewriting the binary: the byte
;; a segment puts at address a is a % 251 + 1, never 0 or 0xff, wherever
;; the segment is. Its stdin is three u32s (little-endian): where the
;; segments begin and end, and 1 to grow memory to its limit first (the
;; grown pages must be zeroes too); with less, it checks no further than
;; the first 32 bytes and ends. Bytes [0, 32), where the stdin is read to,
;; are checked before the read, so segments begin at 32 or later.
;; A difference is reported on stdout as the address and the byte found
;; (u32 each), and the run exits 1. Exported both as a command and as a
;; reactor's call.
(module
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)

  (func $differs (param $a i32) (param $got i32)
    (i32.store (i32.const 24) (local.get $a))
    (i32.store (i32.const 28) (local.get $got))
    (i32.store (i32.const 0) (i32.const 24))
    (i32.store (i32.const 4) (i32.const 8))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    (call $exit (i32.const 1)))

  (func $run
    (local $a i32) (local $end i32) (local $s i32) (local $e i32) (local $want i32) (local $got i32)
    (block $done
      (loop $first
        (br_if $done (i32.ge_u (local.get $a) (i32.const 32)))
        (if (local.tee $got (i32.load8_u (local.get $a)))
          (then (call $differs (local.get $a) (local.get $got))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (br $first)))
    (i32.store (i32.const 0) (i32.const 8))
    (i32.store (i32.const 4) (i32.const 12))
    (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 20)))
    (if (i32.lt_u (i32.load (i32.const 20)) (i32.const 12))
      (then (return)))
    (local.set $s (i32.load (i32.const 8)))
    (local.set $e (i32.load (i32.const 12)))
    (if (i32.load (i32.const 16))
      (then
        (loop $grow
          (br_if $grow (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))))
    (local.set $end (i32.mul (memory.size) (i32.const 65536)))
    (local.set $a (i32.const 32))
    (block $checked
      (loop $check
        (br_if $checked (i32.ge_u (local.get $a) (local.get $end)))
        (local.set $want (i32.const 0))
        (if (i32.and (i32.ge_u (local.get $a) (local.get $s)) (i32.lt_u (local.get $a) (local.get $e)))
          (then (local.set $want (i32.add (i32.rem_u (local.get $a) (i32.const 251)) (i32.const 1)))))
        (if (i32.ne (local.tee $got (i32.load8_u (local.get $a))) (local.get $want))
          (then (call $differs (local.get $a) (local.get $got))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (br $check)))
    (memory.fill (i32.const 0) (i32.const 0xff) (local.get $end)))

  (export "_start" (func $run))
  (export "wasmcp_run" (func $run)))
