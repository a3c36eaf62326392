;; A battery of hostile WASI calls, one per case: bad pointers, huge
;; lengths, out-of-range fds, bad flags, whence and clock ids, iovec counts,
;; overlapping buffers, path lengths, poll_oneoff oddities, proc_exit with
;; out-of-range statuses. The case is the number in argv[1] ("case07" is
;; case 7). Each case writes what the call returned (its errno, then any
;; result it checks) as decimal numbers, each followed by a space, so that
;; engines can be held to the same answers.
;;
;; Memory: one page. 0-255 subscriptions and scratch, 256-511 events,
;; 512-767 iovecs, 768-1023 results, 1024-2047 arguments, 4096- output.
;; Addresses past 65535 are outside memory.
(module
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_get" (func $environ_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_res_get" (func $clock_res_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_advise" (func $fd_advise (param i32 i64 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_allocate" (func $fd_allocate (param i32 i64 i64) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_get" (func $fd_fdstat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_set_flags" (func $fd_fdstat_set_flags (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_set_rights" (func $fd_fdstat_set_rights (param i32 i64 i64) (result i32)))
  (import "wasi_snapshot_preview1" "fd_filestat_get" (func $fd_filestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_filestat_set_size" (func $fd_filestat_set_size (param i32 i64) (result i32)))
  (import "wasi_snapshot_preview1" "fd_pread" (func $fd_pread (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_dir_name" (func $fd_prestat_dir_name (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_pwrite" (func $fd_pwrite (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_readdir" (func $fd_readdir (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_renumber" (func $fd_renumber (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_seek" (func $fd_seek (param i32 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_tell" (func $fd_tell (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_create_directory" (func $path_create_directory (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_get" (func $path_filestat_get (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_link" (func $path_link (param i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_symlink" (func $path_symlink (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "proc_raise" (func $proc_raise (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "sched_yield" (func $sched_yield (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_accept" (func $sock_accept (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_recv" (func $sock_recv (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_send" (func $sock_send (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_shutdown" (func $sock_shutdown (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $out (mut i32) (i32.const 4096))
  (data (i32.const 400) "ABCDEFGH")
  (data (i32.const 416) "file")
  (data (i32.const 424) "link")
  (data (i32.const 432) "/etc/passwd")

  (type $case (func))
  (table funcref (elem
    $c00 $c01 $c02 $c03 $c04 $c05 $c06 $c07 $c08 $c09
    $c10 $c11 $c12 $c13 $c14 $c15 $c16 $c17 $c18 $c19
    $c20 $c21 $c22 $c23 $c24 $c25 $c26 $c27 $c28 $c29
    $c30 $c31 $c32 $c33 $c34 $c35 $c36 $c37 $c38 $c39
    $c40 $c41 $c42 $c43 $c44 $c45 $c46 $c47 $c48 $c49
    $c50 $c51 $c52 $c53 $c54 $c55 $c56 $c57 $c58 $c59
    $c60 $c61 $c62 $c63 $c64 $c65 $c66 $c67 $c68 $c69
    $c70 $c71 $c72 $c73 $c74 $c75))

  ;; put appends v in decimal and a space to the output.
  (func $put (param $v i32)
    (local $start i32) (local $end i32) (local $t i32)
    (local.set $start (global.get $out))
    (loop $digits
      (i32.store8 (global.get $out) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (global.set $out (i32.add (global.get $out) (i32.const 1)))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $digits (local.get $v)))
    ;; The digits came out last first: reverse them.
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

  ;; iov stores one iovec at 512.
  (func $iov (param $ptr i32) (param $len i32)
    (i32.store (i32.const 512) (local.get $ptr))
    (i32.store (i32.const 516) (local.get $len)))

  ;; sub writes a subscription at $at: userdata, tag, and the first two
  ;; words of its body (a clock's id and timeout, or an fd).
  (func $sub (param $at i32) (param $userdata i64) (param $tag i32) (param $a i32) (param $b i64) (param $flags i32)
    (memory.fill (local.get $at) (i32.const 0) (i32.const 48))
    (i64.store (local.get $at) (local.get $userdata))
    (i32.store8 offset=8 (local.get $at) (local.get $tag))
    (i32.store offset=16 (local.get $at) (local.get $a))
    (i64.store offset=24 (local.get $at) (local.get $b))
    (i32.store16 offset=40 (local.get $at) (local.get $flags)))

  ;; poll1 polls one subscription at 0 and puts the errno, the event count
  ;; and, if there is an event, its userdata and errno.
  (func $poll1
    (i32.store (i32.const 768) (i32.const 99))
    (call $put (call $poll_oneoff (i32.const 0) (i32.const 256) (i32.const 1) (i32.const 768)))
    (call $put (i32.load (i32.const 768)))
    (if (i32.eq (i32.load (i32.const 768)) (i32.const 1))
      (then
        (call $put (i32.wrap_i64 (i64.load (i32.const 256))))
        (call $put (i32.load16_u (i32.const 264))))))

  ;; random_get
  (func $c00 (call $put (call $random_get (i32.const 0) (i32.const 0xffffffff))))
  (func $c01 (call $put (call $random_get (i32.const 0xfffffff0) (i32.const 16))))
  (func $c02 (call $put (call $random_get (i32.const 65532) (i32.const 8))))
  (func $c03 (call $put (call $random_get (i32.const 65536) (i32.const 0))))

  ;; args and environment: results and buffers outside memory
  (func $c04 (call $put (call $args_sizes_get (i32.const 0xfffffff0) (i32.const 768))))
  (func $c05 (call $put (call $args_sizes_get (i32.const 768) (i32.const 65534))))
  (func $c06 (call $put (call $args_get (i32.const 0xfffffff0) (i32.const 1100))))
  (func $c07 (call $put (call $args_get (i32.const 1040) (i32.const 65534))))
  (func $c08 (call $put (call $environ_sizes_get (i32.const 65534) (i32.const 768))))

  ;; clocks: unknown ids, results outside memory
  (func $c09 (call $put (call $clock_time_get (i32.const 99) (i64.const 0) (i32.const 768))))
  (func $c10 (call $put (call $clock_time_get (i32.const 0) (i64.const 0) (i32.const 0xfffffff9))))
  (func $c11 (call $put (call $clock_res_get (i32.const 7) (i32.const 768))))
  (func $c12 (call $put (call $clock_res_get (i32.const 1) (i32.const 65532))))
  (func $c13 (call $put (call $clock_time_get (i32.const 2) (i64.const 0) (i32.const 768))))

  ;; fd_write: a bad fd, iovec counts, a count outside memory, overlaps
  (func $c14
    (call $iov (i32.const 400) (i32.const 8))
    (call $put (call $fd_write (i32.const 99) (i32.const 512) (i32.const 1) (i32.const 768))))
  (func $c15
    (call $iov (i32.const 400) (i32.const 8))
    (call $put (call $fd_write (i32.const 1) (i32.const 512) (i32.const 0x7fffffff) (i32.const 768))))
  (func $c16
    ;; 0x20000001 iovecs: eight times that wraps to 8 in 32 bits.
    (call $iov (i32.const 400) (i32.const 8))
    (call $put (call $fd_write (i32.const 1) (i32.const 512) (i32.const 0x20000001) (i32.const 768))))
  (func $c17
    (call $iov (i32.const 400) (i32.const 0))
    (call $put (call $fd_write (i32.const 1) (i32.const 512) (i32.const 1) (i32.const 0xffffffff))))
  (func $c18
    ;; The count lands on the buffer being written.
    (call $iov (i32.const 400) (i32.const 8))
    (call $put (call $fd_write (i32.const 1) (i32.const 512) (i32.const 1) (i32.const 400)))
    (call $put (i32.load (i32.const 400))))

  ;; fd_read: the buffer overlaps its own iovec; wrong fd; counts; lengths
  (func $c19
    (call $iov (i32.const 512) (i32.const 8))
    (call $put (call $fd_read (i32.const 0) (i32.const 512) (i32.const 1) (i32.const 768)))
    (call $put (i32.load (i32.const 768)))
    (call $put (i32.load8_u (i32.const 512))))
  (func $c20
    (call $iov (i32.const 0) (i32.const 8))
    (call $put (call $fd_read (i32.const 1) (i32.const 512) (i32.const 1) (i32.const 768))))
  (func $c21
    (call $iov (i32.const 0) (i32.const 8))
    (call $put (call $fd_read (i32.const 0) (i32.const 512) (i32.const 0xffffffff) (i32.const 768))))
  (func $c22
    (call $iov (i32.const 0) (i32.const 0xffffffff))
    (call $put (call $fd_read (i32.const 0) (i32.const 512) (i32.const 1) (i32.const 768))))

  ;; seeking: stdio, bad whence, bad fd, results outside memory
  (func $c23 (call $put (call $fd_seek (i32.const 0) (i64.const 0) (i32.const 0) (i32.const 768))))
  (func $c24 (call $put (call $fd_seek (i32.const 1) (i64.const 0) (i32.const 9) (i32.const 768))))
  (func $c25 (call $put (call $fd_seek (i32.const 99) (i64.const 0) (i32.const 0) (i32.const 768))))
  (func $c26 (call $put (call $fd_tell (i32.const 1) (i32.const 0xfffffff0))))

  ;; descriptors: bad fds, results outside memory, bad flags
  (func $c27 (call $put (call $fd_close (i32.const 99))))
  (func $c28 (call $put (call $fd_fdstat_get (i32.const 1) (i32.const 0xfffffff0))))
  (func $c29 (call $put (call $fd_fdstat_get (i32.const 0xffffffff) (i32.const 768))))
  (func $c30 (call $put (call $fd_fdstat_set_flags (i32.const 1) (i32.const 0xffff))))
  (func $c31 (call $put (call $fd_filestat_get (i32.const 0) (i32.const 65500))))
  (func $c32 (call $put (call $fd_prestat_get (i32.const 9) (i32.const 768))))
  (func $c33 (call $put (call $fd_prestat_dir_name (i32.const 9) (i32.const 768) (i32.const 16))))
  (func $c34 (call $put (call $fd_renumber (i32.const 1) (i32.const 99))))
  (func $c35 (call $put (call $fd_readdir (i32.const 0) (i32.const 768) (i32.const 64) (i64.const 0) (i32.const 900))))
  (func $c36
    (call $iov (i32.const 0) (i32.const 8))
    (call $put (call $fd_pread (i32.const 0) (i32.const 512) (i32.const 1) (i64.const 0) (i32.const 768))))
  (func $c37
    (call $iov (i32.const 400) (i32.const 8))
    (call $put (call $fd_pwrite (i32.const 1) (i32.const 512) (i32.const 1) (i64.const 0) (i32.const 768))))
  (func $c38 (call $put (call $fd_advise (i32.const 1) (i64.const 0) (i64.const 0) (i32.const 99))))
  (func $c39 (call $put (call $fd_allocate (i32.const 1) (i64.const 0) (i64.const 16))))
  (func $c40 (call $put (call $fd_filestat_set_size (i32.const 1) (i64.const -1))))
  (func $c41 (call $put (call $fd_fdstat_set_rights (i32.const 1) (i64.const 0) (i64.const 0))))

  ;; paths on a descriptor that is not a directory, and a huge path
  (func $c42 (call $put (call $path_open (i32.const 9) (i32.const 0) (i32.const 416) (i32.const 4)
    (i32.const 0) (i64.const 0) (i64.const 0) (i32.const 0) (i32.const 768))))
  (func $c43 (call $put (call $path_open (i32.const 9) (i32.const 0) (i32.const 0xfffffff0) (i32.const 0xffffffff)
    (i32.const 0) (i64.const 0) (i64.const 0) (i32.const 0) (i32.const 768))))
  (func $c44 (call $put (call $path_create_directory (i32.const 1) (i32.const 416) (i32.const 4))))
  (func $c45 (call $put (call $path_symlink (i32.const 416) (i32.const 4) (i32.const 9) (i32.const 416) (i32.const 4))))
  (func $c46 (call $put (call $path_filestat_get (i32.const 9) (i32.const 0) (i32.const 0xfffffff0) (i32.const 16) (i32.const 768))))

  ;; poll_oneoff
  (func $c47 (call $put (call $poll_oneoff (i32.const 0) (i32.const 256) (i32.const 0) (i32.const 768))))
  (func $c48
    ;; 0x05555556 subscriptions: 48 times that wraps to 32 in 32 bits.
    (call $put (call $poll_oneoff (i32.const 0) (i32.const 256) (i32.const 0x05555556) (i32.const 768))))
  (func $c49 (call $sub (i32.const 0) (i64.const 7) (i32.const 9) (i32.const 0) (i64.const 0) (i32.const 0)) (call $poll1))
  (func $c50 (call $sub (i32.const 0) (i64.const 7) (i32.const 1) (i32.const 99) (i64.const 0) (i32.const 0)) (call $poll1))
  (func $c51 (call $sub (i32.const 0) (i64.const 7) (i32.const 2) (i32.const 99) (i64.const 0) (i32.const 0)) (call $poll1))
  (func $c52 (call $sub (i32.const 0) (i64.const 7) (i32.const 0) (i32.const 99) (i64.const 0) (i32.const 1)) (call $poll1))
  (func $c53 (call $sub (i32.const 0) (i64.const 7) (i32.const 0) (i32.const 1) (i64.const 0) (i32.const 4)) (call $poll1))
  (func $c54
    ;; Events written over the subscriptions they answer; one clock and
    ;; one bad fd: the fd's event is ready at once.
    (call $sub (i32.const 0) (i64.const 5) (i32.const 0) (i32.const 1) (i64.const 60000000000) (i32.const 0))
    (call $sub (i32.const 48) (i64.const 6) (i32.const 1) (i32.const 99) (i64.const 0) (i32.const 0))
    (call $put (call $poll_oneoff (i32.const 0) (i32.const 0) (i32.const 2) (i32.const 768)))
    (call $put (i32.load (i32.const 768)))
    (call $put (i32.wrap_i64 (i64.load (i32.const 0))))
    (call $put (i32.load16_u (i32.const 8))))
  (func $c55
    ;; Events outside memory.
    (call $sub (i32.const 0) (i64.const 7) (i32.const 0) (i32.const 1) (i64.const 0) (i32.const 0))
    (call $put (call $poll_oneoff (i32.const 0) (i32.const 65530) (i32.const 1) (i32.const 768))))

  ;; proc_exit out of WASI's range, proc_raise, sched_yield, sockets
  (func $c56 (call $proc_exit (i32.const 256)))
  (func $c57 (call $proc_exit (i32.const 126)))
  (func $c58 (call $proc_exit (i32.const 0xffffffff)))
  (func $c59 (call $put (call $proc_raise (i32.const 9))))
  (func $c60 (call $put (call $sched_yield)))
  (func $c61 (call $put (call $sock_accept (i32.const 1) (i32.const 0) (i32.const 768))))
  (func $c62 (call $put (call $sock_recv (i32.const 0) (i32.const 512) (i32.const 1) (i32.const 0) (i32.const 768) (i32.const 772))))
  (func $c63 (call $put (call $sock_shutdown (i32.const 1) (i32.const 3))))

  (func $c64
    ;; 0x10000001 subscriptions: 48 and 32 times that wrap to 48 and 32.
    (call $put (call $poll_oneoff (i32.const 0) (i32.const 256) (i32.const 0x10000001) (i32.const 768))))
  (func $c65 (call $put (call $environ_get (i32.const 0xfffffff0) (i32.const 0xfffffff0))))
  (func $c66
    (call $iov (i32.const 400) (i32.const 8))
    (call $put (call $sock_send (i32.const 1) (i32.const 512) (i32.const 1) (i32.const 1) (i32.const 768))))
  (func $c67
    (call $put (call $clock_res_get (i32.const 0) (i32.const 768)))
    (call $put (i32.load (i32.const 768))))

  ;; in the mount, fd 3: paths outside memory, bad flags, links
  (func $c68 (call $put (call $path_open (i32.const 3) (i32.const 0) (i32.const 0xfffffff0) (i32.const 0xffffffff)
    (i32.const 0) (i64.const 0) (i64.const 0) (i32.const 0) (i32.const 768))))
  (func $c69 (call $put (call $path_open (i32.const 3) (i32.const 0) (i32.const 416) (i32.const 4)
    (i32.const 0xffff) (i64.const 0) (i64.const 0) (i32.const 0) (i32.const 768))))
  (func $c70 (call $put (call $fd_prestat_dir_name (i32.const 3) (i32.const 0xfffffff0) (i32.const 2))))
  (func $c71 (call $put (call $fd_readdir (i32.const 3) (i32.const 0xfffffff0) (i32.const 64) (i64.const 0) (i32.const 768))))
  (func $c72
    ;; A link inside the mount, a link out of it, a hard link.
    (call $put (call $path_symlink (i32.const 416) (i32.const 4) (i32.const 3) (i32.const 424) (i32.const 4)))
    (call $put (call $path_symlink (i32.const 432) (i32.const 11) (i32.const 3) (i32.const 424) (i32.const 4)))
    (call $put (call $path_link (i32.const 3) (i32.const 0) (i32.const 416) (i32.const 4) (i32.const 3) (i32.const 424) (i32.const 4))))
  (func $c73
    ;; fd_pread into a buffer of 4 GiB from a file in the mount.
    (call $put (call $path_open (i32.const 3) (i32.const 0) (i32.const 416) (i32.const 4)
      (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 768)))
    (call $iov (i32.const 0) (i32.const 0xffffffff))
    (call $put (call $fd_pread (i32.load (i32.const 768)) (i32.const 512) (i32.const 1) (i64.const 0) (i32.const 772))))
  (func $c74
    ;; fd_read of the same.
    (call $put (call $path_open (i32.const 3) (i32.const 0) (i32.const 416) (i32.const 4)
      (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 768)))
    (call $iov (i32.const 0) (i32.const 0xffffffff))
    (call $put (call $fd_read (i32.load (i32.const 768)) (i32.const 512) (i32.const 1) (i32.const 772))))

  ;; A misaligned result: WASI's rules let a runtime trap.
  (func $c75 (call $put (call $fd_fdstat_get (i32.const 1) (i32.const 769))))

  (func (export "_start")
    (local $p i32) (local $end i32) (local $n i32) (local $c i32)
    ;; argv[1]'s digits are the case.
    (drop (call $args_sizes_get (i32.const 1024) (i32.const 1028)))
    (if (i32.or (i32.lt_u (i32.load (i32.const 1024)) (i32.const 2))
                (i32.gt_u (i32.load (i32.const 1028)) (i32.const 900)))
      (then (call $proc_exit (i32.const 2))))
    (drop (call $args_get (i32.const 1032) (i32.const 1100)))
    (local.set $p (i32.load (i32.const 1036)))
    (local.set $end (i32.add (i32.const 1100) (i32.load (i32.const 1028))))
    (block $parsed
      (loop $digit
        (br_if $parsed (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $p)))
        (br_if $parsed (i32.eqz (local.get $c)))
        (if (i32.and (i32.ge_u (local.get $c) (i32.const 48)) (i32.le_u (local.get $c) (i32.const 57)))
          (then (local.set $n (i32.add (i32.mul (local.get $n) (i32.const 10)) (i32.sub (local.get $c) (i32.const 48))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $digit)))
    (call_indirect (type $case) (local.get $n))
    (i32.store (i32.const 2048) (i32.const 4096))
    (i32.store (i32.const 2052) (i32.sub (global.get $out) (i32.const 4096)))
    (drop (call $fd_write (i32.const 1) (i32.const 2048) (i32.const 1) (i32.const 2056)))))
