;; Logs that it runs, then spins forever: a test can act while the guest
;; is surely running.
(module
  (import "wasmcp" "log" (func $log (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "running")
  (func (export "_start")
    (drop (call $log (i32.const 1) (i32.const 0) (i32.const 7)))
    (loop $forever (br $forever))))
