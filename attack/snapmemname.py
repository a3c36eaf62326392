"""A reactor whose memory is not exported as "memory": exported as "mem",
or not exported at all (WASI needs no export of it; its start-up and its
data segments still write it). Its data segment holds "DATA", its
start-up writes 42 at 2000, and its call prints both: "DATA 42". Each is
also built with a table.set its code never runs, so that every call
runs the whole start-up (_whole), and the unexported one as a command
(unexported_cmd).
Usage: ENGINE=... python3 snapmemname.py"""
from lib import *
body = '''(data (i32.const 3000) "DATA ")
  (func (export "wasmcp_init") (i32.store (i32.const 2000) (i32.const 42)))
  (func (export "wasmcp_run") (drop (call $readin))
    (call $out (i32.const 3000) (i32.const 5)) (call $num (i32.load (i32.const 2000))))'''
whole = '(table $t 1 funcref) (func $never (table.set $t (i32.const 0) (ref.null func)))'
mods = {}
for name, decl in [("exported", '(export "memory")'), ("asmem", '(export "mem")'), ("unexported", "")]:
    for suffix, extra in [("", ""), ("_whole", whole)]:
        mods[name + suffix] = reactor_wat(body + extra).replace('(memory (export "memory") 1)', f"(memory {decl} 1)")
d = make_reactors("snapmemname", mods)
# The unexported one as a command, for how each engine reads it there.
cmd = mods["unexported"].replace('(func (export "wasmcp_init")', '(func $init').replace('(func (export "wasmcp_run") (drop (call $readin))', '(func (export "_start") (call $init) (drop (call $readin))')
open("/tmp/unexported_cmd.wat", "w").write(cmd)
subprocess.check_call(["wat2wasm", "/tmp/unexported_cmd.wat", "-o", os.path.join(d, "unexported_cmd.wasm")])
json.dump({"abi": 1, "tools": [{"name": "unexported_cmd", "description": "c", "inputSchema": {"type": "object"}}]},
          open(os.path.join(d, "unexported_cmd.manifest.json"), "w"))
mods["unexported_cmd"] = cmd
p, port = start(["--tools", d, "--cache-dir", "", "--log-level", "debug"])
wait_log(p, "warm-up done", 60)
for n in mods:
    print(f"{engine()} {n}: {[str(text_of(call(port, n)[0]))[:200] for _ in range(2)]}")
os.system(f"grep -i 'snapshotted\\|skipping' {p.logpath} | sed 's/.*msg=//' | cut -c1-200")
p.send_signal(signal.SIGTERM); p.wait(30)
