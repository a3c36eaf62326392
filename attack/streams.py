"""Long-lived streams hold connections that the cap never reclaims: one
client opens --max-connections 2026-07-28 subscriptions/listen streams (no
session, no token needed when none is set) and every other client then
waits. Also measures the server's memory per stream.

Usage: ENGINE=... MAXC=200 python3 streams.py
"""
from lib import *
maxc = int(os.environ.get("MAXC", "200"))
p, port = start(["--tools", make_tools("slow", ["progflood", "hello"]), "--cache-dir", "", "--max-connections", str(maxc)])
base = rss(p.pid)[0]
listen = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                     "params": {"notifications": {"toolsListChanged": True},
                                "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                                          "io.modelcontextprotocol/clientCapabilities": {}}}})
socks = []
for i in range(maxc):
    s = raw_request(port, listen, {"Mcp-Method": "subscriptions/listen"})
    socks.append(s)
s0 = socks[0]; s0.settimeout(3)
try:
    print("first stream says:", s0.recv(400)[:300])
except socket.timeout:
    print("first stream: nothing in 3s")
time.sleep(1)
print(f"{maxc} listen streams open: RSS {rss(p.pid)[0]:.1f} MiB (from {base:.1f})")
out, d = call(port, "hello", timeout=15)
print(f"another client's call: {d:.1f}s, answer {str(text_of(out))[:100]!r}")
try:
    c = socket.create_connection(("127.0.0.1", port), timeout=2)
    c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); c.settimeout(5)
    print("healthz:", c.recv(100)[:40])
except Exception as e:
    print("healthz:", type(e).__name__, e)
for s in socks: s.close()
time.sleep(1)
out, d = call(port, "hello", timeout=15)
print(f"after the streams close: {d:.2f}s {str(text_of(out))[:60]!r}")
t = time.time(); p.send_signal(signal.SIGTERM); p.wait(30); print(f"exit {time.time()-t:.1f}s")
