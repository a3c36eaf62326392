"""Reactor start-ups that fail, or are huge: wasmcp_init that traps,
loops, exits 0 or 3, floods stderr, grows past --memory, or fits just
under it (and the call grows on); a 40 MiB wasmcp.init section. What does
each call get, how long does it take, what does a command tool's call see
meanwhile, and how long does SIGTERM take while a start-up loops?
Usage: ENGINE=... python3 snapinit.py"""
from lib import *

RUN_OK = '(func (export "wasmcp_run") (drop (call $readin)) (call $out (i32.const 1024) (i32.const 2)))'
mods = {
    "itrap": '(func (export "wasmcp_init") unreachable)' + RUN_OK,
    "iloop": '(func (export "wasmcp_init") (loop $l (br $l)))' + RUN_OK,
    "iexit0": '(func (export "_initialize") (call $proc_exit (i32.const 0)))' + RUN_OK,
    "iexit3": '(func (export "wasmcp_init") (call $proc_exit (i32.const 3)))' + RUN_OK,
    "istderr": '(func (export "wasmcp_init") (loop $l (call $err (i32.const 1024) (i32.const 4096)) (br $l)))' + RUN_OK,
    "iover": '(func (export "wasmcp_init") (loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))))' + RUN_OK,
    # --memory 16MiB is 256 pages; the start-up takes 250 and writes each.
    "iunder": '''(func (export "wasmcp_init") (call $growto (i32.const 250))
        (call $touch (i32.const 65536) (i32.mul (memory.size) (i32.const 65536)) (i32.const 7)))
      (func (export "wasmcp_run") (local $n i32) (local.set $n (call $readin))
        (if (i32.gt_u (local.get $n) (i32.const 2)) (then (call $growto (i32.const 257))))
        (call $num (memory.size)))''',
    # Counts the bytes of its init section and says how many.
    "ibig": '''(global $seen (mut i32) (i32.const 0))
      (func (export "wasmcp_init") (local $n i32)
        (loop $l
          (i32.store (i32.const 0) (i32.const 1024)) (i32.store (i32.const 4) (i32.const 60000))
          (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
          (local.set $n (i32.load (i32.const 8)))
          (global.set $seen (i32.add (global.get $seen) (local.get $n)))
          (br_if $l (local.get $n))))
      (func (export "wasmcp_run") (drop (call $readin)) (call $num (global.get $seen)))''',
}
big = os.urandom(int(os.environ.get("INIT_MIB", "40")) << 20)
d = make_reactors("snapinit", {k: reactor_wat(v) for k, v in mods.items()}, init={"ibig": big})
make_tools("snapinit", ["hello"])
args = ["--tools", d, "--concurrency", "2", "--timeout", "3s", "--memory", "16MiB", "--cache-dir", "", "--log-level", "debug"]
p, port = start(args)
t0 = time.time()
print("hello during the warm-up:", call(port, "hello")[1], "s")
wait_log(p, "warm-up done", 120)
print(f"warm-up done after {time.time()-t0:.2f}s; RSS/HWM MiB", rss(p.pid))
for n in mods:
    for i, a in enumerate([{}, {"grow": 1}] if n == "iunder" else [{}, {}]):
        out, dt = call(port, n, a, timeout=30)
        print(f"{n} call {i+1} {a}: {dt:.3f}s {str(text_of(out))[:300]!r}")
print("RSS/HWM MiB", rss(p.pid))
os.system(f"grep -i 'snapshot\\|start-up' {p.logpath} | cut -c1-400 | sort | uniq | head -30")
p.send_signal(signal.SIGTERM); p.wait(30)

# SIGTERM while a start-up loops (a call waits for it).
p, port = start(args)
import threading
res = {}
th = threading.Thread(target=lambda: res.update(r=call(port, "iloop", timeout=30)))
th.start(); time.sleep(0.5)
t = time.time(); p.send_signal(signal.SIGTERM); rc = p.wait(30)
th.join()
print(f"SIGTERM during iloop's start-up: exit {rc} after {time.time()-t:.2f}s; the call got {str(text_of(res['r'][0]))[:200]!r}")
