"""The reactor of snapreload.py and snapretire.py: its start-up writes 16
pages, spins for spin iterations and records version v, which its call
prints."""
from lib import reactor_wat

def version(v, spin):
    return reactor_wat(f'''
  (global $v (mut i32) (i32.const 0))
  (func (export "wasmcp_init") (local $i i32)
    (call $growto (i32.const 16))
    (call $touch (i32.const 65536) (i32.mul (memory.size) (i32.const 65536)) (i32.const 1))
    (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const {spin}))))
    (global.set $v (i32.const {v})))
  (func (export "wasmcp_run") (drop (call $readin)) (call $num (global.get $v)))''')
