"""Module changes while snapshots are being made: a reactor whose
start-up spins for a while (SPIN iterations) and records its version,
which each call prints. The file is replaced N times, every other time
again while the previous version's start-up is still running. Checks
that no call answers a version older than one already answered (a stale
snapshot), that the last version is served, and counts the memfds and
mappings of snapshots, and RSS, after the reloads.
Usage: ENGINE=... N=30 SPIN=300000000 python3 snapreload.py"""
from lib import *
n, spin = int(os.environ.get("N", "30")), int(os.environ.get("SPIN", "300000000"))

from snapreload_version import version

d = make_reactors("snapreload", {"ver": version(0, spin)})
p, port = start(["--tools", d, "--memory", "16MiB", "--cache-dir", "", "--timeout", "10s", "--log-level", "debug"]
                + os.environ.get("ARGS", "").split())
wait_log(p, "warm-up done", 60)

def answer():
    out, dt = call(port, "ver", timeout=30)
    t = text_of(out)
    return (int(t) if isinstance(t, str) and t.isdigit() else t), dt

seen, stale, odd, slow = 0, 0, [], 0.0
t0 = time.time()
print(f"{engine()}: version 0 served: {answer()}; fds/maps {snapshot_fds(p.pid)}, RSS {rss(p.pid)}")
v = 0
while v < n:
    v += 1
    write_reactor(d, "ver", version(v, spin))
    if v % 2 == 1 and v < n:
        time.sleep(0.25)  # its start-up is running now: replace it again
        v += 1
        write_reactor(d, "ver", version(v, spin))
    end = time.time() + 30
    while time.time() < end:
        a, dt = answer()
        slow = max(slow, dt)
        if not isinstance(a, int):
            odd.append(a); continue
        if a < seen:
            stale += 1
        seen = max(seen, a)
        if a == v:
            break
    else:
        print(f"  version {v} not served in 30 s; last answer {a}")
print(f"{n} versions in {time.time()-t0:.1f}s: last answered {seen}, stale answers {stale}, slowest call {slow:.2f}s, other answers {odd[:3]} ({len(odd)})")
time.sleep(2)
print(f"  snapshot memfds/mappings {snapshot_fds(p.pid)}, fds {len(os.listdir(f'/proc/{p.pid}/fd'))}, maps {sum(1 for _ in open(f'/proc/{p.pid}/maps'))}, RSS/HWM {rss(p.pid)}")
for _ in range(200):
    answer()
time.sleep(1)
print(f"  after 200 more calls: memfds/mappings {snapshot_fds(p.pid)}, fds {len(os.listdir(f'/proc/{p.pid}/fd'))}, maps {sum(1 for _ in open(f'/proc/{p.pid}/maps'))}, RSS/HWM {rss(p.pid)}")
os.system(f"grep -c 'module snapshotted' {p.logpath}; grep -c 'snapshot started' {p.logpath}; grep -i 'level=warn\\|level=error' {p.logpath} | cut -c1-300 | sort | uniq -c | head")
p.send_signal(signal.SIGTERM); p.wait(30)
