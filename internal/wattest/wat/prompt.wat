;; Answers prompts/get: writes one user message, and a _meta key that is
;; not the module's to set.
(module
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "{\"description\":\"from the module\",\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"got by the module\",\"_meta\":{\"mcp/x\":1}}}]}")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 100))
    (i32.store (i32.const 4) (i32.const 135))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
