;; Writes n bytes of 0x01 to stdout, n being the digits of its arguments
;; read as one decimal number ({"n":1000} writes 1,000): output that JSON
;; makes six times as long (\u0001).
(module
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 32)
  (func (export "_start")
    (local $i i32) (local $len i32) (local $n i32) (local $c i32)
    ;; Up to 64 bytes of arguments at 1024.
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 64))
    (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
    (local.set $len (i32.load (i32.const 8)))
    (block $done
      (loop $digits
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (local.set $c (i32.sub (i32.load8_u (i32.add (i32.const 1024) (local.get $i))) (i32.const 48)))
        (if (i32.lt_u (local.get $c) (i32.const 10))
          (then (local.set $n (i32.add (i32.mul (local.get $n) (i32.const 10)) (local.get $c)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $digits)))
    ;; n bytes of 0x01 at 64 KiB, to stdout.
    (memory.fill (i32.const 65536) (i32.const 1) (local.get $n))
    (i32.store (i32.const 16) (i32.const 65536))
    (i32.store (i32.const 20) (local.get $n))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 24)))))
