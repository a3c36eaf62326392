;; Recurses without end.
(module
  (memory (export "memory") 1)
  (func $down (call $down))
  (func (export "_start") (call $down)))
