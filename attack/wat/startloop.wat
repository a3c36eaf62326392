;; The module's start function (the start section, run while the instance
;; is instantiated, before _start) loops forever.
(module
  (memory (export "memory") 1)
  (func $spin (loop $l (br $l)))
  (start $spin)
  (func (export "_start")))
