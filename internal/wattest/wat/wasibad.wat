;; Calls poll_oneoff, fd_read and fd_write with arguments a hostile guest
;; could pass, and writes each call's errno as one byte (then the event
;; count of a poll on stdin), so that engines can be held to the same
;; answers.
(module
  (import "wasi_snapshot_preview1" "poll_oneoff"
    (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    ;; No subscriptions: EINVAL (28).
    (i32.store8 (i32.const 1000) (call $poll (i32.const 0) (i32.const 64) (i32.const 0) (i32.const 128)))
    ;; Subscriptions past the end of memory: EFAULT (21).
    (i32.store8 (i32.const 1001) (call $poll (i32.const 0xfffffff0) (i32.const 64) (i32.const 1) (i32.const 128)))
    ;; The event count past the end of memory: EFAULT.
    (i32.store8 (i32.const 1002) (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 0xfffffffe)))
    ;; An iovec array past the end of memory: EFAULT.
    (i32.store8 (i32.const 1003) (call $fd_write (i32.const 1) (i32.const 0xfffffff0) (i32.const 1) (i32.const 128)))
    ;; An iovec whose buffer is past the end of memory: EFAULT.
    (i32.store (i32.const 200) (i32.const 0xffff0000))
    (i32.store (i32.const 204) (i32.const 16))
    (i32.store8 (i32.const 1004) (call $fd_read (i32.const 0) (i32.const 200) (i32.const 1) (i32.const 128)))
    ;; A read subscription on stdin (tag 1, fd 0) is ready at once: one
    ;; event, errno 0.
    (i64.store (i32.const 0) (i64.const 7))
    (i32.store8 (i32.const 8) (i32.const 1))
    (i32.store (i32.const 16) (i32.const 0))
    (i32.store8 (i32.const 1005) (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 128)))
    (i32.store8 (i32.const 1006) (i32.load (i32.const 128)))
    (i32.store8 (i32.const 1007) (i32.load16_u (i32.const 72)))
    (i32.store (i32.const 300) (i32.const 1000))
    (i32.store (i32.const 304) (i32.const 8))
    (drop (call $fd_write (i32.const 1) (i32.const 300) (i32.const 1) (i32.const 308)))))
