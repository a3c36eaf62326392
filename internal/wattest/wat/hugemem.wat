;; Declares 3.75 GiB of initial memory.
(module
  (memory (export "memory") 60000)
  (func (export "_start")))
