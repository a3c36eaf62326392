"""32 concurrent HTTP calls of snapshotted Python and JavaScript tools
(lang/pyevil, lang/jsevil): ROUNDS rounds of state-checking calls, then a
round of calls that each allocate until out of memory. Measures the
server's peak RSS against --concurrency x --memory, checks that every
state call saw a fresh start-up, and counts file descriptors, snapshot
memfds and mappings before and after.
Usage: ENGINE=... ROUNDS=5 python3 snapflood.py"""
import threading
from lib import *
from lang.build import build
rounds = int(os.environ.get("ROUNDS", "5"))
d = build()
p, port = start(["--tools", d, "--cache-dir", "", "--concurrency", "4", "--queue-timeout", "60s"])
wait_log(p, "warm-up done", 120)
time.sleep(1)

def counts():
    return f"fds {len(os.listdir(f'/proc/{p.pid}/fd'))}, snapshot memfds/mappings {snapshot_fds(p.pid)}, maps {sum(1 for _ in open(f'/proc/{p.pid}/maps'))}"

def flood(names, n=32):
    outs, peak, stop = [], [0], threading.Event()
    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], rss(p.pid)[0]); time.sleep(0.003)
    w = threading.Thread(target=watch); w.start()
    ths = [threading.Thread(target=lambda i=i: outs.append((names[i % len(names)], text_of(call(port, names[i % len(names)], timeout=120)[0]))))
           for i in range(n)]
    t = time.time()
    for th in ths: th.start()
    for th in ths: th.join()
    stop.set(); w.join()
    return outs, peak[0], time.time() - t

print(f"{engine()}: --concurrency 4, python --memory 64MiB, js 32MiB; idle RSS {rss(p.pid)[0]:.0f} MiB; {counts()}")
fresh = {"py_state": "[1, False, False, None, 0]", "js_state": "[1,null,\"undefined\",null,39]"}
for r in range(rounds):
    outs, peak, dt = flood(["py_state", "js_state"])
    stale = [o for n, o in outs if o != fresh[n]]
    print(f"  round {r+1}: 32 state calls in {dt:.2f}s, peak RSS {peak:.0f} MiB, not fresh: {stale[:3]} ({len(stale)})")
outs, peak, dt = flood(["py_oom", "js_oom"])
kinds = sorted(set(str(o)[:70] for _, o in outs))
print(f"  32 out-of-memory calls in {dt:.2f}s, peak RSS {peak:.0f} MiB; answers: {kinds}")
time.sleep(2)
print(f"  after: RSS/HWM {rss(p.pid)}; {counts()}")
p.send_signal(signal.SIGTERM); p.wait(30)
