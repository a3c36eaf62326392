"""What keeping a snapshot costs: K reactors of a few hundred bytes each,
whose start-up writes PAGES 64 KiB pages (default 900, 56 MiB, under
--memory 64MiB). The design promises that keeping a module costs at most
about twice its size; measure the server's RSS (anonymous part), the
memfds it holds and the system's Shmem once every snapshot is made, with
no call. With ZERO=1 the start-up only grows its memory, writing nothing:
a snapshot of zeroes. WAIT=s measures again s seconds on.
Usage: ENGINE=... K=5 PAGES=900 ZERO= WAIT= python3 snapkeep.py"""
from lib import *
k, pages = int(os.environ.get("K", "5")), int(os.environ.get("PAGES", "900"))
zero = os.environ.get("ZERO") == "1"  # the start-up only grows its memory: the snapshot is zeroes

def meminfo(key):
    for l in open("/proc/meminfo"):
        if l.startswith(key + ":"):
            return int(l.split()[1]) / 1024

def status(pid):
    return {l.split(":")[0]: int(l.split()[1]) // 1024 for l in open(f"/proc/{pid}/status")
            if l.startswith(("VmRSS", "VmHWM", "RssAnon", "RssShmem"))}

mods = {}
for i in range(k):
    # Each its own module: the byte it writes differs.
    mods[f"keep{i}"] = reactor_wat(f'''
  (func (export "wasmcp_init") (call $growto (i32.const {pages}))
    {"" if zero else f"(call $touch (i32.const 65536) (i32.mul (memory.size) (i32.const 65536)) (i32.const {i + 1}))"}
    (i32.store (i32.const 600) (i32.const {i + 1})))
  (func (export "wasmcp_run") (drop (call $readin)) (call $out (i32.const 1024) (i32.const 2)))''')
d = make_reactors("snapkeep", mods)
size = sum(os.path.getsize(os.path.join(d, f"keep{i}.wasm")) for i in range(k))
shm0 = meminfo("Shmem")
p, port = start(["--tools", d, "--memory", "64MiB", "--cache-dir", "", "--prewarm", "0"] + os.environ.get("ARGS", "").split())
wait_log(p, "warm-up done", 300)
time.sleep(2)
memfd = 0
for fd in os.listdir(f"/proc/{p.pid}/fd"):
    try:
        if "memfd:" in os.readlink(f"/proc/{p.pid}/fd/{fd}"):
            memfd += os.stat(f"/proc/{p.pid}/fd/{fd}").st_size
    except OSError:
        pass
print(f"{engine()}: {k} reactors{' (zero snapshots)' if zero else ''}, {size} bytes of modules in all, snapshots of {pages * 64 / 1024:.0f} MiB each, --prewarm 0, no call")
print(f"  server MiB {status(p.pid)}; memfds held {memfd / 2**20:.0f} MiB; system Shmem +{meminfo('Shmem') - shm0:.0f} MiB")
for i in range(k):
    out, _ = call(port, f"keep{i}")
print(f"  after one call each: {status(p.pid)}")
if os.environ.get("WAIT"):
    # Go collects at least every two minutes, and returns freed pages
    # to the system over the minutes after.
    time.sleep(int(os.environ["WAIT"]))
    print(f"  {os.environ['WAIT']} s later: {status(p.pid)}")
p.send_signal(signal.SIGTERM); p.wait(30)
