"""The learned hot pages: a reactor whose start-up writes PAGES 64 KiB
pages (default 900, 56 MiB, under --memory 64MiB) and whose call writes
every one of them when its arguments say {"all": 1}, and none otherwise.
Four such calls, which any client can make first, teach the snapshot that
calls write every page; from then on every instance has them all copied
ahead. Measures, before and after those four calls: the server's RSS idle
(with an instance prepared), the duration of 40 sequential calls that
write nothing, and the peak RSS under 32 concurrent HTTP calls that write
nothing. Usage: ENGINE=... PAGES=900 python3 snaphot.py"""
import threading, statistics
from lib import *
pages = int(os.environ.get("PAGES", "900"))
mod = reactor_wat(f'''
  (func (export "wasmcp_init") (call $growto (i32.const {pages}))
    (call $touch (i32.const 65536) (i32.mul (memory.size) (i32.const 65536)) (i32.const 7)))
  (func (export "wasmcp_run")
    (if (i32.gt_u (call $readin) (i32.const 2))
      (then (call $touch (i32.const 65536) (i32.mul (memory.size) (i32.const 65536)) (i32.const 9))))
    (call $out (i32.const 1024) (i32.const 2)))''')
d = make_reactors("snaphot", {"hot": mod})
def serve():
    global p, port
    p, port = start(["--tools", d, "--memory", "64MiB", "--cache-dir", ""] + os.environ.get("ARGS", "").split())
    wait_log(p, "warm-up done", 120)
    time.sleep(1)

def sequential(n=40):
    ds = []
    for _ in range(n):
        out, dt = call(port, "hot", {})
        assert b"{}" in out, out[-300:]
        ds.append(dt * 1000)
    return statistics.median(ds), max(ds)

def concurrent(n=32):
    base = rss(p.pid)[0]
    peak = [base]
    stop = threading.Event()
    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], rss(p.pid)[0]); time.sleep(0.002)
    w = threading.Thread(target=watch); w.start()
    outs = []
    ths = [threading.Thread(target=lambda: outs.append(call(port, "hot", {}, timeout=60))) for _ in range(n)]
    t = time.time()
    for th in ths: th.start()
    for th in ths: th.join()
    stop.set(); w.join()
    ok = sum(1 for o, _ in outs if b'"text":"{}"' in o or b'{}' in o)
    return f"{ok}/{n} answered in {time.time()-t:.2f}s, RSS {base:.0f} -> peak {peak[0]:.0f} MiB"

def heavy():
    for i in range(4):
        out, dt = call(port, "hot", {"all": 1})
        print(f"  call {i+1} writing every page: {dt*1000:.1f} ms {str(text_of(out))[:80]!r}")
    time.sleep(1); print("  idle after the four: RSS/HWM MiB", rss(p.pid))

def light():
    print("  40 calls writing nothing, median/max ms: %.2f / %.2f" % sequential())
    print("  32 concurrent calls writing nothing:", concurrent())
    time.sleep(1); print("  idle: RSS/HWM MiB", rss(p.pid))

print(f"{engine()} PAGES={pages} ({pages*64/1024:.0f} MiB snapshot), --memory 64MiB")
for name, order in [("light calls first", [light, heavy, light]), ("four heavy calls first", [heavy, light])]:
    serve()
    print(name + "; idle after warm-up: RSS/HWM MiB", rss(p.pid))
    for f in order:
        f()
    p.send_signal(signal.SIGTERM); p.wait(30)
