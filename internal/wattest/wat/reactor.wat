;; A reactor that shows what each of its steps saw. wasmcp_init keeps its
;; stdin (the module's wasmcp.init section) and the number of arguments
;; and environment variables it saw; wasmcp_run prints
;;   <init stdin>|<init argc><init envc>|<argc><envc>|<calls><writes>|<stdin>|<seed>
;; where calls is a global and writes a byte of memory that each run
;; increments (a run that sees another's state prints more than 1), and
;; seed is 4 random bytes the start-up drew, in hex: the same in every call
;; made from one snapshot.
;;
;; The init section's first byte makes the start-up misbehave: G<n> grows
;; memory by n pages (trapping if it cannot), T writes the section to
;; stderr and traps, L loops, X exits. The call's stdin does the
;; same for the run: g grows memory until refused, then traps, t traps, l loops, f
;; floods stdout, x exits with status 3.
(module
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get"
    (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get"
    (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit"
    (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "random_get"
    (func $random_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $initLen (mut i32) (i32.const 0))
  (global $argcInit (mut i32) (i32.const 0))
  (global $envcInit (mut i32) (i32.const 0))
  (global $calls (mut i32) (i32.const 0))
  (global $initialized (mut i32) (i32.const 0))
  (data (i32.const 4000) "unused")

  ;; read fills memory at ptr with stdin, up to cap bytes, and returns
  ;; how many it read.
  (func $read (param $ptr i32) (param $cap i32) (result i32)
    (local $total i32)
    (loop $more
      (i32.store (i32.const 0) (i32.add (local.get $ptr) (local.get $total)))
      (i32.store (i32.const 4) (i32.sub (local.get $cap) (local.get $total)))
      (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
      (if (i32.gt_u (i32.load (i32.const 16)) (i32.const 0))
        (then
          (local.set $total (i32.add (local.get $total) (i32.load (i32.const 16))))
          (br_if $more (i32.lt_u (local.get $total) (local.get $cap))))))
    (local.get $total))

  (func $write (param $ptr i32) (param $len i32)
    (call $writeTo (i32.const 1) (local.get $ptr) (local.get $len)))

  (func $writeTo (param $fd i32) (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 16))))

  (func $argc (result i32)
    (drop (call $args_sizes_get (i32.const 32) (i32.const 36)))
    (i32.load (i32.const 32)))

  (func $envc (result i32)
    (drop (call $environ_sizes_get (i32.const 32) (i32.const 36)))
    (i32.load (i32.const 32)))

  (func (export "_initialize")
    (global.set $initialized (i32.const 1)))

  (func (export "wasmcp_init")
    (if (i32.eqz (global.get $initialized)) (then unreachable))
    (global.set $initLen (call $read (i32.const 4096) (i32.const 4096)))
    (global.set $argcInit (call $argc))
    (global.set $envcInit (call $envc))
    (drop (call $random_get (i32.const 120) (i32.const 4)))
    (if (i32.eq (i32.load8_u (i32.const 4096)) (i32.const 0x47)) ;; G
      (then (if (i32.eq (memory.grow (i32.sub (i32.load8_u (i32.const 4097)) (i32.const 0x30))) (i32.const -1))
        (then unreachable))))
    (if (i32.eq (i32.load8_u (i32.const 4096)) (i32.const 0x54)) ;; T
      (then (call $writeTo (i32.const 2) (i32.const 4096) (global.get $initLen)) unreachable))
    (if (i32.eq (i32.load8_u (i32.const 4096)) (i32.const 0x4c)) (then (loop $spin (br $spin)))) ;; L
    (if (i32.eq (i32.load8_u (i32.const 4096)) (i32.const 0x58)) (then (call $proc_exit (i32.const 0))))) ;; X

  (func (export "wasmcp_run")
    (local $n i32) (local $at i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (i32.store8 (i32.const 100) (i32.add (i32.load8_u (i32.const 100)) (i32.const 1)))
    (local.set $n (call $read (i32.const 8192) (i32.const 4096)))
    (if (i32.eq (i32.load8_u (i32.const 8192)) (i32.const 0x67)) ;; g
      (then (loop $more (br_if $more (i32.ne (memory.grow (i32.const 16)) (i32.const -1)))) unreachable))
    (if (i32.eq (i32.load8_u (i32.const 8192)) (i32.const 0x74)) (then unreachable)) ;; t
    (if (i32.eq (i32.load8_u (i32.const 8192)) (i32.const 0x6c)) (then (loop $spin (br $spin)))) ;; l
    (if (i32.eq (i32.load8_u (i32.const 8192)) (i32.const 0x78)) (then (call $proc_exit (i32.const 3)))) ;; x
    (if (i32.eq (i32.load8_u (i32.const 8192)) (i32.const 0x66)) ;; f
      (then (loop $flood (call $write (i32.const 4096) (i32.const 4096)) (br $flood))))
    (call $write (i32.const 4096) (global.get $initLen))
    (i32.store8 (i32.const 256) (i32.const 0x7c))
    (i32.store8 (i32.const 257) (i32.add (global.get $argcInit) (i32.const 0x30)))
    (i32.store8 (i32.const 258) (i32.add (global.get $envcInit) (i32.const 0x30)))
    (i32.store8 (i32.const 259) (i32.const 0x7c))
    (i32.store8 (i32.const 260) (i32.add (call $argc) (i32.const 0x30)))
    (i32.store8 (i32.const 261) (i32.add (call $envc) (i32.const 0x30)))
    (i32.store8 (i32.const 262) (i32.const 0x7c))
    (i32.store8 (i32.const 263) (i32.add (global.get $calls) (i32.const 0x30)))
    (i32.store8 (i32.const 264) (i32.add (i32.load8_u (i32.const 100)) (i32.const 0x30)))
    (i32.store8 (i32.const 265) (i32.const 0x7c))
    (call $write (i32.const 256) (i32.const 10))
    (call $write (i32.const 8192) (local.get $n))
    (i32.store8 (i32.const 270) (i32.const 0x7c))
    (loop $hex
      (i32.store8 (i32.add (i32.const 271) (i32.mul (local.get $at) (i32.const 2)))
        (call $digit (i32.shr_u (i32.load8_u (i32.add (i32.const 120) (local.get $at))) (i32.const 4))))
      (i32.store8 (i32.add (i32.const 272) (i32.mul (local.get $at) (i32.const 2)))
        (call $digit (i32.and (i32.load8_u (i32.add (i32.const 120) (local.get $at))) (i32.const 15))))
      (local.set $at (i32.add (local.get $at) (i32.const 1)))
      (br_if $hex (i32.lt_u (local.get $at) (i32.const 4))))
    (call $write (i32.const 270) (i32.const 9)))

  (func $digit (param $v i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $v) (i32.const 10))
      (then (i32.add (local.get $v) (i32.const 0x30)))
      (else (i32.add (local.get $v) (i32.const 0x57))))))
