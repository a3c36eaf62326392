"""SIGTERM while snapshots are being made: a directory of K reactors whose
start-ups fill PAGES pages with pseudo-random words (snapimage.py's), so
that the warm-up is making snapshots (and on wasmtime compiling their
images in workers) when the signal comes, AFTER seconds after the start.
Measures how long the server takes to exit, its status, and whether any
worker outlives it. Usage: ENGINE=... K=6 AFTER=0.5 python3 snapsigterm.py"""
from lib import *
k, pages, after = int(os.environ.get("K", "6")), int(os.environ.get("PAGES", "960")), float(os.environ.get("AFTER", "0.5"))
mods = {}
for i in range(k):
    mods[f"sig{i}"] = filling_reactor(pages, f"(i32.const {i * 7919 + 1})")
d = make_reactors("snapsigterm", mods)

def children(pid):
    out = []
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                st = open(f"/proc/{e}/stat").read().rsplit(")", 1)[1].split()
                if int(st[1]) == pid:
                    out.append(int(e))
            except OSError:
                pass
    return out

for attempt in range(3):
    p, port = start(["--tools", d, "--memory", "64MiB", "--cache-dir", "", "--log-level", "debug"])
    time.sleep(after + attempt * 0.7)
    kids = children(p.pid)
    t = time.time(); p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(60)
    except subprocess.TimeoutExpired:
        rc = "none in 60 s"
    time.sleep(0.5)
    alive = [c for c in kids if os.path.exists(f"/proc/{c}")]
    for c in alive:
        try:
            st = open(f"/proc/{c}/stat").read().rsplit(")", 1)[1].split()
            print(f"  worker {c} after the exit: state {st[0]}, parent {st[1]}, cmdline {open(f'/proc/{c}/cmdline').read()[:80]!r}")
        except OSError as e:
            print(f"  worker {c}: {e}")
    log = open(p.logpath).read()
    print(f"{engine()} SIGTERM at {after + attempt * 0.7:.1f}s: exit {rc} after {time.time()-t-0.5:.2f}s; workers then {len(kids)}, alive after {alive}; "
          f"snapshots begun {log.count('snapshot started')}, made {log.count('module snapshotted')}; last: {log.strip().splitlines()[-1][:160]}")
    # How long does an orphan live, and what does it hold?
    t, hwm, what = time.time(), 0, ""
    while alive and time.time() - t < 60:
        alive = [c for c in alive if os.path.exists(f"/proc/{c}")]
        for c in alive:
            try:
                what = open(f"/proc/{c}/cmdline").read().replace("\0", " ")[:120]
                hwm = max(hwm, rss(c)[1] or 0)
            except (OSError, TypeError):
                pass
        time.sleep(0.05)
    if what:
        print(f"  an orphan ({what!r}) lived {time.time() - t + 0.5:.1f}s after the server exited, HWM {hwm:.0f} MiB{'; still alive, killed' if alive else ''}")
    for c in alive:
        os.kill(c, signal.SIGKILL)
