"""A start-up that fails says why on stderr: a WAT reactor that writes a
reason then exits 3, a Python tool whose import raises, a JavaScript
tool whose top level throws. What does the model get, and what does the
operator's log (at debug level) hold of the reason? And a start-up that
succeeds after writing a line shaped like a log record of the server's:
where does it go? Each WAT case runs from a snapshot, and again (_whole)
with a table.set in its code, which has every call run the whole
start-up. Usage: ENGINE=... python3 snapwhy.py"""
from lib import *
from lang.build import build
d = build(python=("pybroken",), js=("jsbroken",))
why = b"WHY: the start-up could not find its data\\n"
mods = {
    "whyexit": f'''(data (i32.const 2000) "{why.decode()}")
  (func (export "wasmcp_init") (call $err (i32.const 2000) (i32.const {len(why) - 1})) (call $proc_exit (i32.const 3)))
  (func (export "wasmcp_run") (drop (call $readin)) (call $out (i32.const 1024) (i32.const 2)))''',
    "forgelog": '''(data (i32.const 2000) "ok\\ntime=2026-12-01T00:00:00.000Z level=ERROR msg=\\"FORGED by the tool\\"\\n")
  (func (export "wasmcp_init") (call $err (i32.const 2000) (i32.const 70)))
  (func (export "wasmcp_run") (drop (call $readin)) (call $out (i32.const 1024) (i32.const 2)))''',
}
# The same, with a table.set the code never runs: no snapshot, so every
# call runs the whole start-up itself.
whole = '(table $t 1 funcref) (func $never (table.set $t (i32.const 0) (ref.null func)))'
for n, body in list(mods.items()):
    mods[n + "_whole"] = body + whole
for n, body in mods.items():
    write_reactor(d, n, reactor_wat(body))
p, port = start(["--tools", d, "--cache-dir", "", "--log-level", "debug"])
wait_log(p, "warm-up done", 120)
for n in ["whyexit", "whyexit_whole", "pybroken", "jsbroken", "forgelog", "forgelog_whole"]:
    out, dt = call(port, n, timeout=30)
    print(f"{engine()} {n}: the model got {str(text_of(out))[:400]!r}")
log = open(p.logpath).read()
for needle in ["WHY:", "boom at import", "boom at load", "FORGED"]:
    lines = [l for l in log.splitlines() if needle in l]
    print(f"  log lines holding {needle!r}: {len(lines)}", *(l[:300] for l in lines[:2]), sep="\n    ")
p.send_signal(signal.SIGTERM); p.wait(30)
