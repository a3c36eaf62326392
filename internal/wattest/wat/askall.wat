;; Asks the client two things at once through wasmcp.ask_all, then
;; something it may not ask for, and writes both result codes as digits,
;; then a newline and the answers to the first.
(module
  (import "wasmcp" "ask_all" (func $ask_all (param i32 i32 i32) (result i32)))
  (import "wasmcp" "ask_response" (func $ask_response (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "[{\"method\":\"elicitation/create\",\"id\":\"a\",\"params\":{\"message\":\"x\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}},{\"method\":\"roots/list\",\"id\":\"b\",\"params\":{}}]")
  (data (i32.const 300) "[{\"method\":\"tools/call\",\"params\":{}}]")
  (func (export "_start")
    (local $len i32)
    (i32.store8 (i32.const 1000) (i32.add (i32.const 48) (call $ask_all (i32.const 100) (i32.const 164) (i32.const 16))))
    (local.set $len (i32.load (i32.const 16)))
    (drop (call $ask_response (i32.const 2000) (local.get $len)))
    (i32.store8 (i32.const 1001) (i32.add (i32.const 48) (call $ask_all (i32.const 300) (i32.const 37) (i32.const 20))))
    (i32.store8 (i32.const 1002) (i32.const 10))
    (i32.store (i32.const 0) (i32.const 1000))
    (i32.store (i32.const 4) (i32.const 3))
    (i32.store (i32.const 8) (i32.const 2000))
    (i32.store (i32.const 12) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 2) (i32.const 24)))))
