"""Pool.Await: a call waits for its tool's instance being prepared. A
reactor whose call spins SPIN iterations (tuned to just under its
100 ms time limit) after it reads stdin, and in half its instances (as
random_get says) before too: a cold call that spins twice fails, but a
prepared instance spins the first time while it is being prepared,
outside the call's time limit, and its call waits for that, then runs
the second. Its manifest asks for a 100 ms time limit. Measures 10 sequential
calls' durations and the server's CPU time for them.
Usage: ENGINE=... SPIN=... python3 snapawait.py"""
from lib import *
spin = int(os.environ.get("SPIN", "2000000"))
mod = reactor_wat(f'''
  (func (export "wasmcp_init") (call $growto (i32.const 2)))
  (func $spin (local $i i32)
    (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const {spin})))))
  (func (export "wasmcp_run")
    ;; Half the instances spin before they read stdin: a cold call that
    ;; does fails its time limit, a prepared one spins before its call.
    (drop (call $random_get (i32.const 900) (i32.const 1)))
    (if (i32.and (i32.load8_u (i32.const 900)) (i32.const 1)) (then (call $spin)))
    (drop (call $readin))
    (call $spin)
    (call $out (i32.const 1024) (i32.const 2)))''')
d = make_reactors("snapawait", {"spin": mod}, manifest_extra={"spin": {"limits": {"timeout": "100ms"}}})
p, port = start(["--tools", d, "--cache-dir", "", "--log-level", "debug"])
wait_log(p, "warm-up done", 60)
time.sleep(1.5)

def cpu():
    st = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
c0, t0 = cpu(), time.time()
ds = []
for i in range(10):
    out, dt = call(port, "spin", timeout=30)
    ds.append(dt)
    print(f"{engine()} call {i+1}: {dt:.3f}s {str(text_of(out))[:160]!r}")
print(f"10 calls with a 100 ms time limit took {time.time()-t0:.1f}s, server CPU {cpu()-c0:.1f}s")
log = open(p.logpath).read()
print(f"  prepared {log.count('instance prepared')}, used {log.count('using a prepared instance')}, not prepared {log.count('tool not prepared ahead')}")
p.send_signal(signal.SIGTERM); p.wait(30)
