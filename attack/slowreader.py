"""A client that asks for progress and then never reads its response stream
holds a run slot past --timeout: the guest is blocked inside the progress
host function, writing to a connection nobody reads.

Usage: ENGINE=wazero|wasmtime python3 slowreader.py
"""
import sys, time, threading
from lib import *

p, port = start(["--tools", make_tools("slow", ["progflood", "hello"]), "--concurrency", "2",
                 "--timeout", "3s", "--queue-timeout", "2s", "--cache-dir", "", "--prewarm", "0"])
out, d = call(port, "hello")
print("baseline hello:", d, b"hi" in out)
socks = []
for i in range(2):
    s = raw_request(port, call_body("progflood", id=10 + i, meta={"progressToken": f"t{i}"}),
                    {"Mcp-Method": "tools/call", "Mcp-Name": "progflood"}, rcvbuf=4096)
    socks.append(s)
time.sleep(5)  # past --timeout (3s): the calls should have been stopped by now
for k in range(3):
    out, d = call(port, "hello", timeout=10)
    print(f"hello after {5+k*3}s: took {d:.2f}s, answer: {out[-160:]!r}")
print("server RSS/HWM MiB:", rss(p.pid))
t = time.time()
p.send_signal(signal.SIGTERM)
try:
    p.wait(30)
except subprocess.TimeoutExpired:
    print("server did not exit in 30s"); p.kill()
print(f"SIGTERM to exit: {time.time()-t:.2f}s (grace 10s), rc={p.returncode}")
os.system(f"grep -E 'progflood|call' {p.logpath} | tail -5")
