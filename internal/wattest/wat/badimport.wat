;; Imports a host function that wasmcp does not provide.
(module
  (import "env" "open_socket" (func $sock (result i32)))
  (memory (export "memory") 1)
  (func (export "_start") (drop (call $sock))))
