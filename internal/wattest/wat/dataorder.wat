;; Data segments out of address order and near one another: written in
;; order, they leave "BBBB" at 0, "AAAA" at 30 and "CCCC" at 60.
(module
  (memory (export "memory") 1)
  (data (i32.const 30) "AAAA")
  (data (i32.const 0) "BBBB")
  (data (i32.const 60) "CCCC")
  (func (export "_start")))
