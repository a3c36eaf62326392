"""Does anything of one snapshotted call reach the next, and do odd
reactors run as the module says? Each case is called three times.
- counter: the call adds 1 to a mutable global, to a word of memory, and
  to a word in pages it grows, and prints memory.size and the three
  (every call should print "20 1 1 1").
- segments: active data segments at 30 "AAAA", at 0 "BBBB", at 60 "CCCC"
  (the second and third are less than 64 bytes apart, the first between
  them); the call prints bytes 30..34, 0..4, 60..64: "AAAABBBBCCCC", as
  the same module run as a command does (segcmd), from a snapshot or
  not (segments_whole, with a table.set its code never runs).
- tables: the start-up points table slot 0 elsewhere (table.set), the
  call calls slot 0, then sets it back and grows the table: every call
  should print "init 2" (the start-up's choice, and a fresh table).
- floats: the start-up leaves signalling NaNs with payloads in an f32
  and an f64 global, and -2 in an i64; the call prints their bits:
  "2141192193 2146697216 1 4294967295".
- twoinits: two wasmcp.init sections.
- reserved: exports a function named wasmcp.global.0.
- impglobal: imports a mutable global.
Usage: ENGINE=... python3 snapstate.py"""
from lib import *
mods = {
    "counter": '''(global $g (mut i32) (i32.const 0))
  (func (export "wasmcp_init") (call $growto (i32.const 10)) (i32.store (i32.const 70000) (i32.const 0)))
  (func (export "wasmcp_run") (drop (call $readin))
    (global.set $g (i32.add (global.get $g) (i32.const 1)))
    (i32.store (i32.const 70000) (i32.add (i32.load (i32.const 70000)) (i32.const 1)))
    (drop (memory.grow (i32.const 10)))
    (i32.store (i32.const 1000000) (i32.add (i32.load (i32.const 1000000)) (i32.const 1)))
    (call $num (memory.size)) (call $out (i32.const 500) (i32.const 1))
    (call $num (global.get $g)) (call $out (i32.const 500) (i32.const 1))
    (call $num (i32.load (i32.const 70000))) (call $out (i32.const 500) (i32.const 1))
    (call $num (i32.load (i32.const 1000000))))
  (data (i32.const 500) " ")''',
    "segments": '''(data (i32.const 30) "AAAA") (data (i32.const 0) "BBBB") (data (i32.const 60) "CCCC")
  (func (export "wasmcp_run")
    (i32.store (i32.const 2000) (i32.load (i32.const 30)))
    (i32.store (i32.const 2004) (i32.load (i32.const 0)))
    (i32.store (i32.const 2008) (i32.load (i32.const 60)))
    (drop (call $readin))
    (call $out (i32.const 2000) (i32.const 12)))''',
    "tables": '''(type $t (func (result i32)))
  (table $tab 1 funcref)
  (elem declare func $init $orig)
  (elem (i32.const 0) $orig)
  (func $orig (result i32) (call $out (i32.const 3000) (i32.const 5)) (i32.const 0))
  (func $init (result i32) (call $out (i32.const 3005) (i32.const 5)) (i32.const 0))
  (data (i32.const 3000) "orig init ")
  (func (export "wasmcp_init") (table.set $tab (i32.const 0) (ref.func $init)))
  (func (export "wasmcp_run") (drop (call $readin))
    (drop (call_indirect (type $t) (i32.const 0)))
    (table.set $tab (i32.const 0) (ref.func $orig))
    (drop (table.grow $tab (ref.null func) (i32.const 1)))
    (call $num (table.size $tab)))''',
    "floats": '''(global $f (mut f32) (f32.const 0)) (global $d (mut f64) (f64.const 0)) (global $l (mut i64) (i64.const 0))
  (func (export "wasmcp_init")
    (global.set $f (f32.reinterpret_i32 (i32.const 0x7fa00001)))
    (global.set $d (f64.reinterpret_i64 (i64.const 0x7ff4000000000001)))
    (global.set $l (i64.const -2)))
  (func (export "wasmcp_run") (drop (call $readin))
    (call $num (i32.reinterpret_f32 (global.get $f))) (call $out (i32.const 500) (i32.const 1))
    (call $num (i32.wrap_i64 (i64.shr_u (i64.reinterpret_f64 (global.get $d)) (i64.const 32)))) (call $out (i32.const 500) (i32.const 1))
    (call $num (i32.wrap_i64 (i64.reinterpret_f64 (global.get $d)))) (call $out (i32.const 500) (i32.const 1))
    (call $num (i32.wrap_i64 (i64.shr_u (global.get $l) (i64.const 32)))))
  (data (i32.const 500) " ")''',
    "twoinits": '''(func (export "wasmcp_init")) (func (export "wasmcp_run") (drop (call $readin)) (call $out (i32.const 1024) (i32.const 2)))''',
    "reserved": '''(func (export "wasmcp.global.0")) (func (export "wasmcp_run") (drop (call $readin)) (call $out (i32.const 1024) (i32.const 2)))''',
}
# segments again, with a table.set its code never runs: no snapshot.
mods["segments_whole"] = mods["segments"] + '(table $t 1 funcref) (func $never (table.set $t (i32.const 0) (ref.null func)))'
wats = {k: reactor_wat(v) for k, v in mods.items()}
wats["impglobal"] = reactor_wat('(func (export "wasmcp_run") (drop (call $readin)) (call $out (i32.const 1024) (i32.const 2)))') \
    .replace("(module", '(module (import "wasi_snapshot_preview1" "g" (global $ig (mut i32)))', 1)
d = make_reactors("snapstate", wats, init={"twoinits": b"first"})
# A second wasmcp.init section, appended as a custom section.
name = b"wasmcp.init"
body = bytes([len(name)]) + name + b"second"
open(os.path.join(d, "twoinits.wasm"), "ab").write(bytes([0, len(body)]) + body)
# The segments module as a command: the reference.
cmd = reactor_wat(mods["segments"]).replace('"wasmcp_run"', '"_start"')
open("/tmp/segcmd.wat", "w").write(cmd)
subprocess.check_call(["wat2wasm", "/tmp/segcmd.wat", "-o", os.path.join(d, "segcmd.wasm")])
json.dump({"abi": 1, "tools": [{"name": "segcmd", "description": "s", "inputSchema": {"type": "object"}}]},
          open(os.path.join(d, "segcmd.manifest.json"), "w"))
p, port = start(["--tools", d, "--memory", "16MiB", "--cache-dir", "", "--log-level", "debug"])
wait_log(p, "warm-up done", 60)
for n in ["counter", "segments", "segments_whole", "segcmd", "tables", "floats", "twoinits", "reserved", "impglobal"]:
    got = [text_of(call(port, n)[0]) for _ in range(3)]
    print(f"{engine()} {n}: {[str(g)[:160] for g in got]}")
os.system(f"grep -i 'refused\\|not snapshotted\\|snapshotted' {p.logpath} | sed 's/.*msg=//' | cut -c1-260")
p.send_signal(signal.SIGTERM); p.wait(30)
