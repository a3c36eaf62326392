;; Asks the client for a completion of its model through
;; wasmcp.create_message, then again without the maxTokens the revision
;; requires, and writes the three result codes as digits (the ask, the
;; ask_response that takes its answer, the second ask), then a newline
;; and the answer to the first.
(module
  (import "wasmcp" "create_message" (func $create_message (param i32 i32 i32) (result i32)))
  (import "wasmcp" "ask_response" (func $ask_response (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 100) "{\"id\":\"draft\",\"params\":{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"Name a colour.\"}}],\"maxTokens\":10}}")
  (data (i32.const 300) "{\"params\":{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"x\"}}]}}")
  (func (export "_start")
    (local $len i32)
    (i32.store8 (i32.const 1000) (i32.add (i32.const 48) (call $create_message (i32.const 100) (i32.const 119) (i32.const 16))))
    (local.set $len (i32.load (i32.const 16)))
    (i32.store8 (i32.const 1001) (i32.add (i32.const 48) (call $ask_response (i32.const 2000) (local.get $len))))
    (i32.store8 (i32.const 1002) (i32.add (i32.const 48) (call $create_message (i32.const 300) (i32.const 78) (i32.const 20))))
    (i32.store8 (i32.const 1003) (i32.const 10))
    (i32.store (i32.const 0) (i32.const 1000))
    (i32.store (i32.const 4) (i32.const 4))
    (i32.store (i32.const 8) (i32.const 2000))
    (i32.store (i32.const 12) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 2) (i32.const 24)))))
