;; Sends 1,000 progress reports of 8 KiB each (8 MiB of notifications),
;; then writes "done". With a client that does not read its stream, each
;; report blocks the guest inside the host function.
(module
  (import "wasmcp" "progress" (func $progress (param f64 f64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "done")
  (func (export "_start")
    (local $i i32)
    ;; 8192 bytes of 'A' at 1024
    (memory.fill (i32.const 1024) (i32.const 65) (i32.const 8192))
    (loop $l
      (drop (call $progress (f64.convert_i32_u (i32.add (local.get $i) (i32.const 1))) (f64.const 1000)
                            (i32.const 1024) (i32.const 8192)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 1000))))
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 4))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
