;; Imports wasmcp.log with a type other than wasmcp's: an engine would link
;; it only to fail every call.
(module
  (import "wasmcp" "log" (func $log (param i64) (result i64)))
  (memory (export "memory") 1)
  (func (export "_start") (drop (call $log (i64.const 1)))))
