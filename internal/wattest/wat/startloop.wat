;; Spins forever in its start section, which runs as it is instantiated,
;; before _start: the time limit must stop it there too.
(module
  (memory (export "memory") 1)
  (func $spin (loop $forever (br $forever)))
  (start $spin)
  (func (export "_start")))
