;; Asks the client through wasmcp.elicit again and again, whatever it is
;; answered: the host must stop it.
(module
  (import "wasmcp" "elicit" (func $elicit (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "{\"params\":{\"message\":\"again?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}")
  (func (export "_start")
    (loop $again
      (drop (call $elicit (i32.const 100) (i32.const 83) (i32.const 16)))
      (br $again))))
