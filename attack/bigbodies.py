"""Many concurrent 4 MiB requests: what does each cost the server while it
waits for a run slot? Arguments are one 4 MiB string, sent to a tool
whose run takes its whole time limit (readloop), so the calls queue.

Usage: ENGINE=... N=200 python3 bigbodies.py
"""
import threading
from lib import *
n = int(os.environ.get("N", "200"))
d = make_tools("bigbodies", ["readloop", "hello"])
p, port = start(["--tools", d, "--cache-dir", "", "--concurrency", "2", "--timeout", "5s", "--queue-timeout", "10s"])
wait_log(p, "warm-up done")
base = rss(p.pid)[0]
arg = {"s": "x" * (4 * 1024 * 1024 - 400)}
body = call_body("readloop", arg)
print("body bytes", len(body))
socks = []
def one():
    s = raw_request(port, body, {"Mcp-Method": "tools/call", "Mcp-Name": "readloop"})
    socks.append(s)
ths = [threading.Thread(target=one) for _ in range(n)]
t = time.time()
for th in ths: th.start()
peak = 0
while time.time() - t < 12:
    peak = max(peak, rss(p.pid)[0]); time.sleep(0.1)
print(f"{n} concurrent 4 MiB calls: RSS from {base:.0f} to peak {peak:.0f} MiB; VmHWM {rss(p.pid)[1]:.0f} MiB")
out, dt = call(port, "hello", timeout=30)
print(f"another call meanwhile: {dt:.1f}s {str(text_of(out))[:80]!r}")
for s in socks: s.close()
p.send_signal(signal.SIGTERM); p.wait(60)
