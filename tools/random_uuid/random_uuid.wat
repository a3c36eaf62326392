;; random_uuid: a tool written directly in WebAssembly text, needing no
;; compiler (only wat2wasm). It takes no arguments and writes a random
;; version 4 UUID, e.g. 0f8fad5b-d9cb-469f-a165-70867728950e, to stdout.
(module
  (import "wasi_snapshot_preview1" "random_get"
    (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "0123456789abcdef")

  ;; Memory: 0..15 the random bytes, 16..23 one iovec, 64..79 the hex
  ;; digits, 128..163 the UUID text.
  (func (export "_start")
    (local $i i32) (local $out i32) (local $b i32)
    (if (call $random_get (i32.const 0) (i32.const 16))
      (then (call $exit (i32.const 1))))
    ;; Version 4 in the high nibble of byte 6; variant 10xx in byte 8.
    (i32.store8 (i32.const 6) (i32.or (i32.and (i32.load8_u (i32.const 6)) (i32.const 0x0f)) (i32.const 0x40)))
    (i32.store8 (i32.const 8) (i32.or (i32.and (i32.load8_u (i32.const 8)) (i32.const 0x3f)) (i32.const 0x80)))
    (local.set $out (i32.const 128))
    (loop $byte
      ;; Dashes go before bytes 4, 6, 8 and 10.
      (if (i32.or (i32.or (i32.eq (local.get $i) (i32.const 4)) (i32.eq (local.get $i) (i32.const 6)))
                  (i32.or (i32.eq (local.get $i) (i32.const 8)) (i32.eq (local.get $i) (i32.const 10))))
        (then
          (i32.store8 (local.get $out) (i32.const 45))
          (local.set $out (i32.add (local.get $out) (i32.const 1)))))
      (local.set $b (i32.load8_u (local.get $i)))
      (i32.store8 (local.get $out) (i32.load8_u (i32.add (i32.const 64) (i32.shr_u (local.get $b) (i32.const 4)))))
      (i32.store8 (i32.add (local.get $out) (i32.const 1)) (i32.load8_u (i32.add (i32.const 64) (i32.and (local.get $b) (i32.const 15)))))
      (local.set $out (i32.add (local.get $out) (i32.const 2)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $byte (i32.lt_u (local.get $i) (i32.const 16))))
    (i32.store (i32.const 16) (i32.const 128))
    (i32.store (i32.const 20) (i32.const 36))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 24)))))
