"""Start sections that loop, memory grown then held, a guest that reads
stdin then loops: is each stopped at --timeout, and what does a call of
another tool see meanwhile?  Usage: ENGINE=... python3 startfn.py"""
from lib import *
d = make_tools("startfn", ["startloop", "startgrow", "growthenread", "readloop", "hello"])
p, port = start(["--tools", d, "--concurrency", "2", "--timeout", "2s", "--memory", "64MiB", "--cache-dir", ""])
wait_log(p, "warm-up done")
print("after warm-up RSS/HWM:", rss(p.pid))
for n in ["startloop", "startgrow", "growthenread", "readloop"]:
    out, d_ = call(port, n, timeout=20)
    print(f"{n}: {d_:.2f}s {str(text_of(out))[:200]!r}")
out, d_ = call(port, "hello")
print("hello", d_, text_of(out))
print("RSS/HWM:", rss(p.pid))
t = time.time(); p.send_signal(signal.SIGTERM); p.wait(30); print(f"exit after {time.time()-t:.2f}s")
