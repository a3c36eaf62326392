"""What a large snapshot costs to make and keep, across restarts: a
reactor of a few hundred bytes whose start-up fills PAGES 64 KiB pages
(default 960, 60 MiB, under --memory 64MiB) with pseudo-random words.
On wasmtime the snapshot becomes an image module of that size, compiled
in a worker and written to the compilation cache, under a new key at
every start (the start-up's seeds differ... here the bytes do not, but
the key is the image's). Restarts the server R times on one cache
directory; measures the peak RSS of the server and its workers during
the warm-up, the warm-up's time, and the cache directory's size after.
Usage: ENGINE=... R=4 PAGES=960 python3 snapimage.py"""
import threading, tempfile
from lib import *
r, pages = int(os.environ.get("R", "4")), int(os.environ.get("PAGES", "960"))
# A different stream each start-up, as a runtime's seeds are.
mod = filling_reactor(pages, "(drop (call $random_get (i32.const 900) (i32.const 4))) (i32.or (i32.load (i32.const 900)) (i32.const 1))")
d = make_reactors("snapimage", {"img": mod})
cache = tempfile.mkdtemp(prefix="wasmcp-snapimage-")

def du(path):
    return sum(os.path.getsize(os.path.join(a, f)) for a, _, fs in os.walk(path) for f in fs) / 2**20

print(f"{engine()}: a {os.path.getsize(os.path.join(d, 'img.wasm'))}-byte reactor, {pages * 64 / 1024:.0f} MiB snapshot, cache {cache}")
for i in range(r):
    t = time.time()
    p, port = start(["--tools", d, "--memory", "64MiB", "--cache-dir", cache, "--prewarm", "0"])
    peak, stop = [0], threading.Event()
    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], tree_rss(p.pid)); time.sleep(0.01)
    w = threading.Thread(target=watch); w.start()
    wait_log(p, "warm-up done", 300)
    stop.set(); w.join()
    out, dt = call(port, "img")
    log = open(p.logpath).read()
    snap = re.search(r'module snapshotted.*duration=(\S+)', log)
    print(f"  start {i+1}: warm-up {time.time()-t:.1f}s, snapshot {snap.group(1) if snap else log[-300:]}, peak tree RSS {peak[0]:.0f} MiB, "
          f"server RSS {rss(p.pid)[0]:.0f} MiB, call {dt*1000:.1f} ms {text_of(out)!r}, cache {du(cache):.0f} MiB")
    p.send_signal(signal.SIGTERM); p.wait(30)
shutil.rmtree(cache, ignore_errors=True)
