"""Does a retired version's start-up go on after a reload replaced it?
A reactor whose start-up spins for about SPIN iterations (7 s on wazero
at the default) is replaced K times, 0.5 s apart, with no call waiting;
then one call is made. Counts the start-ups begun and finished, and how
long the call waited, with --compile-concurrency 1.
Usage: ENGINE=... K=4 SPIN=300000000 python3 snapretire.py"""
from lib import *
k, spin = int(os.environ.get("K", "4")), int(os.environ.get("SPIN", "300000000"))
from snapreload_version import version
d = make_reactors("snapretire", {"ver": version(0, spin)})
p, port = start(["--tools", d, "--memory", "16MiB", "--cache-dir", "", "--timeout", "10s", "--log-level", "debug"])
wait_log(p, "warm-up done", 60)
print(f"{engine()}: version 0 served: {text_of(call(port, 'ver', timeout=30)[0])}")
t0 = time.time()
for v in range(1, k + 1):
    write_reactor(d, "ver", version(v, spin))
    time.sleep(0.5)
out, dt = call(port, "ver", timeout=120)
print(f"after {k} replacements 0.5 s apart, the call answered {text_of(out)!r} in {dt:.1f}s ({time.time()-t0:.1f}s after the first)")
def cpu():
    st = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
c0 = cpu()
time.sleep(int(os.environ.get("IDLE", "30")))
log = open(p.logpath).read()
print(f"  start-ups begun {log.count('snapshot started')}, finished {log.count('module snapshotted')}, stopped for another {log.count('starts over later')}")
print(f"  CPU seconds the server spent in the {os.environ.get('IDLE', '30')} s after the call, with no call: {cpu() - c0:.1f}")
os.system(f"grep 'snapshot\\|waits\\|reloaded' {p.logpath} | sed 's/ file=.*duration=/ duration=/; s/ file=.*//' | cut -c17-140")
p.send_signal(signal.SIGTERM); p.wait(30)
