;; The start function grows memory one page at a time until refused, then
;; loops: the instance holds --memory of linear memory while it spins.
(module
  (memory (export "memory") 1)
  (func $grow
    (loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
    (loop $spin (br $spin)))
  (start $grow)
  (func (export "_start")))
