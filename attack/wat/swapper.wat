;; In a writable mount at fd 3, swaps which directory is named "x": the
;; operator's "d" (holding a link that points out of the mount), then the
;; guest's own "e" (holding a real "link/secret"), for its whole time limit.
(module
  (import "wasi_snapshot_preview1" "path_rename"
    (func $rename (param i32 i32 i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "x")
  (data (i32.const 8) "d")
  (data (i32.const 16) "e")
  (func (export "_start")
    (loop $l
      (drop (call $rename (i32.const 3) (i32.const 8) (i32.const 1) (i32.const 3) (i32.const 0) (i32.const 1)))   ;; d -> x
      (drop (call $rename (i32.const 3) (i32.const 0) (i32.const 1) (i32.const 3) (i32.const 8) (i32.const 1)))   ;; x -> d
      (drop (call $rename (i32.const 3) (i32.const 16) (i32.const 1) (i32.const 3) (i32.const 0) (i32.const 1)))  ;; e -> x
      (drop (call $rename (i32.const 3) (i32.const 0) (i32.const 1) (i32.const 3) (i32.const 16) (i32.const 1)))  ;; x -> e
      (br $l))))
