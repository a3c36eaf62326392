;; A reactor: it exports no _start.
(module
  (memory (export "memory") 1)
  (func (export "run")))
