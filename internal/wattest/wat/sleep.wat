;; Sleeps for 300 ms on the monotonic clock (WASI poll_oneoff with one
;; relative clock subscription), then writes "slept".
(module
  (import "wasi_snapshot_preview1" "poll_oneoff"
    (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 512) "slept")
  (func (export "_start")
    ;; The subscription at 0: userdata (8 bytes), tag 0 = clock at 8, then
    ;; at 16 the clock id (1 = monotonic), at 24 the timeout in ns, at 32
    ;; the precision, at 40 the flags (0 = relative).
    (i64.store (i32.const 0) (i64.const 0))
    (i32.store8 (i32.const 8) (i32.const 0))
    (i32.store (i32.const 16) (i32.const 1))
    (i64.store (i32.const 24) (i64.const 300000000))
    (i64.store (i32.const 32) (i64.const 0))
    (i32.store16 (i32.const 40) (i32.const 0))
    ;; One event is written at 64; the count at 128.
    (drop (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 128)))
    (i32.store (i32.const 256) (i32.const 512))
    (i32.store (i32.const 260) (i32.const 5))
    (drop (call $fd_write (i32.const 1) (i32.const 256) (i32.const 1) (i32.const 264)))))
