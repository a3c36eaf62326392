;; Races renames against lookups in a writable mount at fd 3, which holds
;; the operator's "d/link" (a link out of the mount) and the guest's own
;; "e/link/secret" (a real directory and file, "decoy"). The role is the
;; first letter of argv[1] (the tool's name):
;;
;;   swap   creates "started", then renames d -> x -> d and e -> x -> e
;;          until "done" exists; writes "swapped N " (N rounds).
;;   read   waits for "started", then opens and reads "x/link/secret"
;;          20,000 times, and on (up to 2,000,000) until both outcomes
;;          below were seen. If it reads anything but the decoy it writes
;;          "leaked " and what it read, and stops; otherwise it writes
;;          "held D P O ": how often it read the decoy (x was e), was
;;          refused with EPERM (x was d: the link leads out) and got any
;;          other errno (x was missing, mid-swap). Then it creates "done".
;;   write  the same with "x/link/pwned" created and written ("pwned"):
;;          "held C P O ", C being the files it created (in e, its own).
;;
;; A D and a P above zero show that the lookups met both directories: the
;; race was run, whatever its outcome.
;;
;; Memory: 0-255 names, 512 an iovec, 600-703 results, 768-1279 argv,
;; 2048-2303 what was read, 4096- output.
(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_rename" (func $path_rename (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_get" (func $path_filestat_get (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (memory (export "memory") 1)
  (global $out (mut i32) (i32.const 4096))
  (global $attempts i32 (i32.const 20000))
  (global $maxAttempts i32 (i32.const 2000000))
  (data (i32.const 0) "x")
  (data (i32.const 8) "d")
  (data (i32.const 16) "e")
  (data (i32.const 32) "x/link/secret")
  (data (i32.const 64) "x/link/pwned")
  (data (i32.const 96) "started")
  (data (i32.const 112) "done")
  (data (i32.const 128) "pwned\n")
  (data (i32.const 144) "held ")
  (data (i32.const 160) "leaked ")
  (data (i32.const 176) "swapped ")

  ;; put appends v in decimal and a space to the output.
  (func $put (param $v i32)
    (local $start i32) (local $end i32) (local $t i32)
    (local.set $start (global.get $out))
    (loop $digits
      (i32.store8 (global.get $out) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (global.set $out (i32.add (global.get $out) (i32.const 1)))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $digits (local.get $v)))
    (local.set $end (i32.sub (global.get $out) (i32.const 1)))
    (block $done
      (loop $swap
        (br_if $done (i32.ge_u (local.get $start) (local.get $end)))
        (local.set $t (i32.load8_u (local.get $start)))
        (i32.store8 (local.get $start) (i32.load8_u (local.get $end)))
        (i32.store8 (local.get $end) (local.get $t))
        (local.set $start (i32.add (local.get $start) (i32.const 1)))
        (local.set $end (i32.sub (local.get $end) (i32.const 1)))
        (br $swap)))
    (i32.store8 (global.get $out) (i32.const 32))
    (global.set $out (i32.add (global.get $out) (i32.const 1))))

  ;; text appends len bytes at ptr to the output.
  (func $text (param $ptr i32) (param $len i32)
    (memory.copy (global.get $out) (local.get $ptr) (local.get $len))
    (global.set $out (i32.add (global.get $out) (local.get $len))))

  (func $flush
    (i32.store (i32.const 512) (i32.const 4096))
    (i32.store (i32.const 516) (i32.sub (global.get $out) (i32.const 4096)))
    (drop (call $fd_write (i32.const 1) (i32.const 512) (i32.const 1) (i32.const 604))))

  (func $exists (param $ptr i32) (param $len i32) (result i32)
    (i32.eqz (call $path_filestat_get (i32.const 3) (i32.const 0) (local.get $ptr) (local.get $len) (i32.const 640))))

  ;; touch creates a file (O_CREAT, the right to write).
  (func $touch (param $ptr i32) (param $len i32)
    (if (i32.eqz (call $path_open (i32.const 3) (i32.const 0) (local.get $ptr) (local.get $len)
                   (i32.const 1) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 600)))
      (then (drop (call $fd_close (i32.load (i32.const 600)))))))

  (func $rename (param $from i32) (param $to i32)
    (drop (call $path_rename (i32.const 3) (local.get $from) (i32.const 1) (i32.const 3) (local.get $to) (i32.const 1))))

  (func $swap
    (local $rounds i32)
    (call $touch (i32.const 96) (i32.const 7))
    (block $stop
      (loop $round
        (br_if $stop (call $exists (i32.const 112) (i32.const 4)))
        (call $rename (i32.const 8) (i32.const 0))
        (call $rename (i32.const 0) (i32.const 8))
        (call $rename (i32.const 16) (i32.const 0))
        (call $rename (i32.const 0) (i32.const 16))
        (local.set $rounds (i32.add (local.get $rounds) (i32.const 1)))
        (br $round)))
    (call $text (i32.const 176) (i32.const 8))
    (call $put (local.get $rounds)))

  ;; race opens x/link/secret to read it, or x/link/pwned to create and
  ;; write it, $attempts times, and counts the outcomes.
  (func $race (param $write i32)
    (local $i i32) (local $errno i32) (local $fd i32) (local $n i32)
    (local $opened i32) (local $eperm i32) (local $other i32)
    (loop $wait
      (br_if $wait (i32.eqz (call $exists (i32.const 96) (i32.const 7)))))
    (block $end
      (loop $attempt
        ;; At least $attempts, and on until the lookups have met both
        ;; directories (the swap's turns depend on the scheduler), up to
        ;; $maxAttempts.
        (br_if $end (i32.ge_u (local.get $i) (global.get $maxAttempts)))
        (br_if $end (i32.and (i32.ge_u (local.get $i) (global.get $attempts))
                             (i32.and (i32.ne (local.get $opened) (i32.const 0))
                                      (i32.ne (local.get $eperm) (i32.const 0)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $errno
          (if (result i32) (local.get $write)
            (then (call $path_open (i32.const 3) (i32.const 1) (i32.const 64) (i32.const 12)
                    (i32.const 1) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 600)))
            (else (call $path_open (i32.const 3) (i32.const 1) (i32.const 32) (i32.const 13)
                    (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 600)))))
        (if (local.get $errno)
          (then
            (if (i32.eq (local.get $errno) (i32.const 63))
              (then (local.set $eperm (i32.add (local.get $eperm) (i32.const 1))))
              (else (local.set $other (i32.add (local.get $other) (i32.const 1)))))
            (br $attempt)))
        (local.set $fd (i32.load (i32.const 600)))
        (local.set $opened (i32.add (local.get $opened) (i32.const 1)))
        (if (local.get $write)
          (then
            (i32.store (i32.const 512) (i32.const 128))
            (i32.store (i32.const 516) (i32.const 6))
            (drop (call $fd_write (local.get $fd) (i32.const 512) (i32.const 1) (i32.const 604)))
            (drop (call $fd_close (local.get $fd)))
            (br $attempt)))
        (i32.store (i32.const 512) (i32.const 2048))
        (i32.store (i32.const 516) (i32.const 256))
        (i32.store (i32.const 604) (i32.const 0))
        (drop (call $fd_read (local.get $fd) (i32.const 512) (i32.const 1) (i32.const 604)))
        (drop (call $fd_close (local.get $fd)))
        (local.set $n (i32.load (i32.const 604)))
        ;; Anything but "decoy" came from outside the mount.
        (if (i32.and (i32.gt_u (local.get $n) (i32.const 0))
                     (i32.ne (i32.load8_u (i32.const 2048)) (i32.const 100)))
          (then
            (call $text (i32.const 160) (i32.const 7))
            (call $text (i32.const 2048) (local.get $n))
            (call $touch (i32.const 112) (i32.const 4))
            (return)))
        (br $attempt)))
    (call $touch (i32.const 112) (i32.const 4))
    (call $text (i32.const 144) (i32.const 5))
    (call $put (local.get $opened))
    (call $put (local.get $eperm))
    (call $put (local.get $other)))

  (func (export "_start")
    (local $role i32)
    (drop (call $args_sizes_get (i32.const 768) (i32.const 772)))
    (if (i32.or (i32.lt_u (i32.load (i32.const 768)) (i32.const 2))
                (i32.or (i32.gt_u (i32.load (i32.const 768)) (i32.const 16))
                        (i32.gt_u (i32.load (i32.const 772)) (i32.const 256))))
      (then (return)))
    (drop (call $args_get (i32.const 800) (i32.const 1024)))
    (local.set $role (i32.load8_u (i32.load (i32.const 804))))
    (if (i32.eq (local.get $role) (i32.const 115)) ;; s
      (then (call $swap)))
    (if (i32.eq (local.get $role) (i32.const 114)) ;; r
      (then (call $race (i32.const 0))))
    (if (i32.eq (local.get $role) (i32.const 119)) ;; w
      (then (call $race (i32.const 1))))
    (call $flush)))
