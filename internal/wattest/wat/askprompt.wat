;; Answers prompts/get after it asks the client, by elicitation, for a
;; topic: one user message once the ask is answered, exit status 1 if it
;; is not.
(module
  (import "wasmcp" "elicit" (func $elicit (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "{\"id\":\"topic\",\"params\":{\"message\":\"Which topic?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"topic\":{\"type\":\"string\"}}}}}")
  (data (i32.const 400) "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"asked and answered\"}}]}")
  (func (export "_start")
    (if (call $elicit (i32.const 100) (i32.const 127) (i32.const 16))
      (then (call $proc_exit (i32.const 1))))
    (i32.store (i32.const 0) (i32.const 400))
    (i32.store (i32.const 4) (i32.const 84))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
